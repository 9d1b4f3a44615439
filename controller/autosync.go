package controller

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Self-heal backoff: the n-th self-heal sync in a row of the same
// revision waits selfHealDelay * 2^(n-1) after the last sync finished, at
// most selfHealMaxDelay.
const (
	selfHealDelay    = 5 * time.Second
	selfHealMaxDelay = 3 * time.Minute
)

// autoSyncDecision is what the automated sync policy says after a
// comparison: an operation to request, a time to look again, or a reason
// it will not sync (reported as a SyncError condition).
type autoSyncDecision struct {
	op      *v1alpha1.Operation
	requeue time.Duration
	refusal string
}

// automated returns the app's automated sync policy, or nil when syncs
// are manual.
func automated(app *v1alpha1.Application) *v1alpha1.SyncPolicyAutomated {
	p := app.Spec.SyncPolicy
	if p == nil || p.Automated == nil || (p.Automated.Enabled != nil && !*p.Automated.Enabled) {
		return nil
	}
	return p.Automated
}

// decideAutoSync applies Argo CD's rules: sync an OutOfSync app to the
// compared revision unless an operation is pending, never sync the same
// revision and source twice after a failure, sync a revision already
// synced successfully only to self-heal (and then after a backoff), and
// never prune everything unless allowEmpty.
func decideAutoSync(app *v1alpha1.Application, status *v1alpha1.ApplicationStatus, cmp *Comparison, now time.Time) autoSyncDecision {
	auto := automated(app)
	if auto == nil || app.Operation != nil || inProgress(status.OperationState) || app.DeletionTimestamp != nil ||
		cmp.Sync != v1alpha1.SyncStatusCodeOutOfSync {
		return autoSyncDecision{}
	}
	set, err := specSources(app)
	if err != nil {
		return autoSyncDecision{}
	}
	revision := cmp.shownRevision()
	heals := int64(0)
	if last, ok := lastAttempt(status.OperationState, cmp, set); ok {
		if last.Phase != v1alpha1.OperationSucceeded {
			return autoSyncDecision{refusal: fmt.Sprintf("Failed sync attempt to %s: %s", revision, last.Message)}
		}
		if !auto.SelfHeal {
			return autoSyncDecision{}
		}
		heals = last.Operation.Sync.SelfHealAttemptsCount + 1
		if last.FinishedAt != nil {
			if wait := selfHealBackoff(heals) - now.Sub(last.FinishedAt.Time); wait > 0 {
				return autoSyncDecision{requeue: wait}
			}
		}
	}
	prunesOnly, all := true, len(cmp.Resources) > 0
	for _, res := range cmp.Resources {
		if !res.RequiresPruning {
			all = false
			if res.Status != v1alpha1.SyncStatusCodeSynced {
				prunesOnly = false
			}
		}
	}
	if auto.Prune && !auto.AllowEmpty && all {
		return autoSyncDecision{refusal: fmt.Sprintf("Skipping sync attempt to %s: auto-sync will wipe out all resources", revision)}
	}
	if !auto.Prune && prunesOnly {
		return autoSyncDecision{} // only pruning is left, and automated prune is off
	}
	op := &v1alpha1.Operation{
		Sync:        &v1alpha1.SyncOperation{Revision: cmp.Revision, Revisions: cmp.Revisions, Prune: auto.Prune, SelfHealAttemptsCount: heals},
		InitiatedBy: v1alpha1.OperationInitiator{Automated: true},
	}
	if r := app.Spec.SyncPolicy.Retry; r != nil {
		op.Retry = *r.DeepCopy()
	}
	return autoSyncDecision{op: op}
}

// lastAttempt returns the last operation when it synced the revisions
// cmp compared from the sources of set, Argo CD's test for "already
// attempted".
func lastAttempt(st *v1alpha1.OperationState, cmp *Comparison, set sourceSet) (*v1alpha1.OperationState, bool) {
	if st == nil || st.Operation.Sync == nil || st.SyncResult == nil {
		return nil, false
	}
	res := st.SyncResult
	if set.multi {
		return st, slices.Equal(res.Revisions, cmp.Revisions) && reflect.DeepEqual(res.Sources, set.list)
	}
	return st, res.Revision == cmp.Revision && reflect.DeepEqual(res.Source, set.list[0])
}

// selfHealBackoff is the wait before the n-th self-heal sync in a row.
func selfHealBackoff(n int64) time.Duration {
	d := selfHealDelay
	for i := int64(1); i < n && d < selfHealMaxDelay; i++ {
		d *= 2
	}
	return min(d, selfHealMaxDelay)
}

// requestAutoSync writes the automated sync's operation, if any, onto the
// app; the write (a new generation) brings the app back to run it. It
// comes before the status that starts the operation (see pass.autoSync):
// a controller that stops between the two finds the request and starts
// it as any other, and a request refused (the app changed meanwhile)
// leaves no operation in the status that nobody asked for.
func (r *Reconciler) requestAutoSync(ctx context.Context, app *v1alpha1.Application, op *v1alpha1.Operation) error {
	if op == nil {
		return nil
	}
	patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
	app.Operation = op
	if err := r.client.Patch(ctx, app, patch); err != nil {
		return fmt.Errorf("request an automated sync of %s/%s: %w", app.Namespace, app.Name, err)
	}
	r.log.Info("automated sync requested", "app", app.Namespace+"/"+app.Name, "revision", op.Sync.Revision, "selfHealAttempts", op.Sync.SelfHealAttemptsCount)
	return nil
}

// appEvents queues an app for each change of its spec, labels or
// annotations, as handler.EnqueueRequestForObject does, except the change
// that requests an automated sync: with the priority queue, that app
// waits at low priority behind the apps queued for a comparison. A push
// to many apps is then compared, and announced, before the syncs it
// causes take the processors (Argo CD keeps its syncs on a queue of their
// own for the same reason).
type appEvents struct {
	handler.EnqueueRequestForObject
}

// Update implements handler.EventHandler.
func (h *appEvents) Update(ctx context.Context, evt event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	if ok && requestsAutoSync(evt.ObjectOld, evt.ObjectNew) {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(handler.LowPriority)},
			reconcile.Request{NamespacedName: client.ObjectKeyFromObject(evt.ObjectNew)})
		return
	}
	h.EnqueueRequestForObject.Update(ctx, evt, q)
}

// requestsAutoSync reports whether the change from old to app is the
// request of an automated sync.
func requestsAutoSync(old, app client.Object) bool {
	o, ok1 := old.(*v1alpha1.Application)
	a, ok2 := app.(*v1alpha1.Application)
	return ok1 && ok2 && o.Operation == nil && a.Operation != nil && a.Operation.InitiatedBy.Automated
}
