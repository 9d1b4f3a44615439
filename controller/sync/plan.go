package sync

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Options are the settings of one sync that shape its plan.
type Options struct {
	// Namespace is the application's destination namespace. Desired
	// objects without a namespace get it, unless their type is
	// cluster-scoped; CreateNamespace creates it.
	Namespace string
	// Prune lets the sync delete live objects that are no longer desired.
	// Without it their tasks are still planned, with PruneSkipped set.
	Prune bool
	// SyncOptions are the application's sync options in Argo CD's
	// "Name=value" form: spec.syncPolicy.syncOptions followed by the
	// operation's.
	SyncOptions []string
	// ManagedNamespaceMetadata are labels and annotations for the
	// namespace CreateNamespace creates.
	ManagedNamespaceMetadata *v1alpha1.ManagedNamespaceMetadata
	// Resources, when not empty, makes this a selective sync of these
	// resources only (an empty Namespace matches any namespace). Hooks
	// do not run in a selective sync.
	Resources []v1alpha1.SyncOperationResource
	// OutOfSync reports whether a resource differs from its live object,
	// for ApplyOutOfSyncOnly. The key carries the namespace the planner
	// resolved. Nil counts every resource as out of sync.
	OutOfSync func(Key) bool
	// SkipHooks leaves out every sync hook.
	SkipHooks bool
	// PruneApproved approves pruning the objects with Prune=confirm: the
	// application's deletion-approved annotation is newer than the sync
	// (see DeletionApproved).
	PruneApproved bool
	// ClusterScoped reports whether a type is cluster-scoped, typically
	// from API discovery. Nil uses a table of the built-in types, and
	// counts every other type as namespaced.
	ClusterScoped func(group, kind string) bool
}

// Messages of prune tasks that must not delete, as Argo CD words them.
const (
	PruneSkippedDisabled = "ignored (requires pruning)"
	PruneSkippedNoPrune  = "ignored (no prune)"
)

// Build plans a sync of the desired objects (rendered from Git) against
// the live objects the application owns in the cluster. It reads only
// its inputs and never modifies them.
//
// The error is for bad Options (an unknown application sync option);
// problems with single resources are in Plan.Errors, all of them at once.
func Build(desired, live []*unstructured.Unstructured, opts Options) (*Plan, error) {
	app, err := ParseSyncOptions(opts.SyncOptions)
	if err != nil {
		return nil, fmt.Errorf("application sync options: %w", err)
	}
	b := &builder{
		opts: opts, app: app, plan: &Plan{},
		live: make(map[Key]int, len(live)), used: make([]bool, len(live)),
		desired: make(map[Key]bool, len(desired)),
	}
	if b.opts.ClusterScoped == nil {
		b.opts.ClusterScoped = BuiltinClusterScoped
	}
	for i, obj := range live {
		if obj != nil && obj.GetName() != "" {
			b.live[KeyOf(obj)] = i
		}
	}
	for i, obj := range desired {
		b.addDesired(i, obj, live)
	}
	b.addNamespace(live)
	for i, obj := range live {
		if !b.used[i] && obj != nil {
			b.addPrune(obj)
		}
	}
	return b.finish(), nil
}

type builder struct {
	opts Options
	app  SyncOptions
	plan *Plan
	// live indexes the live objects by key; used marks those a desired
	// object claims (so they are not pruned).
	live map[Key]int
	used []bool
	// desired holds the keys of the named desired objects, for duplicates.
	desired map[Key]bool
	tasks   []*Task
	// namespaceDesired is true when a desired object is the destination
	// Namespace (then CreateNamespace adds nothing).
	namespaceDesired bool
}

// fail records errs against the resource id (named by ref); live is true
// for the live object of a resource that is no longer desired.
func (b *builder) fail(id *Task, ref string, live bool, errs ...error) {
	for _, err := range errs {
		b.plan.Errors = append(b.plan.Errors, resourceError(id, ref, live, err))
	}
}

func (b *builder) warn(id *Task, ref string, errs ...error) {
	for _, err := range errs {
		b.plan.Warnings = append(b.plan.Warnings, resourceError(id, ref, false, err))
	}
}

// resourceError is err about the resource id, which is nil when the
// object has no identity at all.
func resourceError(id *Task, ref string, live bool, err error) *ResourceError {
	e := &ResourceError{Ref: ref, Live: live, Err: err}
	if id != nil {
		e.Key, e.Version = id.Key(), id.Version
	}
	return e
}

func (b *builder) addDesired(i int, obj *unstructured.Unstructured, live []*unstructured.Unstructured) {
	if obj == nil {
		b.fail(nil, fmt.Sprintf("desired object %d", i+1), false, fmt.Errorf("object is nil"))
		return
	}
	id, errs := identify(obj)
	if id.Namespace == "" && id.Kind != "" {
		if placed := DefaultNamespace(obj, b.opts.Namespace, b.opts.ClusterScoped); placed != obj {
			obj, id.Namespace = placed, b.opts.Namespace
		}
	}
	ref := id.Ref()
	in := inspect(obj, b.app)
	errs = append(errs, in.errs...)
	if id.Name == "" && id.GenerateName != "" && !in.hookObject && in.leftOut == "" {
		errs = append(errs, fmt.Errorf("metadata.generateName is only for hooks: set metadata.name"))
	}
	key := id.Key()
	if id.Name != "" {
		if b.desired[key] {
			errs = append(errs, fmt.Errorf("appears more than once in the desired manifests"))
		}
		b.desired[key] = true
		if key.Group == "" && key.Kind == "Namespace" && key.Name == b.opts.Namespace {
			b.namespaceDesired = true
		}
	}
	var liveObj *unstructured.Unstructured
	if j, ok := b.liveIndex(key); ok {
		b.used[j], liveObj = true, live[j]
	}
	b.fail(&id, ref, false, errs...)
	b.warn(&id, ref, in.warnings...)
	if len(errs) > 0 || in.leftOut != "" {
		return
	}
	if !in.hook {
		if b.selected(key) {
			b.add(id, PhaseSync, "", in, obj, liveObj)
		}
		return
	}
	for _, phase := range in.phases {
		deletion := phase == PhasePreDelete || phase == PhasePostDelete
		if !deletion && (b.opts.SkipHooks || len(b.opts.Resources) > 0) {
			continue
		}
		b.add(id, phase, HookType(phase), in, obj, liveObj)
	}
}

func (b *builder) add(id Task, phase Phase, hook HookType, in inspection, desired, live *unstructured.Unstructured) {
	t := id
	t.Phase, t.Wave, t.HookType = phase, in.wave, hook
	t.DeletePolicies = slices.Clone(in.policies)
	t.Desired, t.Live, t.SyncOptions = desired, live, in.options
	b.tasks = append(b.tasks, &t)
}

// liveIndex finds the live object for key; a cluster-scoped live object
// matches whatever namespace the desired one names.
func (b *builder) liveIndex(key Key) (int, bool) {
	if key.Name == "" {
		return 0, false
	}
	if j, ok := b.live[key]; ok {
		return j, true
	}
	key.Namespace = ""
	j, ok := b.live[key]
	return j, ok
}

// selected reports whether a selective sync includes key.
func (b *builder) selected(key Key) bool {
	if len(b.opts.Resources) == 0 {
		return true
	}
	return slices.ContainsFunc(b.opts.Resources, func(r v1alpha1.SyncOperationResource) bool {
		return r.Group == key.Group && r.Kind == key.Kind && r.Name == key.Name &&
			(r.Namespace == "" || r.Namespace == key.Namespace)
	})
}

// addNamespace adds the CreateNamespace task for the destination
// namespace, unless a desired object is that Namespace.
func (b *builder) addNamespace(live []*unstructured.Unstructured) {
	if !b.app.CreateNamespace || b.opts.Namespace == "" || b.namespaceDesired {
		return
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
	ns.SetName(b.opts.Namespace)
	if m := b.opts.ManagedNamespaceMetadata; m != nil {
		if len(m.Labels) > 0 {
			ns.SetLabels(m.Labels)
		}
		if len(m.Annotations) > 0 {
			ns.SetAnnotations(m.Annotations)
		}
	}
	t := &Task{
		Phase: PhasePreSync, Version: "v1", Kind: "Namespace", Name: b.opts.Namespace,
		CreatesNamespace: true, Desired: ns, SyncOptions: b.app,
	}
	if j, ok := b.liveIndex(t.Key()); ok {
		b.used[j], t.Live = true, live[j]
	}
	b.tasks = append(b.tasks, t)
}

// addPrune plans the deletion of a live object no desired object claims.
// Hooks are never pruned. The object's own annotations (its wave,
// PruneLast, Prune=false) decide how.
func (b *builder) addPrune(obj *unstructured.Unstructured) {
	id, errs := identify(obj)
	if id.Name == "" || !b.selected(id.Key()) {
		return
	}
	in := inspect(obj, b.app)
	if in.hookObject {
		return
	}
	ref := id.Ref()
	if errs = append(errs, in.errs...); len(errs) > 0 {
		b.fail(&id, ref, true, errs...)
		return
	}
	t := id
	t.Phase, t.Wave, t.Prune, t.Live, t.SyncOptions = PhaseSync, in.wave, true, obj, in.options
	switch {
	case !b.opts.Prune:
		t.PruneSkipped = PruneSkippedDisabled
	case in.options.Prune == Deny:
		t.PruneSkipped = PruneSkippedNoPrune
	case in.options.Prune == Confirm && !b.opts.PruneApproved:
		t.AwaitsConfirmation = true
	}
	b.tasks = append(b.tasks, &t)
}

// finish orders the tasks, applies ApplyOutOfSyncOnly and splits them.
func (b *builder) finish() *Plan {
	var nsTask *Task
	var deletion []*Task
	tasks := slices.DeleteFunc(b.tasks, func(t *Task) bool {
		switch {
		case t.CreatesNamespace:
			nsTask = t
		case t.Phase == PhasePreDelete || t.Phase == PhasePostDelete:
			deletion = append(deletion, t)
		default:
			return false
		}
		return true
	})
	setPruneWaves(tasks)
	order(tasks)
	slices.SortStableFunc(deletion, compareTasks)
	for _, t := range deletion {
		b.plan.DeletionHooks = append(b.plan.DeletionHooks, *t)
	}
	if nsTask != nil {
		// The destination namespace is created before anything else,
		// in the first wave of PreSync.
		if len(tasks) > 0 && tasks[0].Phase == PhasePreSync {
			nsTask.Wave = min(0, tasks[0].Wave)
		}
		tasks = slices.Insert(tasks, 0, nsTask)
	}
	b.plan.Tasks = make([]Task, 0, len(tasks))
	for _, t := range tasks {
		switch {
		case b.upToDate(t):
		case t.Phase == PhaseSyncFail:
			b.plan.SyncFail = append(b.plan.SyncFail, *t)
		default:
			b.plan.Tasks = append(b.plan.Tasks, *t)
		}
	}
	return b.plan
}

// upToDate reports whether ApplyOutOfSyncOnly leaves t out: a plain
// resource that exists and does not differ. Hooks and prunes always run.
func (b *builder) upToDate(t *Task) bool {
	return t.SyncOptions.ApplyOutOfSyncOnly && b.opts.OutOfSync != nil &&
		!t.IsHook() && !t.Prune && !t.CreatesNamespace && t.Live != nil &&
		!b.opts.OutOfSync(t.Key())
}
