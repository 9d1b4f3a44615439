package clusters

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/graphcd/graphcd/internal/kubeerror"
	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// Options configure a Registry.
type Options struct {
	// Client reads the cluster Secrets of the management cluster.
	Client kubernetes.Interface
	// Namespace is graphcd's namespace; only Secrets there count.
	Namespace string
	// InCluster is the controller's own client configuration, offered as
	// the cluster InClusterServer / InClusterName. Nil leaves that
	// cluster out unless a Secret declares it with credentials.
	InCluster *rest.Config
	// Logger receives warnings about invalid and duplicate Secrets;
	// nil means slog.Default().
	Logger *slog.Logger
}

// Registry is the set of destination clusters, kept up to date from the
// cluster Secrets by informers. It is safe for concurrent use.
type Registry struct {
	opts      Options
	log       *slog.Logger
	informers []cache.SharedIndexInformer

	mu        sync.RWMutex
	entries   map[string]*entry // by Secret key namespace/name
	byName    map[string]*Cluster
	byServer  map[string]*Cluster
	warned    map[string]bool // duplicate warnings already logged
	listeners map[int]func(server string)
	// secretListeners hear of every change of a cluster Secret, its
	// labels and annotations included.
	secretListeners []func()
	nextID          int
	notify          bool // set once the initial list has been delivered

	// start runs the informers once, however many users Start them.
	start  sync.Once
	synced []cache.InformerSynced
	err    error
}

// entry is what one Secret contributed: a cluster, or an error with the
// server and name it claimed so that lookups can explain themselves.
type entry struct {
	key          string
	created      time.Time
	cluster      *Cluster
	err          error
	server, name string
}

// New returns a Registry over the cluster Secrets in opts.Namespace. Call
// Start to fill it.
func New(opts Options) (*Registry, error) {
	if opts.Client == nil {
		return nil, errors.New("clusters: a Kubernetes client is required")
	}
	if opts.Namespace == "" {
		return nil, errors.New("clusters: a namespace is required")
	}
	r := &Registry{
		opts:    opts,
		log:     cmp.Or(opts.Logger, slog.Default()),
		entries: map[string]*entry{},
		warned:  map[string]bool{},
	}
	r.rebuild()
	// One informer per label: a selector cannot OR two label keys, and
	// selecting on the server side keeps every other Secret out of memory.
	for _, label := range []string{wellknown.SecretTypeLabel, wellknown.ArgoSecretTypeLabel} {
		selector := label + "=" + secretcodec.TypeCluster
		inf := coreinformers.NewFilteredSecretInformer(opts.Client, opts.Namespace, 0, cache.Indexers{},
			func(o *metav1.ListOptions) { o.LabelSelector = selector })
		if err := inf.SetTransform(dropManagedFields); err != nil {
			return nil, fmt.Errorf("clusters: %w", err)
		}
		r.informers = append(r.informers, inf)
	}
	return r, nil
}

// dropManagedFields trims what the cache keeps of each Secret.
func dropManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// Run starts the informers, once: they run until the ctx of the first
// call ends. A registry shared by several users (the API and the
// controller of one process) is run by the one that lives longest.
func (r *Registry) Run(ctx context.Context) error {
	r.start.Do(func() {
		handler := cache.ResourceEventHandlerFuncs{
			AddFunc:    r.changed,
			UpdateFunc: func(_, obj any) { r.changed(obj) },
			DeleteFunc: r.changed,
		}
		for _, inf := range r.informers {
			reg, err := inf.AddEventHandler(handler)
			if err != nil {
				r.err = fmt.Errorf("clusters: watch cluster Secrets: %w", err)
				return
			}
			r.synced = append(r.synced, reg.HasSynced)
			go inf.RunWithContext(ctx)
		}
	})
	return r.err
}

// Start runs the informers (see Run) and returns once the initial list is
// loaded, or with an error when ctx ends first. OnChange listeners hear
// only about changes after that initial list.
func (r *Registry) Start(ctx context.Context) error {
	if err := r.Run(ctx); err != nil {
		return err
	}
	if !cache.WaitForCacheSync(ctx.Done(), r.synced...) {
		return fmt.Errorf("clusters: list cluster Secrets in %s: %w", r.opts.Namespace, context.Cause(ctx))
	}
	r.mu.Lock()
	r.notify = true
	r.mu.Unlock()
	return nil
}

// OnChange registers fn to be called with the server URL of every cluster
// that appears, disappears, or whose Secret data (credentials, name,
// namespaces...) changes, so that a cluster cache can be restarted. fn
// runs on the informer's goroutine and must not block. The returned
// function unregisters fn.
func (r *Registry) OnChange(fn func(server string)) (remove func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.listeners == nil {
		r.listeners = map[int]func(string){}
	}
	id := r.nextID
	r.nextID++
	r.listeners[id] = fn
	return func() {
		r.mu.Lock()
		delete(r.listeners, id)
		r.mu.Unlock()
	}
}

// OnSecretChange registers fn to be called after any cluster Secret
// appears, disappears or changes, labels and annotations included (the
// clusters generator of ApplicationSets selects by them). fn runs on the
// informer's goroutine and must not block.
func (r *Registry) OnSecretChange(fn func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secretListeners = append(r.secretListeners, fn)
}

// changed re-reads one Secret from the informer caches.
func (r *Registry) changed(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	var secret *corev1.Secret
	for _, inf := range r.informers {
		if item, ok, _ := inf.GetStore().GetByKey(key); ok {
			if s, ok := item.(*corev1.Secret); ok {
				secret = s
				break
			}
		}
	}
	r.set(key, secret)
}

// set records secret (nil: gone) under key, rebuilds the indexes and
// tells the listeners which servers changed.
func (r *Registry) set(key string, secret *corev1.Secret) {
	var e *entry
	if secret != nil {
		e = newEntry(key, secret)
	}
	r.mu.Lock()
	old := r.entries[key]
	if e == nil {
		delete(r.entries, key)
	} else {
		r.entries[key] = e
	}
	if e != nil && e.err != nil && (old == nil || old.err == nil || old.err.Error() != e.err.Error()) {
		r.log.Warn("ignoring invalid cluster secret", "secret", key, "error", e.err)
	}
	before := r.byServer
	r.rebuild()
	var servers []string
	if r.notify {
		servers = changedServers(before, r.byServer)
	}
	listeners := slices.Collect(maps.Values(r.listeners))
	secretListeners := r.secretListeners
	r.mu.Unlock()
	for _, server := range servers {
		for _, fn := range listeners {
			fn(server)
		}
	}
	for _, fn := range secretListeners {
		fn()
	}
}

// newEntry parses a Secret; a broken one keeps the server and name it
// claims.
func newEntry(key string, secret *corev1.Secret) *entry {
	e := &entry{key: key, created: secret.CreationTimestamp.Time}
	c, err := Parse(secret)
	if err != nil {
		claimed, _ := secretcodec.DecodeCluster(secret)
		e.err, e.server, e.name = err, claimed.Server, claimed.Name
		return e
	}
	e.cluster, e.server, e.name = c, c.Server, c.Name
	return e
}

// rebuild recomputes the name and server indexes. Secrets apply oldest
// first (by creation time, then namespace/name), so when two claim the
// same name or server the newer one wins, the same way on every replica.
func (r *Registry) rebuild() {
	valid := make([]*entry, 0, len(r.entries))
	overridesInCluster := false
	for _, e := range r.entries {
		if e.cluster != nil {
			valid = append(valid, e)
			overridesInCluster = overridesInCluster || e.server == InClusterServer
		}
	}
	slices.SortFunc(valid, func(a, b *entry) int {
		return cmp.Or(a.created.Compare(b.created), cmp.Compare(a.key, b.key))
	})
	byName, byServer := map[string]*Cluster{}, map[string]*Cluster{}
	if r.opts.InCluster != nil && !overridesInCluster {
		c := &Cluster{Name: InClusterName, Server: InClusterServer, RESTConfig: r.ownConfig()}
		byName[c.Name], byServer[c.Server] = c, c
	}
	dups := map[string]bool{}
	for _, e := range valid {
		c := e.cluster
		if c.inherits && r.opts.InCluster != nil {
			cc := *c
			cc.RESTConfig = r.ownConfig()
			c = &cc
		}
		if prev, ok := byName[c.Name]; ok && prev.Secret != "" {
			r.warnDuplicate(dups, "name", c.Name, prev.Secret, c.Secret)
		}
		if prev, ok := byServer[c.Server]; ok && prev.Secret != "" {
			r.warnDuplicate(dups, "server", c.Server, prev.Secret, c.Secret)
		}
		byName[c.Name], byServer[c.Server] = c, c
	}
	r.byName, r.byServer = byName, byServer
	for k := range r.warned {
		if !dups[k] {
			delete(r.warned, k)
		}
	}
}

// warnDuplicate logs a duplicate once while it lasts. Only the cluster's
// name or server and the Secret names are logged.
func (r *Registry) warnDuplicate(dups map[string]bool, what, value, older, newer string) {
	k := what + "\x00" + value
	dups[k] = true
	if r.warned[k] {
		return
	}
	r.warned[k] = true
	r.log.Warn("two cluster secrets declare the same "+what+"; the newer one wins", what, value, "ignored", older, "used", newer)
}

// ownConfig is a copy of the controller's own config with QPS and Burst
// left to the caller, like every other cluster's.
func (r *Registry) ownConfig() *rest.Config {
	c := rest.CopyConfig(r.opts.InCluster)
	c.QPS, c.Burst = 0, 0
	kubeerror.Wrap(c)
	return c
}

// changedServers lists the servers added, removed or changed between two
// indexes, in order.
func changedServers(before, after map[string]*Cluster) []string {
	var out []string
	for server, a := range after {
		if b, ok := before[server]; !ok || b.Secret != a.Secret || b.fingerprint != a.fingerprint {
			out = append(out, server)
		}
	}
	for server := range before {
		if _, ok := after[server]; !ok {
			out = append(out, server)
		}
	}
	slices.Sort(out)
	return out
}
