package sync

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/dynamic"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/health"
)

// start runs a task that has no result yet: prune, create a hook or
// apply a resource. It records the outcome, or nothing when the task
// must wait (a hook whose previous object is still being deleted). The
// error is for a read that failed and is worth retrying.
func (s *step) start(ctx context.Context, en *entry) error {
	t := en.task
	switch {
	case t.Prune:
		return s.prune(ctx, en)
	case t.IsHook():
		return s.startHook(ctx, en)
	}
	name, verb, err := s.apply(ctx, t, false)
	if err != nil {
		s.record(en, name, v1alpha1.ResultCodeSyncFailed, v1alpha1.OperationFailed, err.Error())
		return nil
	}
	s.record(en, name, v1alpha1.ResultCodeSynced, v1alpha1.OperationRunning, describe(t.Group, t.Kind, name)+" "+verb)
	return nil
}

// Labels on every hook object a sync creates. Together they find the
// hook again: a controller that created a hook and stopped before it
// saved the operation's state adopts that object rather than creating
// the hook a second time.
const (
	// LabelOperation holds the operation's Run.ID (a hash of it when the
	// ID is not a valid label value).
	LabelOperation = "graphcd.io/operation"
	// LabelHook identifies the hook within the operation: a hash of its
	// phase, type, namespace and name or generateName.
	LabelHook = "graphcd.io/hook"
)

// hookLabels are the labels that mark t's object as created by the run
// with this ID.
func hookLabels(runID string, t *Task) map[string]string {
	return map[string]string{LabelOperation: OperationLabel(runID), LabelHook: hookKey(t)}
}

// OperationLabel is the LabelOperation value of the hooks of the run with
// this ID: the ID when it is a valid label value, else a hash of it.
func OperationLabel(id string) string {
	if len(validation.IsValidLabelValue(id)) == 0 {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:16])
}

// hookKey is a short, stable identity of t's hook within an operation.
func hookKey(t *Task) string {
	h := fnv.New64a()
	for _, part := range []string{string(t.Phase), string(t.HookType), t.Group, t.Kind, t.Namespace, t.Name, t.GenerateName} {
		_, _ = h.Write([]byte(part))
		_, _ = h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

// ownedBy reports whether obj carries all of the labels want.
func ownedBy(obj *unstructured.Unstructured, want map[string]string) bool {
	have := obj.GetLabels()
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// findHook returns the object this run created earlier for a hook with
// generateName, or nil.
func findHook(ctx context.Context, ri dynamic.ResourceInterface, own map[string]string) (*unstructured.Unstructured, error) {
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(own).String()})
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].GetDeletionTimestamp() == nil {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// startHook creates a hook's object, labelled with the run's identity.
// An object this run created already (before a restart lost the state
// that recorded it) is adopted, not created again. With
// BeforeHookCreation an object of the same name left by an earlier sync
// is deleted first; without it the existing object is applied like a
// resource and followed as the hook.
func (s *step) startHook(ctx context.Context, en *entry) error {
	t := en.task
	ri, err := s.e.resource(taskGVK(t), t.Namespace)
	if err != nil {
		s.record(en, t.Name, v1alpha1.ResultCodeSyncFailed, v1alpha1.OperationFailed, err.Error())
		return nil
	}
	own := hookLabels(s.run.ID, t)
	if t.Name == "" {
		earlier, err := findHook(ctx, ri, own)
		if err != nil {
			return fmt.Errorf("look for hook %s created earlier: %w", t.Ref(), err)
		}
		if earlier != nil {
			s.record(en, earlier.GetName(), v1alpha1.ResultCodeSynced, v1alpha1.OperationRunning, describe(t.Group, t.Kind, earlier.GetName())+" created")
			return nil
		}
	} else {
		live, err := s.e.read(ctx, taskGVK(t), t.Namespace, t.Name, ri)
		if err != nil {
			return fmt.Errorf("read hook %s: %w", t.Ref(), err)
		}
		if live != nil && live.GetDeletionTimestamp() != nil {
			s.st.Message = "waiting for the deletion of hook " + t.Ref() + " from an earlier sync"
			return nil
		}
		if live != nil && ownedBy(live, own) {
			s.record(en, t.Name, v1alpha1.ResultCodeSynced, v1alpha1.OperationRunning, describe(t.Group, t.Kind, t.Name)+" created")
			return nil
		}
		if live != nil && slices.Contains(t.DeletePolicies, DeleteBeforeHookCreation) {
			policy := metav1.DeletePropagationBackground
			uid := live.GetUID()
			err := ri.Delete(ctx, t.Name, metav1.DeleteOptions{PropagationPolicy: &policy, Preconditions: &metav1.Preconditions{UID: &uid}})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete hook %s before creating it: %w", t.Ref(), err)
			}
			s.st.Message = "waiting for the deletion of hook " + t.Ref() + " from an earlier sync"
			return nil
		}
	}
	labelled := *t
	labelled.Desired = t.Desired.DeepCopy()
	lbls := labelled.Desired.GetLabels()
	if lbls == nil {
		lbls = map[string]string{}
	}
	maps.Copy(lbls, own)
	labelled.Desired.SetLabels(lbls)
	name, verb, err := s.apply(ctx, &labelled, false)
	if apierrors.IsAlreadyExists(err) {
		return nil // the earlier object is still going away, or a cache is behind
	}
	if err != nil {
		s.record(en, name, v1alpha1.ResultCodeSyncFailed, v1alpha1.OperationFailed, err.Error())
		return nil
	}
	s.record(en, name, v1alpha1.ResultCodeSynced, v1alpha1.OperationRunning, describe(t.Group, t.Kind, name)+" "+verb)
	return nil
}

// refresh follows a running hook: Healthy (or a kind without health)
// succeeds, Degraded fails, anything else keeps it running. A finished
// hook's delete policy is applied before the result is marked, so a
// failed deletion is retried.
func (s *step) refresh(ctx context.Context, en *entry) error {
	if !s.running(en) {
		return nil
	}
	r := en.result(s)
	ri, err := s.e.resource(schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}, r.Namespace)
	if err != nil {
		return err
	}
	gvk := schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
	live, err := s.e.read(ctx, gvk, r.Namespace, r.Name, ri)
	if err == nil && live == nil && s.e.cfg.Reader != nil {
		live, err = getLive(ctx, ri, r.Name) // a cache may not have seen it yet
	}
	if err != nil {
		return fmt.Errorf("read hook %s: %w", en.ref(s), err)
	}
	if live == nil {
		r.HookPhase, r.Message = v1alpha1.OperationFailed, "hook object was deleted before it finished"
		return nil
	}
	h, err := s.e.cfg.Health.Check(ctx, live)
	if err != nil {
		return fmt.Errorf("health of hook %s: %w", en.ref(s), err)
	}
	var phase v1alpha1.OperationPhase
	var message string
	switch {
	case h == nil:
		phase = v1alpha1.OperationSucceeded
	case h.Status == health.StatusHealthy:
		phase, message = v1alpha1.OperationSucceeded, h.Message
	case h.Status == health.StatusDegraded:
		phase, message = v1alpha1.OperationFailed, h.Message
	default:
		if h.Message != "" {
			r.Message = h.Message
		}
		return nil
	}
	policy := DeleteHookSucceeded
	if phase == v1alpha1.OperationFailed {
		policy = DeleteHookFailed
	}
	if en.task != nil && slices.Contains(en.task.DeletePolicies, policy) {
		if err := s.deleteResult(ctx, r); err != nil {
			return err
		}
	}
	if message == "" {
		message = map[v1alpha1.OperationPhase]string{v1alpha1.OperationSucceeded: "hook succeeded", v1alpha1.OperationFailed: "hook failed"}[phase]
	}
	r.HookPhase, r.Message = phase, message
	return nil
}

// deleteResult deletes the object of a result, with its dependents in
// the background; an object already gone is fine.
func (s *step) deleteResult(ctx context.Context, r *v1alpha1.ResourceResult) error {
	ri, err := s.e.resource(schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}, r.Namespace)
	if err != nil {
		return err
	}
	policy := metav1.DeletePropagationBackground
	err = ri.Delete(ctx, r.Name, metav1.DeleteOptions{PropagationPolicy: &policy})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s: %w", Key{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}, err)
	}
	return nil
}

// groupSettled checks, before the next group starts, that the applied
// resources of g are healthy (or have no health) and its pruned objects
// are gone. It returns what it waits for, or "". fresh reads the API
// server rather than the Reader, for objects applied moments ago.
func (s *step) groupSettled(ctx context.Context, g []*entry, fresh bool) (string, error) {
	for _, en := range g {
		r := en.result(s)
		if r == nil || r.HookType != "" || r.Status == v1alpha1.ResultCodePruneSkipped {
			continue
		}
		if r.Status == v1alpha1.ResultCodePruned && (en.task == nil || en.task.Live == nil) {
			continue // no longer live: gone
		}
		ri, err := s.e.resource(schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}, r.Namespace)
		if err != nil {
			return "", err
		}
		var live *unstructured.Unstructured
		if fresh {
			live, err = getLive(ctx, ri, r.Name)
		} else {
			live, err = s.e.read(ctx, schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}, r.Namespace, r.Name, ri)
		}
		if err != nil {
			return "", fmt.Errorf("read %s: %w", en.ref(s), err)
		}
		if r.Status == v1alpha1.ResultCodePruned {
			if live != nil && live.GetUID() == en.task.Live.GetUID() {
				return "waiting for the deletion of " + en.ref(s), nil
			}
			continue
		}
		if live == nil {
			return "waiting for " + en.ref(s) + " to exist", nil
		}
		h, err := s.e.cfg.Health.Check(ctx, live)
		if err != nil {
			return "", fmt.Errorf("health of %s: %w", en.ref(s), err)
		}
		if h != nil && h.Status != health.StatusHealthy {
			msg := fmt.Sprintf("waiting for healthy state of %s (%s)", en.ref(s), h.Status)
			if h.Message != "" {
				msg += ": " + h.Message
			}
			return msg, nil
		}
	}
	return "", nil
}

// HookRun is a group of hooks run on their own, outside a sync: the
// PreDelete or the PostDelete hooks of an application being deleted. All
// of its hooks run at once.
type HookRun struct {
	// ID names the run, as Run.ID does: the hooks it creates carry it in
	// LabelOperation, and every call finds them again by it.
	ID string
	// Hooks are the hooks to run (Plan.DeletionHooks of one phase).
	Hooks []Task
}

// HookStatus is how a HookRun stands.
type HookStatus struct {
	// Phase is Running while a hook has not finished, then Succeeded when
	// every hook succeeded and Failed when one failed.
	Phase v1alpha1.OperationPhase
	// Message names the hooks waited for, or the ones that failed and why.
	Message string
}

// RunHooks creates the hooks of run that do not exist yet and reports how
// they stand: a hook succeeds when it is Healthy (or its kind has no
// health) and fails when it is Degraded. It keeps no state: called again,
// it finds the hooks it created by their labels, so it is called until
// the phase is no longer Running. It deletes nothing but an object of a
// named hook's name left by something else, when the hook asks for
// BeforeHookCreation; see CleanupHooks for the delete policies.
func (e *Executor) RunHooks(ctx context.Context, run HookRun) (HookStatus, error) {
	s := &step{e: e, run: Run{ID: run.ID}, st: &v1alpha1.OperationState{SyncResult: &v1alpha1.SyncOperationResult{}}}
	var waiting, failed []string
	for i := range run.Hooks {
		t := &run.Hooks[i]
		obj, err := e.ownHook(ctx, run.ID, t)
		if err != nil {
			return HookStatus{}, err
		}
		if obj == nil {
			en := &entry{task: t, res: -1}
			s.st.Message = ""
			if err := s.startHook(ctx, en); err != nil {
				return HookStatus{}, err
			}
			switch r := en.result(s); {
			case r == nil:
				waiting = append(waiting, t.Ref()+" ("+s.st.Message+")")
			case resultFailed(r):
				failed = append(failed, t.Ref()+": "+r.Message)
			default:
				waiting = append(waiting, Key{Kind: t.Kind, Namespace: t.Namespace, Name: r.Name}.String())
			}
			continue
		}
		ref := Key{Kind: t.Kind, Namespace: t.Namespace, Name: obj.GetName()}.String()
		h, err := e.cfg.Health.Check(ctx, obj)
		if err != nil {
			return HookStatus{}, fmt.Errorf("health of hook %s: %w", ref, err)
		}
		switch {
		case h == nil || h.Status == health.StatusHealthy:
		case h.Status == health.StatusDegraded:
			msg := h.Message
			if msg == "" {
				msg = "hook failed"
			}
			failed = append(failed, ref+": "+msg)
		default:
			waiting = append(waiting, ref)
		}
	}
	phase := "hooks"
	if len(run.Hooks) > 0 {
		phase = string(run.Hooks[0].Phase) + " hooks"
	}
	switch {
	case len(waiting) > 0:
		msg := "waiting for completion of " + phase + ": " + strings.Join(waiting, ", ")
		if len(failed) > 0 {
			msg += "; failed: " + strings.Join(failed, "; ")
		}
		return HookStatus{Phase: v1alpha1.OperationRunning, Message: msg}, nil
	case len(failed) > 0:
		return HookStatus{Phase: v1alpha1.OperationFailed, Message: phase + " failed: " + strings.Join(failed, "; ")}, nil
	}
	return HookStatus{Phase: v1alpha1.OperationSucceeded, Message: phase + " succeeded"}, nil
}

// CleanupHooks applies the delete policies of run's hooks once the run
// ended in phase: HookSucceeded deletes a hook after success, HookFailed
// after failure. A hook without a delete-policy annotation is deleted
// after success, as Argo CD does with deletion hooks. Hooks already gone
// are fine, so it may be called again.
func (e *Executor) CleanupHooks(ctx context.Context, run HookRun, phase v1alpha1.OperationPhase) error {
	want := DeleteHookSucceeded
	if phase == v1alpha1.OperationFailed {
		want = DeleteHookFailed
	}
	for i := range run.Hooks {
		t := &run.Hooks[i]
		policies := t.DeletePolicies
		if !explicitDeletePolicy(t.Desired) {
			policies = []DeletePolicy{DeleteHookSucceeded}
		}
		if !slices.Contains(policies, want) {
			continue
		}
		obj, err := e.ownHook(ctx, run.ID, t)
		if err != nil {
			return err
		}
		if obj == nil {
			continue
		}
		ri, err := e.resource(taskGVK(t), t.Namespace)
		if err != nil {
			return err
		}
		policy := metav1.DeletePropagationBackground
		uid := obj.GetUID()
		err = ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &policy, Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete hook %s: %w", Key{Kind: t.Kind, Namespace: t.Namespace, Name: obj.GetName()}, err)
		}
	}
	return nil
}

// explicitDeletePolicy reports whether obj names its delete policy.
func explicitDeletePolicy(obj *unstructured.Unstructured) bool {
	if obj == nil {
		return false
	}
	ann := obj.GetAnnotations()
	_, argo := ann[AnnotationHookDeletePolicy]
	_, helm := ann[AnnotationHelmHookDeletePolicy]
	return argo || helm
}

// ownHook reads the object that the run with this ID created for t, not
// being deleted; nil when there is none.
func (e *Executor) ownHook(ctx context.Context, runID string, t *Task) (*unstructured.Unstructured, error) {
	ri, err := e.resource(taskGVK(t), t.Namespace)
	if err != nil {
		return nil, err
	}
	own := hookLabels(runID, t)
	if t.Name == "" {
		obj, err := findHook(ctx, ri, own)
		if err != nil {
			return nil, fmt.Errorf("look for hook %s: %w", t.Ref(), err)
		}
		return obj, nil
	}
	obj, err := getLive(ctx, ri, t.Name)
	if err != nil {
		return nil, fmt.Errorf("read hook %s: %w", t.Ref(), err)
	}
	if obj == nil || obj.GetDeletionTimestamp() != nil || !ownedBy(obj, own) {
		return nil, nil
	}
	return obj, nil
}
