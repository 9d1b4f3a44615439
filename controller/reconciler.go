package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
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
	"github.com/graphcd/graphcd/controller/diff"
	"github.com/graphcd/graphcd/controller/manifests"
	"github.com/graphcd/graphcd/controller/project"
	"github.com/graphcd/graphcd/internal/appstate"
	"github.com/graphcd/graphcd/internal/clusters"
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
}

// InClusterServer is the destination server of the cluster graphcd runs in.
const InClusterServer = "https://kubernetes.default.svc"

// Options configure the Reconciler.
type Options struct {
	Repo reposerver.Service
	// Live is the cache of the cluster graphcd runs in, the only
	// destination of a Reconciler built on its own; a Controller gives its
	// Reconciler every registered cluster instead.
	Live LiveState
	// Settings are graphcd-cm's; nil means defaults.
	Settings *settings.Settings
	// Resync is the periodic refresh (default 120 s, plus up to half of it
	// as jitter).
	Resync time.Duration
	// RepoFor resolves a repository URL to its credentials; nil uses none.
	RepoFor func(ctx context.Context, url string) (reposerver.Repository, error)
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
	// State receives each app's resource tree and managed resources after
	// every comparison that changed them, for the API; nil writes none.
	State appstate.Store
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

	mu    sync.RWMutex
	state map[types.NamespacedName]*AppState
	// written is each app's resourceVersion as its last reconcile left it.
	written map[types.NamespacedName]string
	// announced is the sync and health status of each app's last
	// announcement (see announce).
	announced map[types.NamespacedName]announcedStatus
	// servers is the destination server of every claimed app ("" when it
	// did not resolve), so that a cluster's cache events refresh only the
	// apps of that cluster.
	servers  map[types.NamespacedName]string
	orphans  *orphanWatch
	projects project.Cache
	// states writes app states for the API; nil when Options.State is.
	states *appstate.Writer
	// writes writes the statuses of reconciles that only compared.
	writes *statusWrites
	// manifests renders sources with their projects' rules, as the API
	// does.
	manifests *manifests.Renderer
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
		opts.Resync = 120 * time.Second
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
	if opts.RepoFor == nil {
		opts.RepoFor = func(_ context.Context, url string) (reposerver.Repository, error) {
			return reposerver.Repository{URL: url}, nil
		}
	}
	e, err := newEngines(opts.Settings, opts.Sync)
	if err != nil {
		return nil, err
	}
	r := &Reconciler{
		client: c, opts: opts, log: opts.Logger, events: make(chan event.GenericEvent, 1024),
		broker: newBroker(), state: map[types.NamespacedName]*AppState{}, written: map[types.NamespacedName]string{},
		announced: map[types.NamespacedName]announcedStatus{}, orphans: newOrphanWatch(),
		servers: map[types.NamespacedName]string{},
		dests: singleDestination{dest: &Destination{
			Server: InClusterServer, Live: opts.Live, Client: opts.Sync.Client, Mapper: opts.Sync.Mapper, ready: opts.LiveReady,
		}},
	}
	r.manifests = &manifests.Renderer{Repo: opts.Repo, Credentials: opts.RepoFor, Keys: r.apiReader()}
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
		For(&v1alpha1.Application{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Watches(&v1alpha1.AppProject{}, handler.EnqueueRequestsFromMapFunc(r.appsOfProject),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesRawSource(source.Channel(r.events, &handler.EnqueueRequestForObject{})).
		Complete(r)
}

// appsOfProject lists the apps of a project, from the manager's cache.
func (r *Reconciler) appsOfProject(ctx context.Context, obj client.Object) []ctrl.Request {
	var list v1alpha1.ApplicationList
	if err := r.client.List(ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
		r.log.Warn("list the apps of a changed project", "project", obj.GetName(), "err", err)
		return nil
	}
	var out []ctrl.Request
	for i := range list.Items {
		a := &list.Items[i]
		if p := a.Spec.Project; p == obj.GetName() || (p == "" && obj.GetName() == "default") {
			out = append(out, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: a.Namespace, Name: a.Name}})
		}
	}
	return out
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
func (r *Reconciler) State(app types.NamespacedName) *AppState {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.state[app]
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var app v1alpha1.Application
	if err := r.client.Get(ctx, req.NamespacedName, &app); err != nil {
		if apierrors.IsNotFound(err) {
			r.mu.Lock()
			delete(r.state, req.NamespacedName)
			delete(r.written, req.NamespacedName)
			delete(r.announced, req.NamespacedName)
			delete(r.servers, req.NamespacedName)
			r.mu.Unlock()
			r.orphans.set(req.NamespacedName, "")
			r.forgetAppState(ctx, req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	t, ok := r.claim(ctx, &app)
	if !ok {
		return ctrl.Result{}, nil
	}
	if err := r.writes.flush(ctx, req.NamespacedName); err != nil {
		return ctrl.Result{}, err
	}
	if r.behind(req.NamespacedName, app.ResourceVersion) {
		// The cache has not caught up with this controller's last write:
		// an operation continues from the state last written, and status
		// changes are judged from it, never from a copy a step behind.
		if err := r.apiReader().Get(ctx, req.NamespacedName, &app); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	if app.DeletionTimestamp != nil {
		// Being deleted: a cascade finalizer deletes the resources first;
		// nothing is compared or synced any more.
		return r.finalize(ctx, &app, t)
	}
	status := app.Status.DeepCopy()
	now := metav1.Now()
	op := r.operate(ctx, &app, t, status, now)
	mode := refreshMode(&app)
	cmp, hookFinalizers, err := r.compareApp(ctx, &app, t, mode)
	if err == nil {
		if err := r.addFinalizers(ctx, &app, hookFinalizers); err != nil {
			return ctrl.Result{}, err
		}
	}
	var auto autoSyncDecision
	if err != nil {
		setCondition(status, conditionFor(err), err.Error(), now)
		status.Sync.Status = v1alpha1.SyncStatusCodeUnknown
	} else {
		clearCondition(status, v1alpha1.ApplicationConditionComparisonError)
		clearCondition(status, v1alpha1.ApplicationConditionInvalidSpecError)
		for _, t := range warningConditions {
			if msg, ok := cmp.Warnings[t]; ok {
				setCondition(status, t, msg, now)
			} else {
				clearCondition(status, t)
			}
		}
		r.apply(status, &app, cmp, now)
		r.mu.Lock()
		r.state[req.NamespacedName] = &AppState{Comparison: cmp, Revision: cmp.Revision, predictions: cmp.predictions}
		r.mu.Unlock()
		if !op.ran {
			auto = decideAutoSync(&app, status, cmp, now.Time)
			noteAutoSync(status, auto, now)
		}
	}
	if op.finished {
		if err := r.clearOperation(ctx, &app); err != nil {
			return ctrl.Result{}, err
		}
	}
	before := app.Status.DeepCopy()
	// A reconcile that only compared (and perhaps decided on an automated
	// sync) leaves its writes to the writers and announces the comparison
	// at once; one that ran or finished an operation, or serves a refresh
	// annotation, writes first.
	queued := !op.ran && !op.finished && app.Operation == nil && refreshMode(&app) == "" &&
		r.writes.enqueue(app.DeepCopy(), status.DeepCopy(), auto.op, now)
	if !queued {
		if err := r.writeStatus(ctx, &app, status, now); err != nil {
			if ctx.Err() != nil {
				return ctrl.Result{}, nil //nolint:nilerr // shutting down: nothing to retry
			}
			return ctrl.Result{}, err
		}
	}
	r.announce(&app, before, status, now.Time)
	if refreshMode(&app) != "" {
		if err := r.clearRefresh(ctx, &app); err != nil {
			return ctrl.Result{}, err
		}
	}
	if auto.op != nil && !queued {
		if err := r.requestAutoSync(ctx, &app, auto.op); err != nil {
			return ctrl.Result{}, err
		}
	}
	jitter := time.Duration(rand.Int64N(int64(r.opts.Resync / 2))) //nolint:gosec // spreading refreshes, not security
	next := r.opts.Resync + jitter
	var retryConn, recheck time.Duration
	if t.connErr != nil {
		retryConn = connectRetry
	}
	if op.finished {
		recheck = afterOperation
	}
	for _, d := range []time.Duration{op.requeue, auto.requeue, retryConn, recheck} {
		if d > 0 && d < next {
			next = d
		}
	}
	if !queued { // else the writer records the version its write leaves
		r.mu.Lock()
		r.written[req.NamespacedName] = app.ResourceVersion
		r.mu.Unlock()
	}
	return ctrl.Result{RequeueAfter: next}, nil
}

// behind reports whether rv (the cached app's) may be older than what the
// last reconcile of app in this process left, its own writes included.
// Versions are opaque, so any other version counts (a newer one only
// costs a read). Before the first reconcile the cache, filled by a fresh
// list, is current.
func (r *Reconciler) behind(app types.NamespacedName, rv string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	last, ok := r.written[app]
	return ok && last != rv
}

// apiReader reads past the manager's cache.
func (r *Reconciler) apiReader() client.Reader {
	if r.opts.APIReader != nil {
		return r.opts.APIReader
	}
	return r.client
}

// errInvalidSpec marks a comparison that failed because of the spec.
var errInvalidSpec = errors.New("invalid spec")

func conditionFor(err error) v1alpha1.ApplicationConditionType {
	if errors.Is(err, errInvalidSpec) {
		return v1alpha1.ApplicationConditionInvalidSpecError
	}
	return v1alpha1.ApplicationConditionComparisonError
}

// compareApp renders the app's source and compares it with the live state
// of its destination cluster. It also returns the finalizers the app's
// deletion hooks need (see PreDeleteFinalizer).
func (r *Reconciler) compareApp(ctx context.Context, app *v1alpha1.Application, t *target, mode string) (*Comparison, []string, error) {
	cmp, rendered, err := r.compareRendered(ctx, app, t, mode)
	if err != nil {
		return nil, nil, err
	}
	return cmp, deletionFinalizers(rendered.desired), nil
}

// compareRendered is compareApp that returns what it rendered.
func (r *Reconciler) compareRendered(ctx context.Context, app *v1alpha1.Application, t *target, mode string) (*Comparison, *rendered, error) {
	eng := r.engines.Load()
	src := app.Spec.Source
	if src == nil {
		if len(app.Spec.Sources) > 0 {
			return nil, nil, fmt.Errorf("%w: multiple sources are not supported yet", errInvalidSpec)
		}
		return nil, nil, fmt.Errorf("%w: spec.source is required", errInvalidSpec)
	}
	if err := t.liveErr(); err != nil {
		return nil, nil, err
	}
	dest, lv := app.Spec.Destination, t.dest.Live
	proj, err := r.project(ctx, app)
	if err != nil {
		return nil, nil, err
	}
	if err := r.specAllowed(app, proj, t.cluster); err != nil {
		return nil, nil, err
	}
	rendered, err := r.render(ctx, app, lv, *src, "", mode)
	if err != nil {
		return nil, nil, err
	}
	desired, excluded := withoutHooks(rendered.desired), rendered.excluded
	all, err := r.liveObjects(ctx, app, lv)
	if err != nil {
		return nil, nil, err
	}
	live := map[ResourceKey]*unstructured.Unstructured{}
	for key, obj := range all {
		if !isHook(obj) {
			live[key] = obj
		}
	}
	var prev map[ResourceKey]prediction
	if st := r.State(types.NamespacedName{Namespace: app.Namespace, Name: app.Name}); st != nil {
		prev = st.predictions
	}
	predictions, err := r.predict(ctx, lv, serverSideDiff(app, eng.settings.ServerSideDiff), desired, live, prev)
	if err != nil {
		return nil, nil, err
	}
	differ, err := diff.New(diff.Options{Ignore: IgnoreRules(eng.settings, app.Spec.IgnoreDifferences)})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: ignoreDifferences: %w", errInvalidSpec, err)
	}
	cmp, err := compare(ctx, compareInput{desired: desired, live: live, predicted: predictions, differ: differ, health: eng.health})
	if err != nil {
		return nil, nil, err
	}
	cmp.Revision, cmp.SourceType, cmp.predictions = rendered.revision, rendered.sourceType, predictions
	cmp.Warnings = warnings(lv, app.Name, desired, live)
	if len(excluded) > 0 {
		cmp.Warnings[v1alpha1.ApplicationConditionExcludedResourceWarning] = "resources excluded by the resource.exclusions / resource.inclusions settings are not managed: " + strings.Join(excluded, ", ")
	}
	orphans, monitored, warn, err := r.orphansOf(app, proj, lv)
	if err != nil {
		return nil, nil, err
	}
	cmp.Orphans = orphans
	if monitored {
		r.orphans.set(types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, dest.Namespace)
	} else {
		r.orphans.set(types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, "")
	}
	if warn && len(orphans) > 0 {
		cmp.Warnings[v1alpha1.ApplicationConditionOrphanedResourceWarning] = orphanWarning(orphans)
	}
	r.writeAppState(ctx, app, lv, cmp, desired, all)
	return cmp, rendered, nil
}

// specAllowed checks the app's spec against its project (proj, nil when
// it does not exist) before anything is rendered: a repository or a
// destination the project does not permit is an invalid spec, as in Argo
// CD, and its source is never fetched.
func (r *Reconciler) specAllowed(app *v1alpha1.Application, proj *v1alpha1.AppProject, c *clusters.Cluster) error {
	if proj == nil {
		return fmt.Errorf("%w: application references project %s which does not exist", errInvalidSpec, projectOf(app))
	}
	rules, err := r.projects.Rules(proj)
	if err == nil {
		err = rules.AppAllowed(&app.Spec, c.Server, c.Name)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", errInvalidSpec, err)
	}
	return nil
}

// projectOf names the app's project; an empty one is the default.
func projectOf(app *v1alpha1.Application) string {
	if app.Spec.Project == "" {
		return project.DefaultProjectName
	}
	return app.Spec.Project
}

// project returns the app's AppProject, or nil when it does not exist yet
// (projects are enforced by the sync engine).
func (r *Reconciler) project(ctx context.Context, app *v1alpha1.Application) (*v1alpha1.AppProject, error) {
	name := projectOf(app)
	var proj v1alpha1.AppProject
	err := r.client.Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: name}, &proj)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read project %s: %w", name, err)
	}
	return &proj, nil
}

// describe names a resource for people: "Deployment shop/web",
// "Certificate.cert-manager.io shop/tls", "ClusterRole admin".
func describe(k ResourceKey) string {
	kind := k.Kind
	if k.Group != "" {
		kind += "." + k.Group
	}
	if k.Namespace == "" {
		return kind + " " + k.Name
	}
	return kind + " " + k.Namespace + "/" + k.Name
}

// warningConditions are the conditions warnings may set; each is cleared
// when its cause is gone.
var warningConditions = []v1alpha1.ApplicationConditionType{
	v1alpha1.ApplicationConditionRepeatedResourceWarning,
	v1alpha1.ApplicationConditionSharedResourceWarning,
	v1alpha1.ApplicationConditionExcludedResourceWarning,
	v1alpha1.ApplicationConditionOrphanedResourceWarning,
}

// warnings reports resources Git declares twice, and desired resources
// that exist live but are tracked to another app (Argo CD's
// SharedResourceWarning), from the cache's index.
func warnings(lv LiveState, app string, desired []*unstructured.Unstructured, live map[ResourceKey]*unstructured.Unstructured) map[v1alpha1.ApplicationConditionType]string {
	out := map[v1alpha1.ApplicationConditionType]string{}
	count := map[ResourceKey]int{}
	var repeated, shared []string
	for _, d := range desired {
		key := KeyOf(d)
		count[key]++
		if count[key] == 2 {
			repeated = append(repeated, describe(key))
		}
		if _, ok := live[key]; ok || count[key] > 1 {
			continue
		}
		if owner, exists := lv.Owner(key); exists && owner != "" && owner != app {
			shared = append(shared, fmt.Sprintf("%s is part of applications %s and %s", describe(key), owner, app))
		}
	}
	if len(repeated) > 0 {
		out[v1alpha1.ApplicationConditionRepeatedResourceWarning] = "resources appear more than once among the application's manifests: " + strings.Join(repeated, ", ")
	}
	if len(shared) > 0 {
		out[v1alpha1.ApplicationConditionSharedResourceWarning] = strings.Join(shared, "; ")
	}
	return out
}

// apply writes a comparison into status.
func (r *Reconciler) apply(status *v1alpha1.ApplicationStatus, app *v1alpha1.Application, cmp *Comparison, now metav1.Time) {
	status.Sync = v1alpha1.SyncStatus{
		Status:     cmp.Sync,
		Revision:   cmp.Revision,
		ComparedTo: v1alpha1.ComparedTo{Source: *app.Spec.Source, Destination: app.Spec.Destination, IgnoreDifferences: app.Spec.IgnoreDifferences},
	}
	if status.Health.Status != cmp.Health {
		status.Health.LastTransitionTime = &now
	}
	status.Health.Status, status.Health.Message = cmp.Health, ""
	status.SourceType = cmp.SourceType
	status.Summary.Images = cmp.Images
	status.Resources = make([]v1alpha1.ResourceStatus, 0, len(cmp.Resources))
	for _, res := range cmp.Resources {
		rs := v1alpha1.ResourceStatus{
			Group: res.Key.Group, Version: res.Version, Kind: res.Key.Kind, Namespace: res.Key.Namespace, Name: res.Key.Name,
			Status: res.Status, RequiresPruning: res.RequiresPruning,
		}
		if res.Health != nil {
			rs.Health = &v1alpha1.HealthStatus{Status: res.Health.Status, Message: res.Health.Message}
		}
		status.Resources = append(status.Resources, rs)
	}
}

// statusWriteAttempts bounds how often writeStatus reads the app again
// after a conflicting write.
const statusWriteAttempts = 5

// writeStatus patches the status when anything but reconciledAt changed,
// or when reconciledAt is older than the resync period. The patch carries
// the resourceVersion read, so it never lands on a status someone else
// changed meanwhile: on a conflict the app is read again, the requests
// written into it (a terminate) are kept in status, and the write is
// tried again. app holds what was written.
func (r *Reconciler) writeStatus(ctx context.Context, app *v1alpha1.Application, status *v1alpha1.ApplicationStatus, now metav1.Time) error {
	old := app.Status.DeepCopy()
	stale := old.ReconciledAt == nil || now.Sub(old.ReconciledAt.Time) >= r.opts.Resync
	old.ReconciledAt, status.ReconciledAt = nil, nil
	if !stale && reflect.DeepEqual(old, status) {
		return nil
	}
	status.ReconciledAt = &now
	for attempt := 1; ; attempt++ {
		patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
		app.Status = *status.DeepCopy()
		err := r.client.Status().Patch(ctx, app, patch)
		if err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) || attempt == statusWriteAttempts {
			return fmt.Errorf("patch status of %s/%s: %w", app.Namespace, app.Name, err)
		}
		var fresh v1alpha1.Application
		if err := r.apiReader().Get(ctx, types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, &fresh); err != nil {
			return fmt.Errorf("read %s/%s again after a conflicting status write: %w", app.Namespace, app.Name, err)
		}
		keepRequests(status, &fresh.Status)
		*app = fresh
	}
}

// keepRequests carries into ours (the status the controller is about to
// write) what people may write into the status themselves: a terminate
// of the operation in progress, written as phase Terminating. An
// operation that ended in the meantime stays ended.
func keepRequests(ours, theirs *v1alpha1.ApplicationStatus) {
	o, t := ours.OperationState, theirs.OperationState
	if o == nil || t == nil || t.Phase != v1alpha1.OperationTerminating || o.Phase != v1alpha1.OperationRunning {
		return
	}
	if o.StartedAt.Unix() != t.StartedAt.Unix() {
		return // a terminate of another operation
	}
	o.Phase = v1alpha1.OperationTerminating
}

func refreshMode(app *v1alpha1.Application) string {
	for _, k := range []string{v1alpha1.RefreshAnnotation, v1alpha1.ArgoRefreshAnnotation} {
		if v := app.Annotations[k]; v != "" {
			return v
		}
	}
	return ""
}

// clearRefresh removes a served refresh request, as Argo CD does.
func (r *Reconciler) clearRefresh(ctx context.Context, app *v1alpha1.Application) error {
	patch := client.MergeFrom(app.DeepCopy())
	delete(app.Annotations, v1alpha1.RefreshAnnotation)
	delete(app.Annotations, v1alpha1.ArgoRefreshAnnotation)
	return client.IgnoreNotFound(r.client.Patch(ctx, app, patch))
}

func setCondition(status *v1alpha1.ApplicationStatus, t v1alpha1.ApplicationConditionType, msg string, now metav1.Time) {
	for i, c := range status.Conditions {
		if c.Type == t {
			if c.Message != msg {
				status.Conditions[i].Message, status.Conditions[i].LastTransitionTime = msg, &now
			}
			return
		}
	}
	status.Conditions = append(status.Conditions, v1alpha1.ApplicationCondition{Type: t, Message: msg, LastTransitionTime: &now})
}

func clearCondition(status *v1alpha1.ApplicationStatus, t v1alpha1.ApplicationConditionType) {
	out := status.Conditions[:0]
	for _, c := range status.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	status.Conditions = out
}
