package controller

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// The conditions an Application's status carries are set here and only
// here: each note function turns the outcome of one step (a comparison,
// an automated sync decision, a deletion) into the conditions it calls
// for, and conditionFor maps a step's error to its condition type.

// errInvalidSpec marks a failure that only a change to the app's spec (or
// its project, or its cluster) can fix.
var errInvalidSpec = errors.New("invalid spec")

// conditionFor is the condition that reports a comparison's error:
// InvalidSpecError for errInvalidSpec, ComparisonError for any other.
func conditionFor(err error) v1alpha1.ApplicationConditionType {
	if errors.Is(err, errInvalidSpec) {
		return v1alpha1.ApplicationConditionInvalidSpecError
	}
	return v1alpha1.ApplicationConditionComparisonError
}

// warningConditions are the conditions warnings may set; each is cleared
// when its cause is gone.
var warningConditions = []v1alpha1.ApplicationConditionType{
	v1alpha1.ApplicationConditionRepeatedResourceWarning,
	v1alpha1.ApplicationConditionSharedResourceWarning,
	v1alpha1.ApplicationConditionExcludedResourceWarning,
	v1alpha1.ApplicationConditionOrphanedResourceWarning,
	v1alpha1.ApplicationConditionImpersonationDisabledWarning,
}

// noteComparison reports a comparison in status: its error as a condition
// (see conditionFor) with the sync status Unknown, or, when it succeeded,
// its warnings, clearing the conditions whose cause is gone.
func noteComparison(status *v1alpha1.ApplicationStatus, cmp *Comparison, err error, now metav1.Time) {
	if err != nil {
		setCondition(status, conditionFor(err), err.Error(), now)
		status.Sync.Status = v1alpha1.SyncStatusCodeUnknown
		return
	}
	clearCondition(status, v1alpha1.ApplicationConditionComparisonError)
	clearCondition(status, v1alpha1.ApplicationConditionInvalidSpecError)
	for _, t := range warningConditions {
		if msg, ok := cmp.Warnings[t]; ok {
			setCondition(status, t, msg, now)
		} else {
			clearCondition(status, t)
		}
	}
}

// noteAutoSync reports a refusal of the automated sync policy as a
// SyncError condition in status, and clears the condition otherwise.
func noteAutoSync(status *v1alpha1.ApplicationStatus, d autoSyncDecision, now metav1.Time) {
	if d.refusal != "" {
		setCondition(status, v1alpha1.ApplicationConditionSyncError, d.refusal, now)
	} else {
		clearCondition(status, v1alpha1.ApplicationConditionSyncError)
	}
}

// noteDeletion reports a failed step of the app's deletion as its
// DeletionError condition, and clears the condition when err is nil.
func noteDeletion(status *v1alpha1.ApplicationStatus, err error, now metav1.Time) {
	if err != nil {
		setCondition(status, v1alpha1.ApplicationConditionDeletionError, err.Error(), now)
	} else {
		clearCondition(status, v1alpha1.ApplicationConditionDeletionError)
	}
}

func setCondition(status *v1alpha1.ApplicationStatus, t v1alpha1.ApplicationConditionType, msg string, now metav1.Time) {
	for i, c := range status.Conditions {
		if c.Type == t {
			if c.Message != msg {
				status.Conditions[i].Message, status.Conditions[i].LastTransitionTime = msg, &now
			}
			return
		}
	}
	status.Conditions = append(status.Conditions, v1alpha1.ApplicationCondition{Type: t, Message: msg, LastTransitionTime: &now})
}

func clearCondition(status *v1alpha1.ApplicationStatus, t v1alpha1.ApplicationConditionType) {
	out := status.Conditions[:0]
	for _, c := range status.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	status.Conditions = out
}
