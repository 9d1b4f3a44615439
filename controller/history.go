package controller

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// DefaultRevisionHistoryLimit is how many entries status.history keeps
// when spec.revisionHistoryLimit is unset.
const DefaultRevisionHistoryLimit = 10

// addHistory records the successful sync st in status.history under the
// next id (the first is 1) and drops the oldest entries past the app's
// limit.
func addHistory(status *v1alpha1.ApplicationStatus, app *v1alpha1.Application, st *v1alpha1.OperationState) {
	id := int64(1)
	if n := len(status.History); n > 0 {
		id = status.History[n-1].ID + 1
	}
	started := st.StartedAt
	entry := v1alpha1.RevisionHistory{ID: id, DeployStartedAt: &started, InitiatedBy: st.Operation.InitiatedBy}
	if st.FinishedAt != nil {
		entry.DeployedAt = *st.FinishedAt
	}
	if st.SyncResult != nil {
		entry.Revision, entry.Source = st.SyncResult.Revision, st.SyncResult.Source
	}
	status.History = append(status.History, entry)
	limit := int64(DefaultRevisionHistoryLimit)
	if app.Spec.RevisionHistoryLimit != nil {
		limit = max(*app.Spec.RevisionHistoryLimit, 0)
	}
	if n := int64(len(status.History)); n > limit {
		status.History = append([]v1alpha1.RevisionHistory(nil), status.History[n-limit:]...)
	}
}

// ErrRollbackAutoSync is Rollback's answer while automated sync is on: it
// would sync the app straight back to Git.
var ErrRollbackAutoSync = errors.New("rollback cannot be initiated when auto-sync is enabled")

// ErrOperationInProgress is returned when an app already has an operation.
var ErrOperationInProgress = errors.New("another operation is already in progress")

// RollbackOptions are the choices of a rollback beyond the history entry.
type RollbackOptions struct {
	// Prune deletes resources the entry's revision does not have.
	Prune bool
	// DryRun validates the rollback without changing anything.
	DryRun bool
	// InitiatedBy is who asks; it is recorded in the history entry.
	InitiatedBy v1alpha1.OperationInitiator
}

// Rollback requests a sync of app back to the revision and source of its
// history entry historyID, by writing the operation the controller then
// runs. It refuses while automated sync is on, while another operation is
// requested or running, and for an id the history does not hold.
func Rollback(ctx context.Context, c client.Client, app *v1alpha1.Application, historyID int64, opts RollbackOptions) error {
	if p := app.Spec.SyncPolicy; p != nil && p.Automated != nil && (p.Automated.Enabled == nil || *p.Automated.Enabled) {
		return ErrRollbackAutoSync
	}
	if operationActive(app) {
		return ErrOperationInProgress
	}
	var entry *v1alpha1.RevisionHistory
	for i := range app.Status.History {
		if app.Status.History[i].ID == historyID {
			entry = &app.Status.History[i]
		}
	}
	if entry == nil {
		return fmt.Errorf("application %s has no history entry with id %d", app.Name, historyID)
	}
	src := entry.Source
	patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
	app.Operation = &v1alpha1.Operation{
		Sync:        &v1alpha1.SyncOperation{Revision: entry.Revision, Source: &src, Prune: opts.Prune, DryRun: opts.DryRun},
		InitiatedBy: opts.InitiatedBy,
	}
	if err := c.Patch(ctx, app, patch); err != nil {
		return fmt.Errorf("request the rollback of %s/%s to history id %d: %w", app.Namespace, app.Name, historyID, err)
	}
	return nil
}
