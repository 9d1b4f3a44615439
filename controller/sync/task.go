package sync

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Phase is a step of a sync. Tasks run phase by phase: PreSync, Sync,
// PostSync; SyncFail only after a failure. PreDelete and PostDelete belong
// to the deletion of an application, never to a sync.
type Phase string

// The phases, in the order they run.
const (
	PhasePreSync    Phase = "PreSync"
	PhaseSync       Phase = "Sync"
	PhasePostSync   Phase = "PostSync"
	PhaseSyncFail   Phase = "SyncFail"
	PhasePreDelete  Phase = "PreDelete"
	PhasePostDelete Phase = "PostDelete"
)

// phaseRank orders phases; SyncFail sorts after PostSync so that a list
// holding every task still reads in the order Argo CD reports it.
var phaseRank = map[Phase]int{
	PhasePreSync: 0, PhaseSync: 1, PhasePostSync: 2, PhaseSyncFail: 3,
	PhasePreDelete: 4, PhasePostDelete: 5,
}

// HookType is the value of the argocd.argoproj.io/hook annotation (or the
// Argo CD equivalent of a helm.sh/hook value).
type HookType string

// The hook types. A Task's HookType is its phase for hooks and empty for
// plain resources; Skip never reaches a Task.
const (
	HookPreSync    HookType = "PreSync"
	HookSync       HookType = "Sync"
	HookPostSync   HookType = "PostSync"
	HookSyncFail   HookType = "SyncFail"
	HookSkip       HookType = "Skip"
	HookPreDelete  HookType = "PreDelete"
	HookPostDelete HookType = "PostDelete"
)

// DeletePolicy says when a hook's object is deleted, from
// argocd.argoproj.io/hook-delete-policy or helm.sh/hook-delete-policy.
type DeletePolicy string

// The delete policies. A hook without one gets BeforeHookCreation.
const (
	// DeleteBeforeHookCreation deletes the object left by an earlier sync
	// before the hook is created again.
	DeleteBeforeHookCreation DeletePolicy = "BeforeHookCreation"
	// DeleteHookSucceeded deletes the hook once it succeeded.
	DeleteHookSucceeded DeletePolicy = "HookSucceeded"
	// DeleteHookFailed deletes the hook once it failed.
	DeleteHookFailed DeletePolicy = "HookFailed"
	// DeleteNever keeps the hook's object: it is applied, never deleted.
	DeleteNever DeletePolicy = "Never"
)

// Task is one step of a sync: apply a desired object, run a hook, or
// prune a live object.
type Task struct {
	// Phase is the phase the task runs in.
	Phase Phase
	// Wave is the wave within the phase, lower first. For prune tasks it
	// is the wave they run in, which is not the wave of their annotation
	// (see the package documentation).
	Wave int
	// Group, Version and Kind identify the object's type; Group is empty
	// for the core group.
	Group, Version, Kind string
	// Namespace is empty for cluster-scoped objects.
	Namespace string
	// Name is empty for a hook that has only metadata.generateName: the
	// executor names it when it creates it.
	Name string
	// GenerateName is the object's metadata.generateName, if any.
	GenerateName string
	// HookType is empty for a plain resource and the phase for a hook.
	HookType HookType
	// DeletePolicies are a hook's delete policies, in the order of the
	// constants; empty for plain resources.
	DeletePolicies []DeletePolicy
	// Prune is true when the task deletes a live object that is no longer
	// desired.
	Prune bool
	// PruneLast is true for a prune task moved to the final wave by the
	// PruneLast option.
	PruneLast bool
	// PruneSkipped, for a prune task, is why it must not delete: pruning
	// is off for this sync, or the object has Prune=false. The executor
	// records the task as PruneSkipped with this message.
	PruneSkipped string
	// AwaitsConfirmation, for a prune task of an object with
	// Prune=confirm, holds the sync before the prune until the
	// application's deletion-approved annotation approves it.
	AwaitsConfirmation bool
	// CreatesNamespace is true for the Namespace task that the
	// CreateNamespace option adds for the destination namespace.
	CreatesNamespace bool
	// Desired is the object to apply; nil for a prune task. It is the
	// input object, or a copy when the planner filled in its namespace.
	// The planner never modifies its inputs.
	Desired *unstructured.Unstructured
	// Live is the live object, or nil when there is none.
	Live *unstructured.Unstructured
	// SyncOptions are the options in effect for this object: the
	// application's, overridden by the object's own annotation (the live
	// object's for a prune task).
	SyncOptions SyncOptions
}

// IsHook reports whether the task runs a hook.
func (t *Task) IsHook() bool { return t.HookType != "" }

// Key identifies the task's object; its Name is empty for a hook with
// generateName.
func (t *Task) Key() Key {
	return Key{Group: t.Group, Kind: t.Kind, Namespace: t.Namespace, Name: t.Name}
}

// Ref names the task's object as "Kind namespace/name", with the
// generateName followed by "*" when there is no name.
func (t *Task) Ref() string {
	name := t.Name
	if name == "" && t.GenerateName != "" {
		name = t.GenerateName + "*"
	}
	return Key{Kind: t.Kind, Namespace: t.Namespace, Name: name}.String()
}

// Key identifies an object among the desired and live ones: API group
// (not version), kind, namespace and name.
type Key struct {
	Group, Kind, Namespace, Name string
}

// KeyOf returns obj's key as written in the object.
func KeyOf(obj *unstructured.Unstructured) Key {
	gvk := obj.GroupVersionKind()
	return Key{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// String is "Kind namespace/name", or "Kind name" when cluster-scoped.
func (k Key) String() string {
	kind := k.Kind
	if kind == "" {
		kind = "(no kind)"
	}
	name := k.Name
	if name == "" {
		name = "(no name)"
	}
	if k.Namespace == "" {
		return kind + " " + name
	}
	return kind + " " + k.Namespace + "/" + name
}

// Plan is the ordered list of a sync's tasks.
//
// A plan with Errors must not be run: like Argo CD, which fails a sync
// when one of its tasks is invalid, graphcd runs nothing rather than a
// part of the application. The tasks of the valid resources are still
// listed, so that every problem and the rest of the order can be seen at
// once.
type Plan struct {
	// Tasks are the PreSync, Sync and PostSync tasks in execution order.
	// Tasks of the same phase and wave run together.
	Tasks []Task
	// SyncFail are the SyncFail hooks, in order, to run only when the
	// sync fails.
	SyncFail []Task
	// DeletionHooks are the PreDelete and PostDelete hooks, in order.
	// They run when the application is deleted, never during a sync.
	DeletionHooks []Task
	// Errors are the problems found in the resources, one per problem,
	// in input order (desired objects first, then live ones).
	Errors []*ResourceError
	// Warnings are settings that have no effect, such as an
	// application-only sync option in a resource's annotation.
	Warnings []*ResourceError
}

// Err returns nil when the plan may run, or an error joining Errors.
func (p *Plan) Err() error {
	if len(p.Errors) == 0 {
		return nil
	}
	errs := make([]error, len(p.Errors))
	for i, e := range p.Errors {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// ResourceError is a problem with one resource.
type ResourceError struct {
	// Ref names the resource: "Kind namespace/name".
	Ref string
	// Key and Version identify the resource as far as its manifest
	// says; they are zero for an object too broken to name (nil, say).
	Key     Key
	Version string
	// Live is true when the problem is on the live object of a resource
	// that is no longer desired.
	Live bool
	// Err is the problem.
	Err error
}

func (e *ResourceError) Error() string {
	if e.Live {
		return fmt.Sprintf("%s (live object): %v", e.Ref, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Ref, e.Err)
}

func (e *ResourceError) Unwrap() error { return e.Err }
