package appset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/project"
	clusterreg "github.com/graphcd/graphcd/internal/clusters"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/gittree"
)

// ownerIndex is the field index of Applications by the UID of the
// ApplicationSet that controls them.
const ownerIndex = "graphcd.io/applicationset-owner"

// writers bounds the Application writes one set makes at once.
const writers = 32

// Options configure a Reconciler.
type Options struct {
	// Namespace is graphcd's namespace, where the AppProjects are.
	Namespace string
	// AppNamespaces are the namespaces whose sets (and so Applications)
	// this controller serves.
	AppNamespaces *project.AppNamespaces
	// Clusters is the registry of destination clusters: the clusters
	// generator's input and the destinations the projects check.
	Clusters *clusterreg.Registry
	// ClustersLoaded is closed once Clusters knows every cluster Secret;
	// no set is generated before (a clusters generator would see too few
	// clusters and a create-delete policy would delete the others' apps).
	ClustersLoaded <-chan struct{}
	// Repo reads the repositories of the git generators; RepoFor gives a
	// repository its credentials (see GitMatch). Without Repo, git
	// generators fail.
	Repo    reposerver.Service
	RepoFor func(ctx context.Context, url, project string) (reposerver.Repository, error)
	// APIReader reads past the cache (an Application an earlier
	// generation created that the cache has not seen yet).
	APIReader client.Reader
	Recorder  events.EventRecorder
	Logger    *slog.Logger
	// HTTP asks plugins and forges; nil is one under graphcd's egress
	// rules (internal/egress).
	HTTP *http.Client
	// Forges say which forges the SCM provider and pull request
	// generators may ask.
	Forges ForgePolicy
}

// Reconciler keeps the Applications of every ApplicationSet as its
// generators, template and policy say, and reports in the set's status
// what it did with each element and why.
type Reconciler struct {
	client  client.Client
	opts    Options
	log     *slog.Logger
	changed chan event.GenericEvent
	// http and insecure ask plugins and forges; insecure verifies no
	// certificate, for a generator's insecure: true.
	http, insecure *http.Client
	gens           generations
}

// NewReconciler builds a Reconciler over the manager's cached client.
func NewReconciler(c client.Client, opts Options) *Reconciler {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	r := &Reconciler{client: c, opts: opts, log: opts.Logger, changed: make(chan event.GenericEvent, 1), http: opts.HTTP, insecure: opts.HTTP}
	if opts.HTTP == nil {
		r.http, r.insecure = NewHTTPClients()
	}
	return r
}

// SetupWithManager registers the reconciler: it follows ApplicationSets,
// the Applications they own, and the cluster Secrets.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.Application{}, ownerIndex, func(o client.Object) []string {
		for _, ref := range o.GetOwnerReferences() {
			if ref.Controller != nil && *ref.Controller && ref.Kind == "ApplicationSet" && ref.APIVersion == v1alpha1.GroupVersion.String() {
				return []string{string(ref.UID)}
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if r.opts.Clusters != nil {
		r.opts.Clusters.OnSecretChange(func() {
			r.gens.clusterChanged()
			select {
			case r.changed <- event.GenericEvent{Object: &v1alpha1.ApplicationSet{}}:
			default: // one pending refresh serves every change
			}
		})
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("applicationset").
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: 2}).
		For(&v1alpha1.ApplicationSet{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Watches(&v1alpha1.Application{}, ownedApps{gens: &r.gens}).
		WatchesRawSource(source.Channel(r.changed, handler.EnqueueRequestsFromMapFunc(r.setsWithClusters))).
		Complete(r)
}

// statusDelay is how long a change of an owned Application's sync or
// health status waits before its set follows it (status.resources, see
// followResources; a RollingSync generates again): the changes of a
// thousand syncing Applications come together, not one each.
const statusDelay = 2 * time.Second

// ownedApps enqueues the set that controls a changed Application: at once
// when what the set writes changed (spec, metadata, existence; not an
// operation, which changes the generation too), counted
// in gens so that the set generates again; after statusDelay when only
// its sync or health status did (the set's resources and a RollingSync
// follow them); not at all otherwise.
type ownedApps struct{ gens *generations }

func (o ownedApps) Create(_ context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[ctrl.Request]) {
	o.changed(e.Object, q)
}

func (o ownedApps) Delete(_ context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[ctrl.Request]) {
	o.changed(e.Object, q)
}

// changed counts and enqueues a change a generation must see.
func (o ownedApps) changed(obj client.Object, q workqueue.TypedRateLimitingInterface[ctrl.Request]) {
	if req, ok := owner(obj); ok {
		o.gens.appChanged(req.NamespacedName)
		q.Add(req)
	}
}

func (ownedApps) Generic(context.Context, event.TypedGenericEvent[client.Object], workqueue.TypedRateLimitingInterface[ctrl.Request]) {
}

func (o ownedApps) Update(_ context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[ctrl.Request]) {
	before, ok1 := e.ObjectOld.(*v1alpha1.Application)
	after, ok2 := e.ObjectNew.(*v1alpha1.Application)
	if !ok1 || !ok2 {
		return
	}
	switch {
	case !equality.Semantic.DeepEqual(before.Spec, after.Spec) || after.DeletionTimestamp != nil ||
		!sameMap(before.Labels, after.Labels) || !sameMap(before.Annotations, after.Annotations) ||
		!slices.Equal(before.Finalizers, after.Finalizers) || !equality.Semantic.DeepEqual(before.OwnerReferences, after.OwnerReferences):
		o.changed(after, q)
	case before.Status.Sync.Status != after.Status.Sync.Status || before.Status.Health.Status != after.Status.Health.Status ||
		(before.Operation == nil) != (after.Operation == nil) || operationPhase(before) != operationPhase(after):
		if req, ok := owner(after); ok {
			q.AddAfter(req, statusDelay)
		}
	}
}

func operationPhase(a *v1alpha1.Application) v1alpha1.OperationPhase {
	if a.Status.OperationState == nil {
		return ""
	}
	return a.Status.OperationState.Phase
}

// owner is the request of the set that controls obj, if one does.
func owner(obj client.Object) (ctrl.Request, bool) {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "ApplicationSet" || ref.APIVersion != v1alpha1.GroupVersion.String() {
		return ctrl.Request{}, false
	}
	return ctrl.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}}, true
}

// setsWithClusters lists the sets a cluster Secret change may change:
// those with a clusters generator, at any depth.
func (r *Reconciler) setsWithClusters(ctx context.Context, _ client.Object) []ctrl.Request {
	var sets v1alpha1.ApplicationSetList
	if err := r.client.List(ctx, &sets, client.UnsafeDisableDeepCopy); err != nil {
		r.log.Warn("list the ApplicationSets of a changed cluster", "err", err)
		return nil
	}
	var out []ctrl.Request
	for i := range sets.Items {
		s := &sets.Items[i]
		if usesClusters(s.Spec.Generators) {
			out = append(out, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}})
		}
	}
	return out
}

// Reconcile generates one set's Applications and writes the differences.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if !r.opts.AppNamespaces.Allowed(req.Namespace) {
		return ctrl.Result{}, nil
	}
	var set v1alpha1.ApplicationSet
	if err := r.client.Get(ctx, req.NamespacedName, &set); err != nil {
		if apierrors.IsNotFound(err) {
			r.gens.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if set.DeletionTimestamp != nil {
		return ctrl.Result{}, nil // the owner references delete the Applications
	}
	refresh := set.Annotations[RefreshAnnotation] == "true"
	if rec, ok := r.gens.statusOnly(&set); ok && !refresh {
		return r.followResources(ctx, &set, rec)
	}
	if refresh {
		r.invalidateRevisions(&set)
	}
	if r.opts.ClustersLoaded != nil {
		select {
		case <-r.opts.ClustersLoaded:
		case <-ctx.Done():
			return ctrl.Result{}, ctx.Err()
		}
	}
	clusters, apps := r.gens.counters(req.NamespacedName)
	var owned v1alpha1.ApplicationList
	if err := r.client.List(ctx, &owned, client.InNamespace(set.Namespace), client.MatchingFields{ownerIndex: string(set.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, err
	}
	start := time.Now()
	p := r.plan(ctx, &set, owned.Items)
	planned := time.Now()
	writes := r.apply(ctx, &set, p)
	written := time.Now()
	if p.genErr == nil && isRolling(&set) {
		p.rollout = r.rollout(ctx, &set, p)
	}
	err := r.writeStatus(ctx, &set, p)
	if writes > 0 || err != nil {
		attrs := []slog.Attr{slog.String("applicationset", req.String()), slog.Int("elements", len(p.steps)), slog.Int("writes", writes),
			slog.Duration("generate", planned.Sub(start)), slog.Duration("write", written.Sub(planned)), slog.Duration("status", time.Since(written))}
		if err != nil {
			attrs = append(attrs, slog.String("status_err", err.Error()))
		}
		r.log.LogAttrs(ctx, slog.LevelInfo, "ApplicationSet generated", attrs...)
	}
	if err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: time.Second}, nil // written meanwhile: generate again
		}
		return ctrl.Result{}, err
	}
	if refresh {
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+RefreshAnnotation+`":null}}}`))
		if err := r.client.Patch(ctx, &set, patch); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	every := requeueAfter(&set)
	r.gens.generated(&set, clusters, apps, p.ok(), every)
	return ctrl.Result{RequeueAfter: every}, nil
}

// invalidateRevisions makes the repository service resolve the branches
// and tags of the set's git generators again (a push was reported).
func (r *Reconciler) invalidateRevisions(set *v1alpha1.ApplicationSet) {
	inv, ok := r.opts.Repo.(interface{ InvalidateRevision(repoURL string) })
	if !ok {
		return
	}
	for _, g := range gitGenerators(set.Spec.Generators) {
		inv.InvalidateRevision(g.RepoURL)
	}
}

// ok reports whether the plan generated and wrote everything.
func (p *plan) ok() bool {
	return p.genErr == nil && !slices.ContainsFunc(p.steps, func(s *step) bool { return s.entry.Action == v1alpha1.ApplicationSetFailed })
}

// step is what to do with one Application.
type step struct {
	entry v1alpha1.ApplicationSetGeneratedApp
	// write is the Application to create (existing nil) or update; nil
	// writes nothing.
	write    *v1alpha1.Application
	existing *v1alpha1.Application
	// remove deletes existing.
	remove bool
}

// plan is one generation of a set, compared with the Applications the
// set owns.
type plan struct {
	// genErr fails the whole generation: nothing is written.
	genErr error
	steps  []*step
	owned  []v1alpha1.Application
	// rollout is each Application's RollingSync progress (RollingSync
	// only).
	rollout []v1alpha1.ApplicationSetApplicationStatus
}

// plan generates the set's Applications and decides, for each, what to
// write, within the set's policy and the projects' rules.
func (r *Reconciler) plan(ctx context.Context, set *v1alpha1.ApplicationSet, owned []v1alpha1.Application) *plan {
	p := &plan{owned: owned}
	if st := set.Spec.Strategy; st != nil && st.Type != "" && st.Type != "AllAtOnce" && st.Type != rollingSync {
		p.genErr = fmt.Errorf("strategy %q: want AllAtOnce or %s", st.Type, rollingSync)
		return p
	}
	rolling := isRolling(set)
	if rolling {
		if _, err := rolloutSteps(set); err != nil {
			p.genErr = err
			return p
		}
	}
	results, err := Generate(set, r.sources(ctx, set))
	if err != nil {
		p.genErr = err
		return p
	}
	byName := make(map[string]*v1alpha1.Application, len(owned))
	for i := range owned {
		byName[owned[i].Name] = &owned[i]
	}
	policy := applicationsSync(set)
	projects := projectRules{r: r, ctx: ctx, rules: map[string]*project.Rules{}}
	ignore, ignoreErr := newIgnorer(set.Spec.IgnoreApplicationDifferences)
	generated := map[string]bool{}
	failed := false
	for _, res := range results {
		s := &step{entry: v1alpha1.ApplicationSetGeneratedApp{Generator: res.Generator, Params: paramsJSON(res.Params)}}
		p.steps = append(p.steps, s)
		if res.Err != nil {
			failed = true
			s.entry.Action, s.entry.Message = v1alpha1.ApplicationSetFailed, res.Err.Error()
			continue
		}
		app := res.App
		s.entry.Name = app.Name
		generated[app.Name] = true
		if err := r.admit(set, app, &projects); err != nil {
			failed = true
			s.entry.Action, s.entry.Message = v1alpha1.ApplicationSetFailed, err.Error()
			continue
		}
		if rolling && app.Spec.SyncPolicy != nil {
			app.Spec.SyncPolicy.Automated = nil // the rollout syncs
		}
		existing := byName[app.Name]
		if existing == nil {
			if taken, err := r.exists(ctx, app); taken || err != nil {
				s.entry.Action, s.entry.Message = v1alpha1.ApplicationSetFailed, "an Application of this name exists and is not this ApplicationSet's"
				if err != nil {
					s.entry.Message = err.Error()
				}
				continue
			}
			s.write = app
			s.entry.Action, s.entry.Message = v1alpha1.ApplicationSetCreated, "generated, and no Application of this name existed"
			continue
		}
		s.existing = existing
		if ignoreErr != nil {
			s.entry.Action, s.entry.Message = v1alpha1.ApplicationSetFailed, ignoreErr.Error()
			continue
		}
		want, err := updated(existing, app, set, ignore)
		if err != nil {
			s.entry.Action, s.entry.Message = v1alpha1.ApplicationSetFailed, err.Error()
			continue
		}
		switch {
		case want == nil:
			s.entry.Action, s.entry.Message = v1alpha1.ApplicationSetUnchanged, "the Application is as generated"
		case existing.DeletionTimestamp != nil:
			s.entry.Action, s.entry.Message = v1alpha1.ApplicationSetSkipped, "the Application is being deleted"
		case policy == v1alpha1.ApplicationsSyncCreateOnly || policy == v1alpha1.ApplicationsSyncCreateDelete:
			s.entry.Action, s.entry.Message = v1alpha1.ApplicationSetSkipped, "the Application differs from the template; applicationsSync "+policy+" does not update Applications"
		default:
			s.write, s.entry.Action, s.entry.Message = want, v1alpha1.ApplicationSetUpdated, "the Application differed from the template"
		}
	}
	for i := range owned {
		app := &owned[i]
		if generated[app.Name] {
			continue
		}
		s := &step{existing: app, entry: v1alpha1.ApplicationSetGeneratedApp{Name: app.Name, Generator: -1}}
		p.steps = append(p.steps, s)
		switch {
		case policy == v1alpha1.ApplicationsSyncCreateOnly || policy == v1alpha1.ApplicationsSyncCreateUpdate:
			s.entry.Action, s.entry.Message = v1alpha1.ApplicationSetKept, "no longer generated; applicationsSync "+policy+" does not delete Applications"
		case failed:
			s.entry.Action, s.entry.Message = v1alpha1.ApplicationSetKept, "no longer generated, but kept while an element fails: it may be the one that would generate it"
		case app.DeletionTimestamp != nil:
			s.entry.Action, s.entry.Message = v1alpha1.ApplicationSetDeleted, "no longer generated; being deleted"
		default:
			s.remove = true
			s.entry.Action, s.entry.Message = v1alpha1.ApplicationSetDeleted, "no longer generated by any element"
		}
	}
	return p
}

// exists reports whether an Application named as app exists (one the set
// does not own: the set never takes another's over).
func (r *Reconciler) exists(ctx context.Context, app *v1alpha1.Application) (bool, error) {
	err := r.client.Get(ctx, client.ObjectKeyFromObject(app), &v1alpha1.Application{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// sources are what the generators of set read outside it.
func (r *Reconciler) sources(ctx context.Context, set *v1alpha1.ApplicationSet) Sources {
	reader := r.opts.APIReader
	if reader == nil {
		reader = r.client
	}
	return controllerSources{
		KubeSources: KubeSources{Ctx: ctx, Client: r.client, Reader: reader, Namespace: r.opts.Namespace, Set: set,
			HTTP: r.http, Insecure: r.insecure, Forges: r.opts.Forges},
		r: r, credentials: set.Namespace == r.opts.Namespace,
	}
}

// admit completes a generated Application and checks it: it lives in the
// set's namespace, is controlled by the set, and its project exists and
// allows its namespace, sources and destination.
func (r *Reconciler) admit(set *v1alpha1.ApplicationSet, app *v1alpha1.Application, projects *projectRules) error {
	if app.Namespace != set.Namespace {
		return fmt.Errorf("the template's namespace %q is not the ApplicationSet's: a set creates Applications in its own namespace (%s)", app.Namespace, set.Namespace)
	}
	if !r.opts.AppNamespaces.Allowed(app.Namespace) {
		return fmt.Errorf("namespace %s is not one graphcd reconciles Applications in", app.Namespace)
	}
	app.OwnerReferences = []metav1.OwnerReference{ownerRef(set)}
	if set.Spec.SyncPolicy != nil && set.Spec.SyncPolicy.PreserveResourcesOnDeletion {
		app.Finalizers = slices.DeleteFunc(app.Finalizers, isResourcesFinalizer)
	}
	rules, err := projects.get(app.ProjectName())
	if err != nil {
		return err
	}
	if err := rules.AppNamespaceAllowed(app.Namespace, r.opts.Namespace); err != nil {
		return err
	}
	dest := project.Cluster{Server: app.Spec.Destination.Server, Name: app.Spec.Destination.Name}
	if r.opts.Clusters != nil {
		c, err := r.opts.Clusters.Resolve(app.Spec.Destination)
		if err != nil {
			return fmt.Errorf("destination: %w", err)
		}
		dest = project.Cluster{Server: c.Server, Name: c.Name, Project: c.Project}
	}
	return rules.AppAllowed(&app.Spec, dest)
}

// projectRules compiles each project once per generation.
type projectRules struct {
	r     *Reconciler
	ctx   context.Context
	rules map[string]*project.Rules
	errs  map[string]error
}

func (p *projectRules) get(name string) (*project.Rules, error) {
	if r, ok := p.rules[name]; ok {
		return r, nil
	}
	if err, ok := p.errs[name]; ok {
		return nil, err
	}
	var proj v1alpha1.AppProject
	err := p.r.client.Get(p.ctx, types.NamespacedName{Namespace: p.r.opts.Namespace, Name: name}, &proj)
	var rules *project.Rules
	switch {
	case apierrors.IsNotFound(err):
		err = fmt.Errorf("project %s does not exist", name)
	case err != nil:
		err = fmt.Errorf("read project %s: %w", name, err)
	default:
		rules, err = project.Compile(&proj)
	}
	if err != nil {
		if p.errs == nil {
			p.errs = map[string]error{}
		}
		p.errs[name] = err
		return nil, err
	}
	p.rules[name] = rules
	return rules, nil
}

// apply makes the plan's writes, a few at once, and returns how many it
// tried; a failed write turns its step into a failure with the API
// server's reason. One Event on the set sums the writes up.
func (r *Reconciler) apply(ctx context.Context, set *v1alpha1.ApplicationSet, p *plan) int {
	if p.genErr != nil {
		return 0
	}
	tried := 0
	var g errgroup.Group
	g.SetLimit(writers)
	var mu sync.Mutex
	done := map[string][]string{}
	finish := func(s *step, verb, name string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			s.entry.Action, s.entry.Message = v1alpha1.ApplicationSetFailed, fmt.Sprintf("%s: %v", verb, err)
			return
		}
		done[verb] = append(done[verb], name)
	}
	for _, s := range p.steps {
		if s.write != nil || s.remove {
			tried++
		}
		switch {
		case s.write != nil && s.existing == nil:
			g.Go(func() error {
				err := r.client.Create(ctx, s.write)
				if apierrors.IsAlreadyExists(err) {
					if r.controls(ctx, set, s.write) {
						// An earlier generation created it; the cache has not
						// seen it yet.
						s.entry.Action, s.entry.Message = v1alpha1.ApplicationSetUnchanged, "created by an earlier generation"
						return nil
					}
					err = errors.New("an Application of this name exists and is not this ApplicationSet's")
				}
				finish(s, "create", s.write.Name, err)
				return nil
			})
		case s.write != nil:
			g.Go(func() error {
				finish(s, "update", s.write.Name, r.client.Update(ctx, s.write))
				return nil
			})
		case s.remove:
			g.Go(func() error {
				finish(s, "delete", s.existing.Name, r.remove(ctx, set, s.existing))
				return nil
			})
		}
	}
	_ = g.Wait()
	if len(done) > 0 {
		r.event(set, "Generated", "%s", writesNote(done))
	}
	return tried
}

// controls reports whether the Application named as app, read from the
// API server, is the set's.
func (r *Reconciler) controls(ctx context.Context, set *v1alpha1.ApplicationSet, app *v1alpha1.Application) bool {
	reader := client.Reader(r.client)
	if r.opts.APIReader != nil {
		reader = r.opts.APIReader
	}
	var cur v1alpha1.Application
	if err := reader.Get(ctx, client.ObjectKeyFromObject(app), &cur); err != nil {
		return false
	}
	ref := metav1.GetControllerOf(&cur)
	return ref != nil && ref.UID == set.UID
}

// writesNote sums writes up: "created 3 Applications (a, b, c); deleted 1
// (d)", naming at most five per verb.
func writesNote(done map[string][]string) string {
	var parts []string
	for _, verb := range []string{"create", "update", "delete"} {
		names := done[verb]
		if len(names) == 0 {
			continue
		}
		slices.Sort(names)
		shown := strings.Join(names[:min(len(names), 5)], ", ")
		if len(names) > 5 {
			shown += ", ..."
		}
		parts = append(parts, fmt.Sprintf("%sd %d (%s)", verb, len(names), shown))
	}
	return "Applications " + strings.Join(parts, "; ")
}

// remove deletes an Application the set no longer generates; with
// preserveResourcesOnDeletion its resources finalizers go first, so its
// resources stay.
func (r *Reconciler) remove(ctx context.Context, set *v1alpha1.ApplicationSet, app *v1alpha1.Application) error {
	if set.Spec.SyncPolicy != nil && set.Spec.SyncPolicy.PreserveResourcesOnDeletion && slices.ContainsFunc(app.Finalizers, isResourcesFinalizer) {
		app = app.DeepCopy()
		app.Finalizers = slices.DeleteFunc(app.Finalizers, isResourcesFinalizer)
		if err := r.client.Update(ctx, app); err != nil {
			return err
		}
	}
	err := r.client.Delete(ctx, app, client.Preconditions{UID: &app.UID})
	return client.IgnoreNotFound(err)
}

func (r *Reconciler) event(set *v1alpha1.ApplicationSet, reason, format string, args ...any) {
	if r.opts.Recorder != nil {
		r.opts.Recorder.Eventf(set, nil, corev1.EventTypeNormal, reason, reason, format, args...)
	}
}

// applicationsSync is the set's policy; "sync" (everything) by default.
func applicationsSync(set *v1alpha1.ApplicationSet) string {
	if sp := set.Spec.SyncPolicy; sp != nil && sp.ApplicationsSync != nil && *sp.ApplicationsSync != "" {
		return *sp.ApplicationsSync
	}
	return v1alpha1.ApplicationsSyncSync
}

func ownerRef(set *v1alpha1.ApplicationSet) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{
		APIVersion: v1alpha1.GroupVersion.String(), Kind: "ApplicationSet",
		Name: set.Name, UID: set.UID, Controller: &yes, BlockOwnerDeletion: &yes,
	}
}

func isResourcesFinalizer(f string) bool {
	return f == v1alpha1.ResourcesFinalizer || strings.HasPrefix(f, v1alpha1.ArgoResourcesFinalizer)
}

// usesClusters reports whether a generator reads the clusters, at any
// depth.
func usesClusters(gens []v1alpha1.ApplicationSetGenerator) bool {
	return slices.ContainsFunc(leafGenerators(gens), func(g v1alpha1.ApplicationSetNestedGenerator) bool {
		return g.Clusters != nil || g.ClusterDecisionResource != nil
	})
}

// controllerSources give the generators of one set the registered
// clusters and the repositories, and what KubeSources read.
type controllerSources struct {
	KubeSources
	r *Reconciler
	// credentials: the set is in graphcd's namespace; the git generators
	// of sets in other namespaces read without credentials (public
	// repositories only). See GitMatch.
	credentials bool
}

func (s controllerSources) Clusters() ([]Cluster, error) {
	if s.r.opts.Clusters == nil {
		return nil, errNoClusters
	}
	list := s.r.opts.Clusters.List()
	out := make([]Cluster, len(list))
	for i, c := range list {
		out[i] = Cluster{Name: c.Name, Server: c.Server, Project: c.Project, Labels: c.Labels, Annotations: c.Annotations}
	}
	return out, nil
}

// GitMatch reads through the repository service. It uses credentials
// only where every Application the set may generate could read the
// repository anyway: the set is in graphcd's namespace (see credentials),
// its projects are named as they are (SetProjects), and each permits
// repoURL as a source; then with the credentials those projects' apps
// get (the one project's, or those that serve no project). Otherwise it
// reads without credentials, so a set cannot read through graphcd what
// its projects may not deploy from.
func (s controllerSources) GitMatch(repoURL, revision string, req gittree.Request) (*gittree.Result, error) {
	if s.r.opts.Repo == nil {
		return nil, errNoGit
	}
	repo := reposerver.Repository{URL: repoURL}
	if project, ok := s.credentialsProject(repoURL); ok && s.r.opts.RepoFor != nil {
		var err error
		if repo, err = s.r.opts.RepoFor(s.Ctx, repoURL, project); err != nil {
			return nil, err
		}
	}
	return s.r.opts.Repo.MatchTree(s.Ctx, repo, revision, req)
}

// credentialsProject says whether the set may read repoURL with
// credentials, and on behalf of which project (see CredentialsProject).
func (s controllerSources) credentialsProject(repoURL string) (string, bool) {
	if !s.credentials {
		return "", false
	}
	return CredentialsProject(s.Set, repoURL, func(name string) (*v1alpha1.AppProject, error) {
		var proj v1alpha1.AppProject
		err := s.r.client.Get(s.Ctx, types.NamespacedName{Namespace: s.r.opts.Namespace, Name: name}, &proj)
		return &proj, err
	})
}

// CredentialsProject says whether a git generator of set may read
// repoURL with credentials — when the projects of its templates are named
// as they are (SetProjects) and each permits repoURL as a source — and on
// behalf of which project: the one, or "" (Secrets that serve no
// project) for several. getProject reads a project; an error refuses.
// The caller also checks that the set is in graphcd's namespace.
func CredentialsProject(set *v1alpha1.ApplicationSet, repoURL string, getProject func(name string) (*v1alpha1.AppProject, error)) (string, bool) {
	projects, templated := SetProjects(set)
	if templated {
		return "", false
	}
	for _, name := range projects {
		proj, err := getProject(name)
		if err != nil || proj == nil || project.SourceAllowed(proj, repoURL) != nil {
			return "", false
		}
	}
	if len(projects) == 1 {
		return projects[0], true
	}
	return "", true
}
