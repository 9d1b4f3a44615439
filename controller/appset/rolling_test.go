package appset

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func TestStepOfAndMaxUpdate(t *testing.T) {
	t.Parallel()
	steps := []v1alpha1.ApplicationSetRolloutStep{
		{MatchExpressions: []v1alpha1.ApplicationMatchExpression{{Key: "env", Operator: "In", Values: []string{"dev"}}}},
		{MatchExpressions: []v1alpha1.ApplicationMatchExpression{{Key: "env", Operator: "In", Values: []string{"prod"}}, {Key: "region", Operator: "NotIn", Values: []string{"us"}}}},
		{MatchExpressions: []v1alpha1.ApplicationMatchExpression{{Key: "env", Operator: "In", Values: []string{"prod"}}}},
	}
	for _, tc := range []struct {
		labels map[string]string
		want   int
	}{
		{map[string]string{"env": "dev"}, 0},
		{map[string]string{"env": "prod", "region": "eu"}, 1},
		{map[string]string{"env": "prod"}, 1},
		{map[string]string{"env": "prod", "region": "us"}, 2},
		{map[string]string{"env": "qa"}, -1},
		{nil, -1},
	} {
		if got := stepOf(steps, tc.labels); got != tc.want {
			t.Errorf("stepOf(%v) = %d, want %d", tc.labels, got, tc.want)
		}
	}
	for _, tc := range []struct {
		max  *intstr.IntOrString
		n    int
		want int
	}{
		{nil, 7, 7},
		{new(intstr.FromInt32(2)), 7, 2},
		{new(intstr.FromInt32(0)), 7, 0},
		{new(intstr.FromString("50%")), 7, 3},
		{new(intstr.FromString("10%")), 3, 1},
		{new(intstr.FromString("0%")), 3, 0},
	} {
		if got := maxUpdate(v1alpha1.ApplicationSetRolloutStep{MaxUpdate: tc.max}, tc.n); got != tc.want {
			t.Errorf("maxUpdate(%v, %d) = %d, want %d", tc.max, tc.n, got, tc.want)
		}
	}
}

// An Application's progress: changes make it Waiting; once its sync
// started it is Progressing until synced and Healthy; a failed sync at
// the revision it compares with holds it there, a new revision makes it
// Waiting again.
func TestProgress(t *testing.T) {
	t.Parallel()
	asked := metav1.NewTime(time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC))
	now := metav1.NewTime(asked.Add(time.Minute))
	app := func(sync v1alpha1.SyncStatusCode, health v1alpha1.HealthStatusCode, op *v1alpha1.OperationState) *v1alpha1.Application {
		a := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
		a.Status.Sync.Status, a.Status.Sync.Revision, a.Status.Health.Status = sync, "r2", health
		a.Status.OperationState = op
		return a
	}
	op := func(phase v1alpha1.OperationPhase, started metav1.Time, revision string) *v1alpha1.OperationState {
		return &v1alpha1.OperationState{Phase: phase, StartedAt: started, SyncResult: &v1alpha1.SyncOperationResult{Revision: revision}}
	}
	before := metav1.NewTime(asked.Add(-time.Hour))
	for _, tc := range []struct {
		name string
		app  *v1alpha1.Application
		prev string
		want string
	}{
		{"new and in sync", app(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy, nil), "", rolloutHealthy},
		{"changes", app(v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.HealthStatusHealthy, nil), rolloutHealthy, rolloutWaiting},
		{"asked, an old sync only", app(v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.HealthStatusHealthy, op(v1alpha1.OperationSucceeded, before, "r1")), rolloutPending, rolloutPending},
		{"its sync runs", app(v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.HealthStatusHealthy, op(v1alpha1.OperationRunning, now, "r2")), rolloutPending, rolloutProgressing},
		{"synced, not healthy yet", app(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusProgressing, op(v1alpha1.OperationSucceeded, now, "r2")), rolloutPending, rolloutProgressing},
		{"synced and healthy", app(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy, op(v1alpha1.OperationSucceeded, now, "r2")), rolloutProgressing, rolloutHealthy},
		{"failed at its revision", app(v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.HealthStatusDegraded, op(v1alpha1.OperationFailed, now, "r2")), rolloutProgressing, rolloutProgressing},
		{"failed, then a new revision", app(v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.HealthStatusDegraded, op(v1alpha1.OperationFailed, now, "r1")), rolloutProgressing, rolloutWaiting},
	} {
		got := progress(tc.app, v1alpha1.ApplicationSetApplicationStatus{Application: "a", Status: tc.prev, LastTransitionTime: &asked}, now)
		if got.Status != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, got.Status, got.Message, tc.want)
		}
		if (got.Status == tc.prev) != got.LastTransitionTime.Equal(&asked) {
			t.Errorf("%s: transition time %v after %s -> %s", tc.name, got.LastTransitionTime, tc.prev, got.Status)
		}
	}
}
