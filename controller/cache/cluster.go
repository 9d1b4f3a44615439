package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/graphcd/graphcd/internal/settings"
)

// ErrUnknownKind is returned for a group/kind the cluster does not serve.
var ErrUnknownKind = errors.New("kind not served by the cluster")

// crdGK is followed to learn about new and removed custom resources.
var crdGK = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// Options configure a Cluster.
type Options struct {
	// Config reaches the destination cluster.
	Config *rest.Config
	// ClusterURL is matched against the clusters of exclusions/inclusions.
	ClusterURL string
	// TrackingMethod is annotation (default), annotation+label or label.
	TrackingMethod string
	// InstanceLabelKey is the label for label tracking (default
	// app.kubernetes.io/instance).
	InstanceLabelKey string
	// Exclusions and Inclusions choose the kinds to watch
	// (resource.exclusions, resource.inclusions).
	Exclusions, Inclusions []settings.ResourceFilter
	// Logger receives warnings; nil discards them.
	Logger *slog.Logger
	// ResyncPeriod of the informers (0 = none).
	ResyncPeriod time.Duration
	// SyncTimeout bounds how long Start waits for the initial lists
	// (default 2 minutes).
	SyncTimeout time.Duration
	// Namespaces limits the cache to these namespaces, as a cluster
	// Secret's namespaces key does: namespaced kinds are listed and
	// watched in each of them, never cluster-wide, and InScope refuses
	// objects elsewhere. Empty means every namespace.
	Namespaces []string
	// ClusterResources lets a cache limited to Namespaces watch and
	// manage cluster-scoped kinds too. Without Namespaces they always are.
	ClusterResources bool
}

// ResourceKey identifies an object in the cluster.
type ResourceKey struct {
	Group, Kind, Namespace, Name string
}

// GroupKind returns the key's group and kind.
func (k ResourceKey) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: k.Group, Kind: k.Kind}
}

// String formats the key as group/kind/namespace/name.
func (k ResourceKey) String() string {
	return k.Group + "/" + k.Kind + "/" + k.Namespace + "/" + k.Name
}

func (k ResourceKey) less(o ResourceKey) bool {
	if k.Group != o.Group {
		return k.Group < o.Group
	}
	if k.Kind != o.Kind {
		return k.Kind < o.Kind
	}
	if k.Namespace != o.Namespace {
		return k.Namespace < o.Namespace
	}
	return k.Name < o.Name
}

// Node is an object of an application's resource tree.
type Node struct {
	ResourceKey
	UID string
	// ParentUIDs are the owners of the object found in the cache (for an
	// EndpointSlice, also its Service).
	ParentUIDs        []string
	CreationTimestamp time.Time
}

type apiResource struct {
	gvr        schema.GroupVersionResource
	namespaced bool
	listWatch  bool
}

// watch follows one kind: with one informer over every namespace, or,
// for a cache limited to some namespaces, one informer per namespace.
type watch struct {
	gvr    schema.GroupVersionResource
	cancel context.CancelFunc
	// lists holds the informers by namespace; "" lists every namespace
	// (and is the only one of a cluster-scoped kind).
	lists map[string]*list
	// stopped is set, under Cluster.mu, when the watch is stopped, so that
	// events still in flight are not indexed.
	stopped bool
}

// list is one informer of a watch.
type list struct {
	informer toolscache.SharedIndexInformer
	// failed is closed when listing is refused (forbidden, gone).
	failed   chan struct{}
	failOnce sync.Once
}

func (l *list) hasFailed() bool {
	select {
	case <-l.failed:
		return true
	default:
		return false
	}
}

// ready reports whether every informer of w has its initial list in, or
// was refused one.
func (w *watch) ready() bool {
	for _, l := range w.lists {
		if !l.informer.HasSynced() && !l.hasFailed() {
			return false
		}
	}
	return true
}

// complete reports whether w holds every object of its kind in namespace
// ("" for a cluster-scoped kind): the informer covering it has listed
// and was not refused.
func (w *watch) complete(namespace string) bool {
	l := w.lists[namespace]
	if l == nil {
		l = w.lists[""]
	}
	return l != nil && l.informer.HasSynced() && !l.hasFailed()
}

// Cluster caches the metadata of every watched object of one destination
// cluster and indexes it by application.
type Cluster struct {
	log      *slog.Logger
	tracking Tracking
	filter   filter
	resync   time.Duration
	timeout  time.Duration
	// namespaces is the sorted Options.Namespaces, nil for the whole
	// cluster; clusterResources is Options.ClusterResources.
	namespaces       []string
	clusterResources bool

	disco discovery.DiscoveryInterface
	meta  metadata.Interface
	dyn   dynamic.Interface

	// syncMu serialises discovery + informer reconciliation.
	syncMu  sync.Mutex
	runCtx  context.Context
	watches map[schema.GroupKind]*watch

	mu        sync.RWMutex
	resources map[schema.GroupKind]apiResource
	// caps come from the same discovery run as resources.
	caps capabilities
	// discoveries counts discovery runs; resourcesFrom is the run
	// resources came from, so that a run that ends late cannot replace
	// the result of one that started after it (and saw a newer CRD).
	discoveries, resourcesFrom uint64
	// running mirrors watches for readers that must not wait for a
	// discovery round (syncMu); mu guards it.
	running    map[schema.GroupKind]*watch
	lastLookup time.Time // last discovery for an unknown kind
	// synced is when the initial lists, or the last discovery round
	// after them, completed; events counts the watch events observed by
	// kind. mu guards both (see Stats).
	synced time.Time
	events map[schema.GroupKind]uint64
	index

	handlersMu sync.RWMutex
	handlers   []func(app string, key ResourceKey)
	rootFns    []func(key ResourceKey)

	kick chan struct{}
}

// New returns a Cluster; Start fills it.
func New(opts Options) (*Cluster, error) {
	if opts.Config == nil {
		return nil, errors.New("cluster cache: no rest config")
	}
	cfg := rest.CopyConfig(opts.Config)
	if cfg.QPS == 0 {
		cfg.QPS = 50
	}
	if cfg.Burst == 0 {
		cfg.Burst = 100
	}
	// Listing deprecated kinds (v1 Endpoints) is expected; don't log it.
	cfg.WarningHandler = rest.NoWarnings{}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster cache: discovery client: %w", err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster cache: metadata client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster cache: dynamic client: %w", err)
	}
	switch opts.TrackingMethod {
	case "", settings.TrackingLabel, settings.TrackingAnnotation, settings.TrackingAnnotationAndLabel:
	default:
		return nil, fmt.Errorf("cluster cache: unknown tracking method %q", opts.TrackingMethod)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	timeout := opts.SyncTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	var namespaces []string
	for _, ns := range opts.Namespaces {
		if ns = strings.TrimSpace(ns); ns != "" && !slices.Contains(namespaces, ns) {
			namespaces = append(namespaces, ns)
		}
	}
	slices.Sort(namespaces)
	return &Cluster{
		namespaces:       namespaces,
		clusterResources: opts.ClusterResources,
		log:              logger,
		tracking:         Tracking{Method: opts.TrackingMethod, LabelKey: opts.InstanceLabelKey},
		filter:           filter{clusterURL: opts.ClusterURL, exclusions: opts.Exclusions, inclusions: opts.Inclusions},
		resync:           opts.ResyncPeriod,
		timeout:          timeout,
		disco:            disco,
		meta:             meta,
		dyn:              dyn,
		watches:          map[schema.GroupKind]*watch{},
		running:          map[schema.GroupKind]*watch{},
		events:           map[schema.GroupKind]uint64{},
		index:            newIndex(),
		kick:             make(chan struct{}, 1),
	}, nil
}

// Start discovers the cluster's API, starts a metadata informer for every
// watched kind and returns once their initial lists are in the cache. The
// informers and the CRD follower run until ctx ends.
func (c *Cluster) Start(ctx context.Context) error {
	c.syncMu.Lock()
	if c.runCtx != nil {
		c.syncMu.Unlock()
		return errors.New("cluster cache: already started")
	}
	c.runCtx = ctx
	c.syncMu.Unlock()

	started, err := c.sync(ctx)
	if err != nil {
		return err
	}
	// Kinds the cache may not list (RBAC) are skipped, not waited for.
	wctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	ready := (*watch).ready
	_ = wait.PollUntilContextCancel(wctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		for _, w := range started {
			if !ready(w) {
				return false, nil
			}
		}
		return true, nil
	})
	var pending []string
	for gk, w := range started {
		if !ready(w) {
			pending = append(pending, gk.String())
		}
	}
	if len(pending) > 0 {
		sort.Strings(pending)
		return fmt.Errorf("cluster cache: initial list of %s not synced: %w", strings.Join(pending, ", "), context.Cause(wctx))
	}
	c.markSynced()
	go c.followCRDs(ctx)
	return nil
}

// AppOf returns the application that owns obj under the cache's tracking
// settings, or "".
func (c *Cluster) AppOf(obj metav1.Object, gk schema.GroupKind) string {
	return c.tracking.AppOf(obj, gk)
}

// IsNamespaced reports whether gk is a namespaced kind.
func (c *Cluster) IsNamespaced(gk schema.GroupKind) (bool, error) {
	r, err := c.resourceFor(gk)
	return r.namespaced, err
}

// ResourceFor returns the preferred resource that serves gk.
func (c *Cluster) ResourceFor(gk schema.GroupKind) (schema.GroupVersionResource, error) {
	r, err := c.resourceFor(gk)
	return r.gvr, err
}

func (c *Cluster) resourceFor(gk schema.GroupKind) (apiResource, error) {
	c.mu.RLock()
	r, ok := c.resources[gk]
	c.mu.RUnlock()
	if ok {
		return r, nil
	}
	// The kind may be new (a CRD applied moments ago): look again, but
	// not more than once a second however often callers ask.
	c.mu.Lock()
	recent := time.Since(c.lastLookup) < time.Second
	if !recent {
		c.lastLookup = time.Now()
	}
	c.mu.Unlock()
	if recent {
		return apiResource{}, fmt.Errorf("%s: %w", gk, ErrUnknownKind)
	}
	res, err := c.discover()
	if err != nil {
		return apiResource{}, err
	}
	c.requestSync()
	if r, ok := res[gk]; ok {
		return r, nil
	}
	return apiResource{}, fmt.Errorf("%s: %w", gk, ErrUnknownKind)
}

// discover lists the preferred version of every resource the cluster
// serves; groups whose discovery fails (an aggregated API that is down) are
// skipped with a warning. It keeps the result as the cluster's resources
// unless a run started later has already stored its own, and returns the
// resources kept.
func (c *Cluster) discover() (map[schema.GroupKind]apiResource, error) {
	c.mu.Lock()
	c.discoveries++
	run := c.discoveries
	c.mu.Unlock()
	lists, err := c.disco.ServerPreferredResources()
	if err != nil {
		if !discovery.IsGroupDiscoveryFailedError(err) {
			return nil, fmt.Errorf("cluster cache: discovery: %w", err)
		}
		c.log.Warn("cluster cache: some API groups could not be discovered", "err", err)
	}
	res := map[schema.GroupKind]apiResource{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue // subresource
			}
			gk := schema.GroupKind{Group: gv.Group, Kind: r.Kind}
			res[gk] = apiResource{
				gvr:        gv.WithResource(r.Name),
				namespaced: r.Namespaced,
				listWatch:  hasVerbs(r.Verbs, "list", "watch"),
			}
		}
	}
	caps := c.readCapabilities(lists)
	c.mu.Lock()
	defer c.mu.Unlock()
	if run > c.resourcesFrom {
		c.resources, c.caps, c.resourcesFrom = res, caps, run
	}
	return c.resources, nil
}

func hasVerbs(verbs metav1.Verbs, want ...string) bool {
	for _, w := range want {
		found := false
		for _, v := range verbs {
			if v == w {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// sync runs discovery and starts/stops informers to match; it returns the
// informers it started.
func (c *Cluster) sync(ctx context.Context) (map[schema.GroupKind]*watch, error) {
	res, err := c.discover()
	if err != nil {
		return nil, err
	}
	c.syncMu.Lock()
	defer c.syncMu.Unlock()

	started := map[schema.GroupKind]*watch{}
	for gk, r := range res {
		if !c.watchable(gk, r) {
			continue
		}
		if w, ok := c.watches[gk]; ok {
			if w.gvr == r.gvr {
				continue
			}
			c.stopWatch(gk, w)
		}
		w, err := c.startWatch(ctx, gk, r)
		if err != nil {
			return nil, err
		}
		started[gk] = w
	}
	for gk, w := range c.watches {
		if r, ok := res[gk]; !ok || !c.watchable(gk, r) {
			c.stopWatch(gk, w)
		}
	}
	return started, nil
}

// watchable reports whether the cache runs informers for gk: a listable
// kind that is not filtered out (CRDs are always followed, to learn about
// new kinds) and, in a cache limited to namespaces, cluster-scoped only
// when cluster resources are allowed.
func (c *Cluster) watchable(gk schema.GroupKind, r apiResource) bool {
	switch {
	case !r.listWatch:
		return false
	case c.namespaces != nil && !r.namespaced && !c.clusterResources:
		return false
	case gk == crdGK:
		return true
	}
	return c.filter.watched(gk)
}

// startWatch starts the informers of gk: one over the whole cluster, or
// one per namespace of a cache limited to namespaces, so that no
// cluster-wide list is ever made with credentials that may not do one.
func (c *Cluster) startWatch(ctx context.Context, gk schema.GroupKind, r apiResource) (*watch, error) {
	namespaces := []string{metav1.NamespaceAll}
	if c.namespaces != nil && r.namespaced {
		namespaces = c.namespaces
	}
	w := &watch{gvr: r.gvr, lists: make(map[string]*list, len(namespaces))}
	for _, ns := range namespaces {
		l, err := c.newList(w, gk, ns)
		if err != nil {
			return nil, err
		}
		w.lists[ns] = l
	}
	wctx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	c.watches[gk] = w
	c.mu.Lock()
	c.running[gk] = w
	c.mu.Unlock()
	for _, l := range w.lists {
		go l.informer.RunWithContext(wctx)
	}
	return w, nil
}

// newList builds the (unstarted) informer of w's kind in namespace.
func (c *Cluster) newList(w *watch, gk schema.GroupKind, namespace string) (*list, error) {
	gvr := w.gvr
	inf := metadatainformer.NewFilteredMetadataInformer(c.meta, gvr, namespace, c.resync, toolscache.Indexers{}, nil).Informer()
	l := &list{informer: inf, failed: make(chan struct{})}
	if err := inf.SetTransform(stripMetadata); err != nil {
		return nil, fmt.Errorf("cluster cache: informer for %s: %w", gvr, err)
	}
	err := inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *toolscache.Reflector, err error) {
		if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
			l.failOnce.Do(func() {
				c.log.Warn("cluster cache: cannot list kind, skipping it", "resource", gvr.String(), "namespace", namespace, "err", err)
				close(l.failed)
			})
			return
		}
		toolscache.DefaultWatchErrorHandler(ctx, r, err)
	})
	if err != nil {
		return nil, fmt.Errorf("cluster cache: informer for %s: %w", gvr, err)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.observe(w, gk, nil, obj, false) },
		UpdateFunc: func(old, obj any) { c.observe(w, gk, old, obj, false) },
		DeleteFunc: func(obj any) { c.observe(w, gk, nil, obj, true) },
	})
	if err != nil {
		return nil, fmt.Errorf("cluster cache: informer for %s: %w", gvr, err)
	}
	return l, nil
}

// stopWatch stops an informer and forgets its objects; syncMu is held.
func (c *Cluster) stopWatch(gk schema.GroupKind, w *watch) {
	w.cancel()
	delete(c.watches, gk)
	c.mu.Lock()
	w.stopped = true
	if c.running[gk] == w {
		delete(c.running, gk)
	}
	changes := c.dropKind(gk)
	c.mu.Unlock()
	c.notify(changes)
}

// stripMetadata keeps the informer stores small: managed fields and the
// last-applied annotation are the bulk of most objects' metadata and the
// cache needs neither.
func stripMetadata(obj any) (any, error) {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		m.ManagedFields = nil
		delete(m.Annotations, lastApplied)
	}
	return obj, nil
}

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// requestSync asks the CRD follower for a new discovery round.
func (c *Cluster) requestSync() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// followCRDs re-runs discovery when CRDs come and go. A new CRD is served
// only once it is established, so each request is followed by a few
// rounds spread over some seconds.
func (c *Cluster) followCRDs(ctx context.Context) {
	delays := []time.Duration{0, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second}
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		}
		for _, d := range delays {
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
			if _, err := c.sync(ctx); err != nil {
				c.log.Warn("cluster cache: rediscovery failed", "err", err)
			} else {
				c.markSynced()
			}
		}
	}
}

// Watched reports whether the cache watches gk: kinds excluded by the
// built-in list or by resource.exclusions / resource.inclusions are not,
// and applications cannot manage them.
func (c *Cluster) Watched(gk schema.GroupKind) bool {
	return c.filter.watched(gk)
}
