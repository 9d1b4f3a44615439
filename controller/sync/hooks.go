package sync

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

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

// startHook creates a hook's object. With BeforeHookCreation an object of
// the same name left by an earlier sync is deleted first; without it the
// existing object is applied like a resource and followed as the hook.
func (s *step) startHook(ctx context.Context, en *entry) error {
	t := en.task
	if t.Name != "" {
		ri, err := s.e.resource(taskGVK(t), t.Namespace)
		if err != nil {
			s.record(en, t.Name, v1alpha1.ResultCodeSyncFailed, v1alpha1.OperationFailed, err.Error())
			return nil
		}
		live, err := s.e.read(ctx, taskGVK(t), t.Namespace, t.Name, ri)
		if err != nil {
			return fmt.Errorf("read hook %s: %w", t.Ref(), err)
		}
		if live != nil && live.GetDeletionTimestamp() != nil {
			s.st.Message = "waiting for the deletion of hook " + t.Ref() + " from an earlier sync"
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
	name, verb, err := s.apply(ctx, t, false)
	if apierrors.IsAlreadyExists(err) {
		return nil // the earlier object is still going away
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
