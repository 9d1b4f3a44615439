package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/tracing"
)

// applyComparison writes a comparison into status.
func applyComparison(status *v1alpha1.ApplicationStatus, app *v1alpha1.Application, cmp *Comparison, now metav1.Time) {
	status.Sync = v1alpha1.SyncStatus{
		Status:     cmp.Sync,
		Revision:   cmp.Revision,
		Revisions:  cmp.Revisions,
		ComparedTo: v1alpha1.ComparedTo{Destination: app.Spec.Destination, IgnoreDifferences: app.Spec.IgnoreDifferences},
	}
	// The sources compared: a source hydrator's sync source, or the spec's.
	if set, err := specSources(app); err == nil && set.multi {
		status.Sync.ComparedTo.Sources = set.list
	} else if err == nil {
		status.Sync.ComparedTo.Source = set.list[0]
	}
	if status.Health.Status != cmp.Health {
		status.Health.LastTransitionTime = &now
	}
	status.Health.Status, status.Health.Message = cmp.Health, ""
	status.SourceType, status.SourceTypes = cmp.SourceType, cmp.SourceTypes
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
	onlyReconciledAt := reflect.DeepEqual(old, status)
	if !stale && onlyReconciledAt {
		return nil
	}
	status.ReconciledAt = &now
	for attempt := 1; ; attempt++ {
		var patch client.Patch
		if onlyReconciledAt {
			var err error
			if patch, err = reconciledAtPatch(app.ResourceVersion, now); err != nil {
				return err
			}
		} else {
			patch = client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
		}
		app.Status = *status.DeepCopy()
		err := r.patchStatus(ctx, app, patch)
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
		if startsUnrequested(app, status, &fresh) {
			return fmt.Errorf("patch status of %s/%s: %w", app.Namespace, app.Name, err)
		}
		keepRequests(status, &fresh.Status)
		*app = fresh
		onlyReconciledAt = false
	}
}

// reconciledAtPatch is the status write of a periodic refresh that found
// nothing new: reconciledAt alone, on the resourceVersion read. Made
// directly, it spares a merge patch's two encodings of the whole app (5 %
// of a shard's steady CPU at 2,000 apps).
func reconciledAtPatch(resourceVersion string, now metav1.Time) (client.Patch, error) {
	data, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": resourceVersion},
		"status":   map[string]any{"reconciledAt": now},
	})
	if err != nil {
		return nil, fmt.Errorf("encode the reconciledAt patch: %w", err)
	}
	return client.RawPatch(types.MergePatchType, data), nil
}

// patchStatus sends patch to app's status subresource. With
// Options.Metadata it asks for the answer as metadata only and takes that
// into app: the patch carries the resourceVersion it was made from, so
// what the API server holds is app with the new metadata. Decoding a whole
// Application (its resources, its history) for every status write cost a
// shard about a sixth of its CPU in the steady state of 5,000 apps.
func (r *Reconciler) patchStatus(ctx context.Context, app *v1alpha1.Application, patch client.Patch) error {
	if r.opts.Metadata == nil {
		return r.client.Status().Patch(ctx, app, patch)
	}
	data, err := patch.Data(app)
	if err != nil {
		return err
	}
	got, err := r.opts.Metadata.Resource(v1alpha1.GroupVersion.WithResource("applications")).Namespace(app.Namespace).
		Patch(ctx, app.Name, patch.Type(), data, metav1.PatchOptions{}, "status")
	if err != nil {
		return err
	}
	app.ObjectMeta = got.ObjectMeta
	return nil
}

// startsUnrequested reports whether status starts an operation (see
// startOperation) that fresh, the app read again after a conflicting
// write, no longer requests: the operation was replaced or removed
// meanwhile, and the next reconcile starts what is requested now.
func startsUnrequested(app *v1alpha1.Application, status *v1alpha1.ApplicationStatus, fresh *v1alpha1.Application) bool {
	st := status.OperationState
	if st == nil || st.Phase != v1alpha1.OperationRunning || inProgress(app.Status.OperationState) {
		return false
	}
	return fresh.Operation == nil || !equality.Semantic.DeepEqual(*fresh.Operation, st.Operation)
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
	patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
	delete(app.Annotations, v1alpha1.RefreshAnnotation)
	delete(app.Annotations, v1alpha1.ArgoRefreshAnnotation)
	delete(app.Annotations, v1alpha1.RefreshRequestedAnnotation)
	if app.Operation == nil {
		// The refresh's trace ends here; an operation's goes on.
		delete(app.Annotations, tracing.TraceparentAnnotation)
	}
	return client.IgnoreNotFound(r.client.Patch(ctx, app, patch))
}
