package controller

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/cache"
	"github.com/graphcd/graphcd/controller/manifests"
	"github.com/graphcd/graphcd/controller/project"
	"github.com/graphcd/graphcd/internal/appstate"
	"github.com/graphcd/graphcd/internal/clusters"
	"github.com/graphcd/graphcd/internal/memguard"
	"github.com/graphcd/graphcd/internal/settings"
	"github.com/graphcd/graphcd/reposerver"
)

// LiveState is what the reconciler needs of a destination cluster's cache.
type LiveState interface {
	// Managed lists the objects tracked to app.
	Managed(app string) []ResourceKey
	// Get returns the full live object.
	Get(ctx context.Context, key ResourceKey) (*unstructured.Unstructured, error)
	// Fetch reads the live object from the API server, past the cache.
	Fetch(ctx context.Context, key ResourceKey) (*unstructured.Unstructured, error)
	// Lookup returns the live object or nil, answering "missing" from the
	// cache's index.
	Lookup(ctx context.Context, key ResourceKey) (*unstructured.Unstructured, error)
	// IsNamespaced reports the scope of a kind, from discovery.
	IsNamespaced(gk schema.GroupKind) (bool, error)
	// Watched reports whether a kind may be managed at all (not excluded
	// by resource.exclusions / resource.inclusions).
	Watched(gk schema.GroupKind) bool
	// Orphans lists the untracked top-level objects of a namespace.
	Orphans(namespace string) []ResourceKey
	// Owner reports whether an object exists and the app it is tracked to.
	Owner(key ResourceKey) (app string, exists bool)
	// Observed reports whether the cache has seen key at resourceVersion
	// rv or later ("": seen it deleted), or does not watch it.
	Observed(key ResourceKey, rv string) bool
	// DryRunApply predicts the object a server-side apply would store.
	DryRunApply(ctx context.Context, obj *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error)
	// DryRunApplyAs is DryRunApply sent through client.
	DryRunApplyAs(ctx context.Context, client dynamic.Interface, obj *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error)
	// Capabilities are the cluster's version and API versions, for
	// renders (Helm's .Capabilities, KUBE_VERSION, KUBE_API_VERSIONS).
	Capabilities() (kubeVersion string, apiVersions []string)
}

// InClusterServer is the destination server of the cluster graphcd runs in.
const InClusterServer = clusters.InClusterServer

// Options configure the Reconciler.
type Options struct {
	Repo reposerver.Service
	// Live is the cache of the cluster graphcd runs in, the only
	// destination of a Reconciler built on its own; a Controller gives its
	// Reconciler every registered cluster instead.
	Live LiveState
	// Settings are graphcd-cm's; nil means defaults.
	Settings *settings.Settings
	// Resync is the periodic refresh (default 180 s as Argo CD's
	// timeout.reconciliation, plus up to half of it as jitter).
	Resync time.Duration
	// RepoFor resolves a repository URL to its credentials for the
	// applications of project (repocreds.Store.Lookup); nil uses none.
	RepoFor func(ctx context.Context, url, project string) (reposerver.Repository, error)
	// WriteRepoFor resolves a repository URL to the credentials that push
	// to it for the applications of project (repocreds.Store.LookupWrite),
	// for the source hydrator; nil leaves hydration off.
	WriteRepoFor func(ctx context.Context, url, project string) (reposerver.Repository, error)
	// Committer pushes hydrated manifests (a git.Client); nil leaves
	// hydration off: apps with spec.sourceHydrator then report a
	// HydrationError and still sync what their sync branch holds.
	Committer Committer
	// Recorder records Kubernetes Events on Applications when their sync
	// status or health changes; nil records none.
	Recorder events.EventRecorder
	Logger   *slog.Logger
	// Shard selects the destination clusters whose apps are reconciled;
	// others are left alone. The zero Shard owns every cluster.
	Shard Shard
	// LiveReady, when not nil, is closed once Live holds the in-cluster
	// state; reconciles of in-cluster apps wait for it.
	LiveReady <-chan struct{}
	// Sync is the way to the destination cluster for sync operations;
	// without a client, operations fail with an error.
	Sync SyncConfig
	// APIReader reads Applications past the manager's cache, so an
	// operation always continues from the state last written; nil reads
	// through the client.
	APIReader client.Reader
	// Metadata, when set, writes the status of Applications and decodes
	// only the metadata of the object the API server answers with; nil
	// writes through the client, which decodes the whole object.
	Metadata metadata.Interface
	// State receives each app's resource tree and managed resources after
	// every comparison that changed them, for the API; nil writes none.
	State appstate.Store
	// Memory admits each reconcile that may compare or sync: under
	// memory pressure one runs at a time. Nil admits all at once.
	Memory *memguard.Guard
	// AppNamespaces are the namespaces whose Applications are reconciled,
	// around graphcd's own, where the AppProjects live; others are
	// ignored. Nil serves every namespace, each app using the projects of
	// its own namespace (a Reconciler built on its own, in tests).
	AppNamespaces *project.AppNamespaces
}

// SyncConfig configures the sync executor.
type SyncConfig struct {
	// Client and Mapper reach the destination cluster.
	Client dynamic.Interface
	Mapper meta.RESTMapper
	// WaveDelay and PollInterval pace syncs; see sync.Config.
	WaveDelay    time.Duration
	PollInterval time.Duration
}

// RevisionInvalidator is implemented by repository services that cache
// resolved revisions (branch -> SHA). A refresh annotation (normal or
// hard) calls it before rendering, so a new commit is seen at once.
type RevisionInvalidator interface {
	InvalidateRevision(repoURL string)
}

// Reconciler compares each Application with its destination and writes
// the outcome to the Application's status.
type Reconciler struct {
	client  client.Client
	opts    Options
	engines atomic.Pointer[engines]
	log     *slog.Logger
	events  chan event.GenericEvent
	broker  *broker

	// dests resolves destinations and hands out cluster caches.
	dests destinations

	// memory is what the reconciler remembers of each app between its
	// reconciles.
	memory   *appMemory
	orphans  *orphanWatch
	projects project.Cache
	// states writes app states for the API; nil when Options.State is.
	states *appstate.Writer
	// writes writes the statuses of reconciles that only compared.
	writes *statusWrites
	// manifests renders sources with their projects' rules, as the API
	// does.
	manifests *manifests.Renderer
	// fresh names the repositories this reconciler has had resolved
	// afresh: a shard's new leader does not trust the revisions the
	// repository servers resolved before it led, as its predecessor may
	// have died between a push and passing its invalidation on, and the
	// pushes while no leader listened went nowhere (pushrelay).
	fresh repoSet
}

// AppState is what the reconciler knows of an app beyond its status: the
// per-resource diffs, kept in memory (not in the CRD) for the API.
type AppState struct {
	Comparison *Comparison
	Revision   string
	// predictions are the server-side diff dry runs, reused while their
	// inputs are unchanged.
	predictions map[ResourceKey]prediction
}

// NewReconciler returns a Reconciler; SetupWithManager registers it.
func NewReconciler(c client.Client, opts Options) (*Reconciler, error) {
	if opts.Resync <= 0 {
		opts.Resync = 180 * time.Second
	}
	if opts.Settings == nil {
		s, err := settings.Parse(nil)
		if err != nil {
			return nil, err
		}
		opts.Settings = s
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.AppNamespaces == nil {
		all, err := project.CompileAppNamespaces("", nil)
		if err != nil {
			return nil, err
		}
		opts.AppNamespaces = all
	}
	if opts.RepoFor == nil {
		opts.RepoFor = func(_ context.Context, url, _ string) (reposerver.Repository, error) {
			return reposerver.Repository{URL: url}, nil
		}
	}
	e, err := newEngines(opts.Settings, opts.Sync)
	if err != nil {
		return nil, err
	}
	r := &Reconciler{
		client: c, opts: opts, log: opts.Logger, events: make(chan event.GenericEvent, 1024),
		broker: newBroker(), memory: newAppMemory(), orphans: newOrphanWatch(),
		dests: singleDestination{dest: &Destination{
			Server: InClusterServer, Live: opts.Live, Client: opts.Sync.Client, Mapper: opts.Sync.Mapper, ready: opts.LiveReady,
		}},
	}
	r.manifests = &manifests.Renderer{Repo: opts.Repo, Credentials: opts.RepoFor, Keys: r.apiReader(), Tools: func() reposerver.ToolOptions {
		s := r.engines.Load().settings
		return reposerver.ToolOptions{HelmValuesFileSchemes: s.HelmValuesFileSchemes, KustomizeBuildOptions: s.KustomizeBuildOptions}
	}}
	if opts.State != nil {
		r.states = appstate.NewWriter(opts.State, appstate.WriterOptions{})
	}
	r.writes = newStatusWrites(r)
	r.engines.Store(e)
	return r, nil
}

// SetupWithManager watches Applications (spec, labels and annotations, not
// status), AppProjects (a changed project refreshes its apps; the informer
// also syncs before the first reconcile reads a project) and the refresh
// requests that live-state events send.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, processors int) error {
	r.writes.writers = processors
	if err := mgr.Add(r.writes); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("application").
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: processors}).
		Watches(&v1alpha1.Application{}, &appEvents{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, annotationsChanged(), predicate.LabelChangedPredicate{}))).
		Watches(&v1alpha1.AppProject{}, handler.EnqueueRequestsFromMapFunc(r.appsOfProject),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesRawSource(source.Channel(r.events, &handler.EnqueueRequestForObject{})).
		Complete(r)
}

// appsOfProject lists the apps of a project, from the manager's cache.
func (r *Reconciler) appsOfProject(ctx context.Context, obj client.Object) []ctrl.Request {
	if r.projectNamespace(obj.GetNamespace()) != obj.GetNamespace() {
		return nil // not a project of this controller's
	}
	apps, err := r.listApps(ctx)
	if err != nil {
		r.log.Warn("list the apps of a changed project", "project", obj.GetName(), "err", err)
		return nil
	}
	var out []ctrl.Request
	for _, a := range apps {
		if r.projectNamespace(a.Namespace) != obj.GetNamespace() {
			continue
		}
		if p := a.Spec.Project; p == obj.GetName() || (p == "" && obj.GetName() == "default") {
			out = append(out, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: a.Namespace, Name: a.Name}})
		}
	}
	return out
}

// listApps lists the apps this reconciler serves, from the manager's
// cache: those of every namespace AppNamespaces allows.
func (r *Reconciler) listApps(ctx context.Context) ([]*v1alpha1.Application, error) {
	ns := r.opts.AppNamespaces
	watch := ns.Watch()
	if watch == nil {
		watch = []string{metav1.NamespaceAll}
	}
	var out []*v1alpha1.Application
	for _, n := range watch {
		var list v1alpha1.ApplicationList
		if err := r.client.List(ctx, &list, client.InNamespace(n)); err != nil {
			return nil, err
		}
		for i := range list.Items {
			if ns.Allowed(list.Items[i].Namespace) {
				out = append(out, &list.Items[i])
			}
		}
	}
	return out, nil
}

// projectNamespace is where the AppProjects of an app in namespace live:
// graphcd's namespace, or the app's own when the reconciler serves every
// namespace alone.
func (r *Reconciler) projectNamespace(namespace string) string {
	if own := r.opts.AppNamespaces.Own(); own != "" {
		return own
	}
	return namespace
}

// instance is the name that tracks app's live objects (see
// cache.InstanceName).
func (r *Reconciler) instance(app *v1alpha1.Application) string {
	return cache.InstanceName(app.Namespace, app.Name, r.opts.AppNamespaces.Own())
}

// Refresh asks for app to be reconciled soon, e.g. because one of its live
// objects changed. It never blocks: a full queue drops the request, and
// the periodic resync catches up.
func (r *Reconciler) Refresh(app types.NamespacedName) {
	obj := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
	select {
	case r.events <- event.GenericEvent{Object: obj}:
	default:
	}
}

// refreshWait is Refresh that waits for room in the queue rather than
// dropping the request, for callers that refresh many apps at once.
func (r *Reconciler) refreshWait(ctx context.Context, app types.NamespacedName) error {
	obj := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
	select {
	case r.events <- event.GenericEvent{Object: obj}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Subscribe returns a channel of the reconciliation events of every app,
// with room for buffer events. A subscriber that falls behind misses
// events (Dropped counts them) rather than slowing the reconciler. The
// channel is closed when ctx ends.
func (r *Reconciler) Subscribe(ctx context.Context, buffer int) <-chan Event {
	return r.broker.subscribe(ctx, buffer)
}

// Dropped counts the events subscribers missed because their buffer was
// full.
func (r *Reconciler) Dropped() uint64 { return r.broker.dropped.Load() }

// State returns the last comparison of app, or nil.
func (r *Reconciler) State(app types.NamespacedName) *AppState { return r.memory.state(app) }

// apiReader reads past the manager's cache.
func (r *Reconciler) apiReader() client.Reader {
	if r.opts.APIReader != nil {
		return r.opts.APIReader
	}
	return r.client
}
