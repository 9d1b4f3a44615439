package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// A status write that conflicts keeps a terminate written meanwhile into
// the operation it was meant for, unless that operation already ended.
func TestKeepRequests(t *testing.T) {
	started := metav1.NewTime(time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC))
	other := metav1.NewTime(started.Add(time.Minute))
	op := func(phase v1alpha1.OperationPhase, at metav1.Time) *v1alpha1.OperationState {
		return &v1alpha1.OperationState{Phase: phase, StartedAt: at}
	}
	tests := []struct {
		name         string
		ours, theirs *v1alpha1.OperationState
		want         v1alpha1.OperationPhase
	}{
		{"terminate of the running operation", op(v1alpha1.OperationRunning, started), op(v1alpha1.OperationTerminating, started), v1alpha1.OperationTerminating},
		{"nothing requested", op(v1alpha1.OperationRunning, started), op(v1alpha1.OperationRunning, started), v1alpha1.OperationRunning},
		{"operation ended in this step", op(v1alpha1.OperationSucceeded, started), op(v1alpha1.OperationTerminating, started), v1alpha1.OperationSucceeded},
		{"terminate of another operation", op(v1alpha1.OperationRunning, other), op(v1alpha1.OperationTerminating, started), v1alpha1.OperationRunning},
		{"no operation written", op(v1alpha1.OperationRunning, started), nil, v1alpha1.OperationRunning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ours := &v1alpha1.ApplicationStatus{OperationState: tt.ours}
			keepRequests(ours, &v1alpha1.ApplicationStatus{OperationState: tt.theirs})
			if got := ours.OperationState.Phase; got != tt.want {
				t.Errorf("phase = %s, want %s", got, tt.want)
			}
		})
	}
}
