package controller

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Each step's outcome sets its condition and clears it once the cause is
// gone; a failed comparison leaves the sync status Unknown.
func TestNoteConditions(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))
	conditionTypes := func(s *v1alpha1.ApplicationStatus) []v1alpha1.ApplicationConditionType {
		var out []v1alpha1.ApplicationConditionType
		for _, c := range s.Conditions {
			out = append(out, c.Type)
		}
		return out
	}
	status := &v1alpha1.ApplicationStatus{Sync: v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced}}
	steps := []struct {
		name string
		note func(*v1alpha1.ApplicationStatus)
		want []v1alpha1.ApplicationConditionType
	}{
		{"invalid spec", func(s *v1alpha1.ApplicationStatus) {
			noteComparison(s, nil, fmt.Errorf("%w: spec.source is required", errInvalidSpec), now)
		}, []v1alpha1.ApplicationConditionType{v1alpha1.ApplicationConditionInvalidSpecError}},
		{"comparison failed", func(s *v1alpha1.ApplicationStatus) {
			noteComparison(s, nil, errors.New("rendering manifests: boom"), now)
		}, []v1alpha1.ApplicationConditionType{v1alpha1.ApplicationConditionInvalidSpecError, v1alpha1.ApplicationConditionComparisonError}},
		{"compared with a warning", func(s *v1alpha1.ApplicationStatus) {
			noteComparison(s, &Comparison{Warnings: map[v1alpha1.ApplicationConditionType]string{
				v1alpha1.ApplicationConditionOrphanedResourceWarning: "application has 1 orphaned resources: ConfigMap shop/x",
			}}, nil, now)
		}, []v1alpha1.ApplicationConditionType{v1alpha1.ApplicationConditionOrphanedResourceWarning}},
		{"auto-sync refused", func(s *v1alpha1.ApplicationStatus) {
			noteAutoSync(s, autoSyncDecision{refusal: "Failed sync attempt to abc: boom"}, now)
		}, []v1alpha1.ApplicationConditionType{v1alpha1.ApplicationConditionOrphanedResourceWarning, v1alpha1.ApplicationConditionSyncError}},
		{"deletion failed", func(s *v1alpha1.ApplicationStatus) {
			noteDeletion(s, errors.New("deleting the application's resources failed"), now)
		}, []v1alpha1.ApplicationConditionType{v1alpha1.ApplicationConditionOrphanedResourceWarning, v1alpha1.ApplicationConditionSyncError, v1alpha1.ApplicationConditionDeletionError}},
		{"all clear", func(s *v1alpha1.ApplicationStatus) {
			noteComparison(s, &Comparison{}, nil, now)
			noteAutoSync(s, autoSyncDecision{}, now)
			noteDeletion(s, nil, now)
		}, nil},
	}
	for _, st := range steps {
		st.note(status)
		if diff := cmp.Diff(conditionTypes(status), st.want); diff != "" {
			t.Errorf("%s: conditions (-got +want):\n%s", st.name, diff)
		}
		if st.name == "comparison failed" && status.Sync.Status != v1alpha1.SyncStatusCodeUnknown {
			t.Errorf("%s: sync status %s, want Unknown", st.name, status.Sync.Status)
		}
	}
}
