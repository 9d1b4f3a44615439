package sync

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// prune deletes a live object that is no longer desired, with the
// application's PrunePropagationPolicy and a precondition on its UID so
// that an object re-created meanwhile is left alone. A prune the plan
// marks as skipped records why.
func (s *step) prune(ctx context.Context, en *entry) error {
	t := en.task
	if t.PruneSkipped != "" {
		s.record(en, t.Name, v1alpha1.ResultCodePruneSkipped, v1alpha1.OperationSucceeded, t.PruneSkipped)
		return nil
	}
	msg, err := s.delete(ctx, t, false)
	if err != nil {
		s.record(en, t.Name, v1alpha1.ResultCodeSyncFailed, v1alpha1.OperationFailed, err.Error())
		return nil
	}
	s.record(en, t.Name, v1alpha1.ResultCodePruned, v1alpha1.OperationSucceeded, msg)
	return nil
}

// delete deletes a prune task's live object and returns the result
// message; an object already gone counts as pruned.
func (s *step) delete(ctx context.Context, t *Task, dryRun bool) (string, error) {
	ri, err := s.e.resource(taskGVK(t), t.Namespace)
	if err != nil {
		return "", err
	}
	opts := metav1.DeleteOptions{}
	if p := t.SyncOptions.PrunePropagationPolicy; p != "" {
		opts.PropagationPolicy = &p
	}
	if t.Live != nil && t.Live.GetUID() != "" {
		uid := t.Live.GetUID()
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	if dryRun {
		opts.DryRun = dryRunAll
	}
	err = ri.Delete(ctx, t.Name, opts)
	switch {
	case apierrors.IsNotFound(err):
		return "pruned (already gone)", nil
	case apierrors.IsConflict(err):
		return "pruned (the object was replaced meanwhile and is kept)", nil
	case err != nil:
		return "", err
	}
	if !dryRun {
		s.wrote(taskGVK(t), t.Namespace, t.Name, "")
	}
	return "pruned", nil
}
