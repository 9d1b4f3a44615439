//go:build integration

package sync_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/sync"
)

// crashHooks has a PreSync hook with generateName and a named one; both
// complete (KWOK runs their pods) and are kept (no delete policy beyond
// the default BeforeHookCreation).
const crashHooks = `apiVersion: batch/v1
kind: Job
metadata:
  generateName: migrate-
  annotations:
    argocd.argoproj.io/hook: PreSync
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: registry.example.com/shop/migrate:1}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: check
  annotations:
    argocd.argoproj.io/hook: PreSync
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: check, image: registry.example.com/shop/check:1}]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data: {mode: prod}
`

// A step that created the hooks and whose state was never saved (the
// controller stopped first) is done again from the state saved before
// it: the hooks the lost step created are found by their labels and
// adopted, not created a second time.
func TestHooksNotCreatedTwiceAfterLostStep(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "waves.yaml")
	h.setYAML(crashHooks)
	h.run.ID = h.ns + ".crash"
	saved := &v1alpha1.OperationState{Phase: v1alpha1.OperationRunning, StartedAt: metav1.Now()}

	h.state = saved.DeepCopy()
	h.step()
	first := h.state
	var generated string
	for _, r := range first.SyncResult.Resources {
		if strings.HasPrefix(r.Name, "migrate-") && r.HookPhase == v1alpha1.OperationRunning {
			generated = r.Name
		}
	}
	if generated == "" || h.get("Job", "check") == nil {
		t.Fatalf("the first step did not create both hooks:\n%s", dump(first))
	}
	check := h.get("Job", "check")
	for _, obj := range []string{generated, "check"} {
		if got := h.get("Job", obj).GetLabels()[sync.LabelOperation]; got != h.run.ID {
			t.Errorf("Job %s: label %s = %q, want %q", obj, sync.LabelOperation, got, h.run.ID)
		}
	}

	h.state = saved.DeepCopy() // the state of the first step is lost
	h.sync(v1alpha1.OperationSucceeded)
	var jobs []string
	for _, n := range h.names("Job") {
		if strings.HasPrefix(n, "migrate-") {
			jobs = append(jobs, n)
		}
	}
	if len(jobs) != 1 || jobs[0] != generated {
		t.Errorf("migrate jobs %v, want only %s, the one the lost step created", jobs, generated)
	}
	if r := result(t, h.state, "Job", generated); r.HookPhase != v1alpha1.OperationSucceeded {
		t.Errorf("the adopted hook's result %+v, want Succeeded", r)
	}
	if now := h.get("Job", "check"); now == nil || now.GetUID() != check.GetUID() {
		t.Error("the named hook the lost step created was deleted and created again")
	}

	// Another operation runs its hooks anew.
	h.state = nil
	h.sync(v1alpha1.OperationSucceeded)
	n := 0
	for _, name := range h.names("Job") {
		if strings.HasPrefix(name, "migrate-") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d migrate jobs after a second operation, want 2", n)
	}
	if now := h.get("Job", "check"); now == nil || now.GetUID() == check.GetUID() {
		t.Error("the second operation did not create the named hook again")
	}
}
