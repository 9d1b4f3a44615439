//go:build integration

package sync_test

import (
	"strings"
	"testing"
	"time"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/sync"
)

// deletionHooks has a PreDelete hook that succeeds and keeps no policy,
// one that fails and asks to be deleted on failure, and a PostDelete hook
// that succeeds and names BeforeHookCreation only.
const deletionHooks = `apiVersion: batch/v1
kind: Job
metadata:
  generateName: backup-
  annotations:
    argocd.argoproj.io/hook: PreDelete
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: backup, image: registry.example.com/tools/backup:1}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: drain
  annotations:
    argocd.argoproj.io/hook: PreDelete
    argocd.argoproj.io/hook-delete-policy: HookFailed
spec:
  backoffLimit: 0
  activeDeadlineSeconds: 1
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {graphcd.io/no-such-node: "true"}
      containers: [{name: drain, image: registry.example.com/tools/drain:1}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: goodbye
  annotations:
    argocd.argoproj.io/hook: PostDelete
    argocd.argoproj.io/hook-delete-policy: BeforeHookCreation
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: goodbye, image: registry.example.com/tools/goodbye:1}]
`

// runHooks calls RunHooks until the run is no longer Running; it fails
// after maxCalls calls, which counts calls, not time.
func runHooks(t *testing.T, e *sync.Executor, run sync.HookRun) sync.HookStatus {
	t.Helper()
	const maxCalls = 3000
	for range maxCalls {
		st, err := e.RunHooks(t.Context(), run)
		if err != nil {
			t.Logf("RunHooks: %v", err)
		} else if st.Phase != v1alpha1.OperationRunning {
			return st
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the hooks did not finish in %d calls", maxCalls)
	return sync.HookStatus{}
}

// RunHooks runs deletion hooks without ever creating one twice, reports
// a failure naming the hook, and CleanupHooks applies the delete policies
// for the outcome: a hook without a policy is deleted after success only.
func TestRunDeletionHooks(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "waves.yaml")
	h.setYAML(deletionHooks)
	plan, err := sync.Build(h.desired, nil, h.opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Tasks) != 0 || len(plan.DeletionHooks) != 3 {
		t.Fatalf("plan: %d sync tasks, %d deletion hooks; want none and 3", len(plan.Tasks), len(plan.DeletionHooks))
	}
	var pre, post []sync.Task
	for _, task := range plan.DeletionHooks {
		if task.Phase == sync.PhasePreDelete {
			pre = append(pre, task)
		} else {
			post = append(post, task)
		}
	}

	preRun := sync.HookRun{ID: h.ns + ".PreDelete", Hooks: pre}
	st := runHooks(t, h.exec, preRun)
	if st.Phase != v1alpha1.OperationFailed || !strings.Contains(st.Message, "PreDelete hooks failed: Job "+h.ns+"/drain: ") {
		t.Errorf("PreDelete run: %+v, want Failed naming Job drain", st)
	}
	backups := func() int {
		n := 0
		for _, name := range h.names("Job") {
			if strings.HasPrefix(name, "backup-") {
				n++
			}
		}
		return n
	}
	if n := backups(); n != 1 {
		t.Errorf("%d backup jobs after the run, want 1", n)
	}
	if err := h.exec.CleanupHooks(t.Context(), preRun, st.Phase); err != nil {
		t.Fatal(err)
	}
	if h.get("Job", "drain") != nil && h.get("Job", "drain").GetDeletionTimestamp() == nil {
		t.Error("the failed hook with HookFailed was not deleted")
	}
	if n := backups(); n != 1 {
		t.Errorf("%d backup jobs after a failed run, want the one kept (no policy: deleted after success only)", n)
	}

	postRun := sync.HookRun{ID: h.ns + ".PostDelete", Hooks: post}
	if st := runHooks(t, h.exec, postRun); st.Phase != v1alpha1.OperationSucceeded {
		t.Errorf("PostDelete run: %+v, want Succeeded", st)
	}
	if err := h.exec.CleanupHooks(t.Context(), postRun, v1alpha1.OperationSucceeded); err != nil {
		t.Fatal(err)
	}
	if h.get("Job", "goodbye") == nil {
		t.Error("the hook with BeforeHookCreation only was deleted after success")
	}

	// Without a policy, a hook is deleted after success.
	backup := sync.HookRun{ID: h.ns + ".again", Hooks: pre[:1]}
	if st := runHooks(t, h.exec, backup); st.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("backup run: %+v, want Succeeded", st)
	}
	if n := backups(); n != 2 {
		t.Errorf("%d backup jobs after a run of another ID, want 2", n)
	}
	if err := h.exec.CleanupHooks(t.Context(), backup, v1alpha1.OperationSucceeded); err != nil {
		t.Fatal(err)
	}
	if n := backups(); n != 1 {
		t.Errorf("%d backup jobs after cleanup, want 1 (the succeeded one deleted)", n)
	}
}
