package actions

import (
	"slices"
	"testing"
)

// Each operator kind lists its actions, disabled as the object's state
// says, and each action patches what the operator's own CLI would.
func TestOperatorBuiltins(t *testing.T) {
	e, objs := newEngine(t), objects(t)
	for _, tc := range []struct {
		object           string
		enabled, blocked []string
	}{
		{"canary", []string{"abort", "pause", "promote-full", "restart", "resume"}, []string{"retry"}},
		{"aborted", []string{"restart", "resume", "retry"}, []string{"abort", "pause", "promote-full"}},
		{"infra", []string{"reconcile", "suspend"}, []string{"resume"}},
		{"podinfo", []string{"resume"}, []string{"reconcile", "suspend"}},
		{"nightly", []string{"suspend"}, []string{"resume"}},
		{"worker", []string{"resume"}, []string{"pause"}},
		{"db-password", []string{"refresh"}, nil},
	} {
		got, err := e.Discover(t.Context(), objs[tc.object])
		if err != nil {
			t.Fatalf("%s: %v", tc.object, err)
		}
		var enabled, blocked []string
		for _, a := range got {
			if a.Disabled {
				blocked = append(blocked, a.Name)
			} else {
				enabled = append(enabled, a.Name)
			}
		}
		if !slices.Equal(enabled, tc.enabled) || !slices.Equal(blocked, tc.blocked) {
			t.Errorf("%s: enabled %v, disabled %v; want %v and %v", tc.object, enabled, blocked, tc.enabled, tc.blocked)
		}
	}
	for _, tc := range []struct {
		object, action string
		want           string // the merge patch
	}{
		{"canary", "restart", `{"spec":{"restartAt":"2026-03-01T12:30:00Z"}}`},
		{"canary", "pause", `{"spec":{"paused":true}}`},
		{"canary", "resume", `{"spec":{"paused":false},"status":{"pauseConditions":null}}`},
		{"canary", "promote-full", `{"status":{"promoteFull":true}}`},
		{"canary", "abort", `{"status":{"abort":true}}`},
		{"aborted", "retry", `{"status":{"abort":false}}`},
		{"infra", "reconcile", `{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"2026-03-01T12:30:00Z"}}}`},
		{"infra", "suspend", `{"spec":{"suspend":true}}`},
		{"podinfo", "resume", `{"spec":{"suspend":false}}`},
		{"nightly", "suspend", `{"spec":{"suspend":true}}`},
		{"worker", "resume", `{"metadata":{"annotations":{"autoscaling.keda.sh/paused":null}}}`},
		{"db-password", "refresh", `{"metadata":{"annotations":{"force-sync":"1772368200"}}}`},
	} {
		changes, err := e.Run(t.Context(), objs[tc.object], tc.action, nil)
		if err != nil {
			t.Errorf("%s %s: %v", tc.object, tc.action, err)
			continue
		}
		if len(changes) != 1 || changes[0].Operation != OperationPatch || string(changes[0].Patch) != tc.want {
			t.Errorf("%s %s: changes %+v, want one patch %s", tc.object, tc.action, changes, tc.want)
		}
	}
}
