package controller

import (
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
		entry.Revisions, entry.Sources = st.SyncResult.Revisions, st.SyncResult.Sources
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
