//go:build integration

package sync_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// The sync-waves app runs PreSync job -> wave 0 backend -> wave 1 Sync
// hook -> wave 2 frontend -> wave 3 PostSync hook, and the recorded
// results show that order with each hook's outcome.
// wavesOrder is the recorded order of a sync of testdata/exec/waves.yaml.
var wavesOrder = []string{
	"PreSync 0 Job schema-upgrade-* Synced Succeeded hook",
	"Sync 0 Service backend Synced Running",
	"Sync 0 Deployment backend Synced Running",
	"Sync 1 Job maintenance-on-* Synced Succeeded hook",
	"Sync 2 Service frontend Synced Running",
	"Sync 2 Deployment frontend Synced Running",
	"PostSync 3 Job smoke-test Synced Succeeded hook",
}

func TestSyncWavesRunInOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "waves.yaml")
	h.sync(v1alpha1.OperationSucceeded)
	checkOrder(t, order(h.state, "schema-upgrade-", "maintenance-on-"), wavesOrder)
	if h.state.Message != "successfully synced (all tasks run)" {
		t.Errorf("message %q", h.state.Message)
	}
	if r := result(t, h.state, "Deployment", "backend"); r.Message != "deployment.apps/backend created" {
		t.Errorf("backend message %q", r.Message)
	}
	for _, kind := range []string{"Deployment", "Service"} {
		if got := h.names(kind); !slices.Equal(got, []string{"backend", "frontend"}) {
			t.Errorf("%ss %v, want backend and frontend", kind, got)
		}
	}
	// HookSucceeded deleted the PreSync job; the others stay.
	jobs := h.names("Job")
	if slices.ContainsFunc(jobs, func(n string) bool { return strings.HasPrefix(n, "schema-upgrade-") }) {
		t.Errorf("the PreSync hook with HookSucceeded was not deleted: %v", jobs)
	}
	if !slices.Contains(jobs, "smoke-test") || !slices.ContainsFunc(jobs, func(n string) bool { return strings.HasPrefix(n, "maintenance-on-") }) {
		t.Errorf("jobs %v, want the Sync and PostSync hooks kept", jobs)
	}

	// A second sync deletes the kept hook before creating it again
	// (BeforeHookCreation) and applies unchanged resources as unchanged.
	old := h.get("Job", "smoke-test")
	h.state = nil
	h.sync(v1alpha1.OperationSucceeded)
	if now := h.get("Job", "smoke-test"); now == nil || now.GetUID() == old.GetUID() {
		t.Errorf("the PostSync hook was not re-created by the second sync")
	}
	if r := result(t, h.state, "Deployment", "frontend"); r.Message != "deployment.apps/frontend unchanged" {
		t.Errorf("frontend message on the second sync %q", r.Message)
	}
}

// Helm pre-install hooks run by weight (-2, then -1) before the chart's
// resources, the post-install hook after them; hook-succeeded deletes
// db-init once it completed.
func TestHelmHookWeights(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "helm-hooks.yaml")
	h.sync(v1alpha1.OperationSucceeded)
	checkOrder(t, order(h.state), []string{
		"PreSync -2 Job db-create Synced Succeeded hook",
		"PreSync -1 Job db-init Synced Succeeded hook",
		"Sync 0 Deployment shop Synced Running",
		"PostSync 0 Job seed Synced Succeeded hook",
	})
	if got := h.names("Job"); !slices.Equal(got, []string{"db-create", "seed"}) {
		t.Errorf("jobs %v, want db-create and seed (db-init deleted by hook-succeeded)", got)
	}
}

// A failed PreSync hook fails the sync: nothing of the Sync phase is
// applied and the SyncFail hook runs. A sync that succeeds never runs its
// SyncFail hook.
func TestSyncFailHook(t *testing.T) {
	t.Parallel()
	t.Run("failure", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, "syncfail.yaml")
		h.sync(v1alpha1.OperationFailed)
		checkOrder(t, order(h.state, "notify-failure-"), []string{
			"PreSync 0 Job migrate Synced Failed hook",
			"SyncFail 0 Job notify-failure-* Synced Succeeded hook",
		})
		if !strings.Contains(h.state.Message, "PreSync hook Job "+h.ns+"/migrate: ") || !strings.Contains(h.state.Message, "SyncFail hooks ran") {
			t.Errorf("message %q, want the failed hook and that SyncFail hooks ran", h.state.Message)
		}
		if h.get("ConfigMap", "settings") != nil {
			t.Error("the ConfigMap of the Sync phase was applied after the PreSync hook failed")
		}
	})
	t.Run("success", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, "syncfail-ok.yaml")
		h.sync(v1alpha1.OperationSucceeded)
		checkOrder(t, order(h.state), []string{"Sync 0 ConfigMap settings Synced Running"})
		if h.get("Job", "notify-failure") != nil {
			t.Error("the SyncFail hook ran although the sync succeeded")
		}
	})
}

// Terminating a running sync stops it: the running hook is deleted and
// the operation fails with "operation terminated"; nothing after the hook
// is applied.
func TestTerminate(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "syncfail.yaml")
	// The migrate hook never runs on a node; stop while it is pending.
	h.runUntil(func(st *v1alpha1.OperationState) bool { return len(st.SyncResult.Resources) > 0 })
	h.run.Terminate = true
	h.sync(v1alpha1.OperationFailed)
	if h.state.Message != "operation terminated" {
		t.Errorf("message %q", h.state.Message)
	}
	checkOrder(t, order(h.state), []string{"PreSync 0 Job migrate Synced Failed hook"})
	if h.get("ConfigMap", "settings") != nil {
		t.Error("a terminated sync applied the ConfigMap")
	}
}

// A controller restart in the middle of a multi-wave sync: a new
// executor, given only the recorded state, finishes the sync without
// running the hooks that already succeeded again.
func TestRestartContinuesFromRecordedState(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "waves.yaml")
	h.runUntil(func(st *v1alpha1.OperationState) bool {
		for _, r := range st.SyncResult.Resources {
			if r.SyncPhase == v1alpha1.SyncPhaseSync && r.SyncWave == 1 && r.HookPhase == v1alpha1.OperationSucceeded {
				return true
			}
		}
		return false
	})
	if h.state.Phase != v1alpha1.OperationRunning {
		t.Fatalf("the sync ended before the restart:\n%s", dump(h.state))
	}
	var hookName string
	for _, r := range h.state.SyncResult.Resources {
		if strings.HasPrefix(r.Name, "maintenance-on-") {
			hookName = r.Name
		}
	}
	before := h.get("Job", hookName)
	if before == nil {
		t.Fatalf("the Sync hook %q does not exist", hookName)
	}

	// The restart: a new executor and the state as stored in the status.
	h.exec = newExecutor(t)
	h.state = roundTrip(t, h.state)
	h.sync(v1alpha1.OperationSucceeded)

	after := h.get("Job", hookName)
	if after == nil || after.GetUID() != before.GetUID() || !after.GetCreationTimestamp().Time.Equal(before.GetCreationTimestamp().Time) {
		t.Errorf("the Sync hook that had succeeded was run again after the restart")
	}
	jobs := h.names("Job")
	if n := len(slices.DeleteFunc(jobs, func(n string) bool { return !strings.HasPrefix(n, "maintenance-on-") })); n != 1 {
		t.Errorf("%d maintenance-on jobs exist, want 1", n)
	}
	checkOrder(t, order(h.state, "schema-upgrade-", "maintenance-on-"), []string{
		"PreSync 0 Job schema-upgrade-* Synced Succeeded hook",
		"Sync 0 Service backend Synced Running",
		"Sync 0 Deployment backend Synced Running",
		"Sync 1 Job maintenance-on-* Synced Succeeded hook",
		"Sync 2 Service frontend Synced Running",
		"Sync 2 Deployment frontend Synced Running",
		"PostSync 3 Job smoke-test Synced Succeeded hook",
	})
}
