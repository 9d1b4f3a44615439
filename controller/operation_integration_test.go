//go:build integration

package controller_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appops"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// repoSvc is the repository service of TestMain's controller.
var repoSvc reposerver.Service

// requestSync writes an operation onto the app, as the API does.
func requestSync(t *testing.T, name string, op v1alpha1.Operation) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"operation": op})
	if err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: name}}
	if err := apps.Patch(t.Context(), app, client.RawPatch(types.MergePatchType, b)); err != nil {
		t.Fatal(err)
	}
}

// manual is a sync a person asked for.
func manual(sync v1alpha1.SyncOperation) v1alpha1.Operation {
	return v1alpha1.Operation{Sync: &sync, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}}
}

// opDone reports whether the last operation ended in phase.
func opDone(phase v1alpha1.OperationPhase) func(*v1alpha1.ApplicationStatus) bool {
	return func(s *v1alpha1.ApplicationStatus) bool {
		return s.OperationState != nil && s.OperationState.Phase == phase && s.OperationState.FinishedAt != nil
	}
}

// getApp reads the Application.
func getApp(t *testing.T, name string) *v1alpha1.Application {
	t.Helper()
	var app v1alpha1.Application
	if err := apps.Get(t.Context(), types.NamespacedName{Namespace: appNamespace, Name: name}, &app); err != nil {
		t.Fatal(err)
	}
	return &app
}

// resultOrder renders the recorded results as "SyncPhase wave Kind name
// hookPhase", generated name suffixes replaced by "*".
func resultOrder(st *v1alpha1.OperationState, generated ...string) []string {
	var out []string
	for _, r := range st.SyncResult.Resources {
		name := r.Name
		for _, g := range generated {
			if strings.HasPrefix(name, g) {
				name = g + "*"
			}
		}
		out = append(out, fmt.Sprintf("%s %d %s %s %s", r.SyncPhase, r.SyncWave, r.Kind, name, r.HookPhase))
	}
	return out
}

// A manual sync of a plain app creates its resources: the app turns
// Synced and Healthy, the operation Succeeded and is cleared, and the
// sync is history entry 1.
func TestManualSync(t *testing.T) {
	t.Parallel()
	const name = "sync-plain"
	dest, _ := newApp(t, name, map[string]string{
		"app/deploy.yaml": deployment("DEST", name),
		"app/cm.yaml":     configMap("DEST", name, "prod"),
	})
	waitStatus(t, name, "OutOfSync", func(s *v1alpha1.ApplicationStatus) bool { return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync })
	requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	app := waitStatus(t, name, "synced by the operation", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.Sync.Status == v1alpha1.SyncStatusCodeSynced && s.Health.Status == v1alpha1.HealthStatusHealthy
	})
	st := app.Status.OperationState
	if st.Message != "successfully synced (all tasks run)" || st.SyncResult.Revision != app.Status.Sync.Revision {
		t.Errorf("operation state: message %q, revision %q (app at %q)", st.Message, st.SyncResult.Revision, app.Status.Sync.Revision)
	}
	if got, want := resultOrder(st), []string{"Sync 0 ConfigMap settings Running", "Sync 0 Deployment web Running"}; !slices.Equal(got, want) {
		t.Errorf("results %v, want %v", got, want)
	}
	if len(app.Status.History) != 1 {
		t.Fatalf("history %+v, want one entry", app.Status.History)
	}
	h := app.Status.History[0]
	if h.ID != 1 || h.Revision != st.SyncResult.Revision || h.InitiatedBy.Username != "alice" || h.Source.RepoURL != app.Spec.Source.RepoURL || h.DeployStartedAt == nil {
		t.Errorf("history entry %+v", h)
	}
	if app.Operation != nil {
		t.Errorf("the finished operation was not cleared: %+v", app.Operation)
	}
	if _, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "settings", metav1.GetOptions{}); err != nil {
		t.Errorf("the ConfigMap was not created: %v", err)
	}
	var events corev1.EventList
	poll(t, "OperationStarted and OperationCompleted events", func(ctx context.Context) (bool, error) {
		if err := cluster.Client.CoreV1().RESTClient().Get().Namespace(appNamespace).Resource("events").Do(ctx).Into(&events); err != nil {
			return false, err
		}
		var started, completed bool
		for _, e := range events.Items {
			if e.InvolvedObject.Name != name {
				continue
			}
			started = started || (e.Reason == controller.ReasonOperationStarted && strings.Contains(e.Message, "by alice"))
			completed = completed || (e.Reason == controller.ReasonOperationCompleted && strings.Contains(e.Message, "sync succeeded: successfully synced"))
		}
		return started && completed, nil
	})
}

// wavesApp is the sync-waves app of controller/sync's tests: a PreSync job,
// the backend in wave 0, a Sync hook in wave 1, the frontend in wave 2 and
// a PostSync smoke test in wave 3.
const wavesApp = `apiVersion: batch/v1
kind: Job
metadata:
  generateName: schema-upgrade-
  annotations:
    argocd.argoproj.io/hook: PreSync
    argocd.argoproj.io/hook-delete-policy: HookSucceeded
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: registry.example.com/shop/migrate:1.4}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: backend
spec:
  selector: {matchLabels: {app: backend}}
  template:
    metadata: {labels: {app: backend}}
    spec:
      containers: [{name: backend, image: registry.example.com/shop/backend:1.4}]
---
apiVersion: batch/v1
kind: Job
metadata:
  generateName: maintenance-on-
  annotations:
    argocd.argoproj.io/hook: Sync
    argocd.argoproj.io/sync-wave: "1"
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: toggle, image: registry.example.com/shop/toggle:1.0}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: frontend
  annotations:
    argocd.argoproj.io/sync-wave: "2"
spec:
  selector: {matchLabels: {app: frontend}}
  template:
    metadata: {labels: {app: frontend}}
    spec:
      containers: [{name: frontend, image: registry.example.com/shop/frontend:1.4}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: smoke-test
  annotations:
    argocd.argoproj.io/hook: PostSync
    argocd.argoproj.io/sync-wave: "3"
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: curl, image: registry.example.com/tools/curl:8}]
`

var wavesOrder = []string{
	"PreSync 0 Job schema-upgrade-* Succeeded",
	"Sync 0 Deployment backend Running",
	"Sync 1 Job maintenance-on-* Succeeded",
	"Sync 2 Deployment frontend Running",
	"PostSync 3 Job smoke-test Succeeded",
}

// The sync-waves app syncs in its phases and waves, the order recorded in
// operationState; hooks are not compared, so the app ends Synced.
func TestSyncWavesOrder(t *testing.T) {
	t.Parallel()
	const name = "sync-waves"
	newApp(t, name, map[string]string{"app/waves.yaml": wavesApp})
	requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	app := waitStatus(t, name, "synced", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	if d := cmp.Diff(resultOrder(app.Status.OperationState, "schema-upgrade-", "maintenance-on-"), wavesOrder); d != "" {
		t.Errorf("recorded order (-got +want):\n%s", d)
	}
}

// A sync that fails because a namespace does not exist yet is retried
// with backoff, and succeeds once the namespace appears.
func TestRetryTransientFailure(t *testing.T) {
	t.Parallel()
	const name = "retry-app"
	late := fmt.Sprintf("retry-late-%d", time.Now().UnixNano())
	newApp(t, name, map[string]string{"app/cm.yaml": configMap(late, name, "x")})
	op := manual(v1alpha1.SyncOperation{})
	op.Retry = v1alpha1.RetryStrategy{Limit: 5, Backoff: &v1alpha1.Backoff{Duration: "1s", MaxDuration: "2s"}}
	requestSync(t, name, op)
	waitStatus(t, name, "retrying", func(s *v1alpha1.ApplicationStatus) bool {
		return s.OperationState != nil && s.OperationState.RetryCount >= 1 && s.OperationState.Phase == v1alpha1.OperationRunning
	})
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: late}}
	if _, err := cluster.Client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Namespaces().Delete(context.Background(), late, metav1.DeleteOptions{})
	})
	app := waitStatus(t, name, "succeeded on a retry", opDone(v1alpha1.OperationSucceeded))
	if app.Status.OperationState.RetryCount < 1 {
		t.Errorf("retryCount %d, want at least 1", app.Status.OperationState.RetryCount)
	}
}

// pendingHook is a PreSync hook that never completes: a claim no storage
// class binds.
const pendingHook = `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: wait-forever
  annotations:
    argocd.argoproj.io/hook: PreSync
spec:
  storageClassName: no-such-class
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`

// setOperationPhase writes status.operationState.phase, as the API does
// to terminate an operation.
func setOperationPhase(t *testing.T, name string, phase v1alpha1.OperationPhase) {
	t.Helper()
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: name}}
	patch := []byte(`{"status":{"operationState":{"phase":"` + string(phase) + `"}}}`)
	if err := apps.Status().Patch(t.Context(), app, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// Terminating a sync whose hook runs forever deletes the hook and ends
// the operation Failed; the resources after the hook are never applied.
func TestTerminate(t *testing.T) {
	t.Parallel()
	const name = "terminate-app"
	dest, _ := newApp(t, name, map[string]string{"app/hook.yaml": pendingHook, "app/cm.yaml": configMap("DEST", name, "x")})
	requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	waitStatus(t, name, "waiting for the hook", func(s *v1alpha1.ApplicationStatus) bool {
		return s.OperationState != nil && strings.Contains(s.OperationState.Message, "waiting for completion of hook")
	})
	setOperationPhase(t, name, v1alpha1.OperationTerminating)
	app := waitStatus(t, name, "terminated", opDone(v1alpha1.OperationFailed))
	if app.Status.OperationState.Message != "operation terminated" || app.Operation != nil || len(app.Status.History) != 0 {
		t.Errorf("after terminate: message %q, operation %+v, history %d", app.Status.OperationState.Message, app.Operation, len(app.Status.History))
	}
	poll(t, "hook deleted", func(ctx context.Context) (bool, error) {
		pvc, err := cluster.Client.CoreV1().PersistentVolumeClaims(dest).Get(ctx, "wait-forever", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && pvc.DeletionTimestamp != nil, err
	})
	if _, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "settings", metav1.GetOptions{}); err == nil {
		t.Errorf("the ConfigMap after the hook was applied")
	}
}

// Rolling back to history entry 1 after a second sync syncs the first
// revision again and records it as entry 3; with auto-sync on a rollback
// is refused.
func TestRollback(t *testing.T) {
	t.Parallel()
	const name = "rollback-app"
	dir, dest, _ := newAppWith(t, name, map[string]string{"app/cm.yaml": configMap("DEST", name, "v1")}, nil)
	requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	first := waitStatus(t, name, "first sync", func(s *v1alpha1.ApplicationStatus) bool {
		return len(s.History) == 1 && s.OperationState.FinishedAt != nil
	})
	reposervertest.CommitMore(t, dir, map[string]string{"app/cm.yaml": configMap(dest, name, "v2")})
	refresh(t, name)
	waitStatus(t, name, "OutOfSync at the new commit", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Revision != first.Status.History[0].Revision && s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})
	requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	waitStatus(t, name, "second sync", func(s *v1alpha1.ApplicationStatus) bool {
		return len(s.History) == 2 && s.OperationState.FinishedAt != nil
	})
	mode := func() string {
		cm, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "settings", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cm.Data["mode"]
	}
	if got := mode(); got != "v2" {
		t.Fatalf("mode after the second sync %q", got)
	}

	// The API's rollback (apiserver/appops) writes the operation; the
	// controller runs it like any sync.
	ops := appops.Service{Client: apps}
	key := types.NamespacedName{Namespace: appNamespace, Name: name}
	if _, err := ops.Rollback(t.Context(), key, 1, v1alpha1.SyncOperation{}, v1alpha1.OperationInitiator{Username: "bob"}); err != nil {
		t.Fatal(err)
	}
	app := waitStatus(t, name, "rolled back", func(s *v1alpha1.ApplicationStatus) bool {
		return len(s.History) == 3 && s.OperationState.FinishedAt != nil
	})
	h := app.Status.History[2]
	if h.ID != 3 || h.Revision != first.Status.History[0].Revision || h.InitiatedBy.Username != "bob" {
		t.Errorf("rollback history entry %+v, want id 3 at revision %s", h, first.Status.History[0].Revision)
	}
	if got := mode(); got != "v1" {
		t.Errorf("mode after the rollback %q, want v1", got)
	}
	if _, err := ops.Rollback(t.Context(), key, 99, v1alpha1.SyncOperation{}, v1alpha1.OperationInitiator{}); !errors.Is(err, appops.ErrNoHistory) {
		t.Errorf("rollback to a missing id: %v, want %v", err, appops.ErrNoHistory)
	}
	if _, err := ops.Update(t.Context(), key, func(cur *v1alpha1.Application) error {
		cur.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Rollback(t.Context(), key, 1, v1alpha1.SyncOperation{}, v1alpha1.OperationInitiator{}); !errors.Is(err, appops.ErrRollbackAutoSync) {
		t.Errorf("rollback with auto-sync on: %v, want %v", err, appops.ErrRollbackAutoSync)
	}
}

// newProject creates an AppProject in the controller's namespace.
func newProject(t *testing.T, name string, spec v1alpha1.AppProjectSpec) {
	t.Helper()
	p := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: name}, Spec: spec}
	if err := apps.Create(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apps.Delete(context.Background(), p) })
}

// A project that does not permit the repository, the destination or a
// kind fails the sync with a clear message, and nothing is applied; an app
// of a project that does not exist cannot sync.
func TestProjectRefusesSync(t *testing.T) {
	t.Parallel()
	anyDest := []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}}
	cases := []struct {
		name, project string
		spec          *v1alpha1.AppProjectSpec
		phase         v1alpha1.OperationPhase
		message       string
	}{
		{"proj-repo", "only-github", &v1alpha1.AppProjectSpec{SourceRepos: []string{"https://github.com/example/*"}, Destinations: anyDest},
			v1alpha1.OperationFailed, "is not permitted in project 'only-github'"},
		{"proj-dest", "only-prod", &v1alpha1.AppProjectSpec{SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "prod"}}},
			v1alpha1.OperationFailed, "do not match any of the allowed destinations in project 'only-prod'"},
		{"proj-kind", "no-configmaps", &v1alpha1.AppProjectSpec{SourceRepos: []string{"*"}, Destinations: anyDest,
			NamespaceResourceBlacklist: []metav1.GroupKind{{Group: "", Kind: "ConfigMap"}}},
			v1alpha1.OperationFailed, "ConfigMap is not permitted in project no-configmaps"},
		{"proj-missing", "no-such-project", nil, v1alpha1.OperationError, "application references project no-such-project which does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.spec != nil {
				newProject(t, c.project, *c.spec)
			}
			_, dest, _ := newAppWith(t, c.name, map[string]string{
				"app/deploy.yaml": deployment("DEST", c.name),
				"app/cm.yaml":     configMap("DEST", c.name, "x"),
			}, func(a *v1alpha1.Application) { a.Spec.Project = c.project })
			requestSync(t, c.name, manual(v1alpha1.SyncOperation{}))
			app := waitStatus(t, c.name, "refused", opDone(c.phase))
			if msg := app.Status.OperationState.Message; !strings.Contains(msg, c.message) {
				t.Errorf("message %q, want it to contain %q", msg, c.message)
			}
			if _, err := cluster.Client.AppsV1().Deployments(dest).Get(t.Context(), "web", metav1.GetOptions{}); err == nil {
				t.Errorf("the Deployment was applied")
			}
			if c.name != "proj-kind" {
				// The spec itself is invalid: the app is never rendered
				// (so the repository is not fetched) nor compared.
				app := waitStatus(t, c.name, "InvalidSpecError", func(s *v1alpha1.ApplicationStatus) bool {
					return slices.ContainsFunc(s.Conditions, func(c2 v1alpha1.ApplicationCondition) bool {
						return c2.Type == v1alpha1.ApplicationConditionInvalidSpecError && strings.Contains(c2.Message, c.message)
					})
				})
				if len(app.Status.Resources) != 0 || app.Status.Sync.Revision != "" || app.Status.Sync.Status != v1alpha1.SyncStatusCodeUnknown {
					t.Errorf("the app was compared: sync %+v, %d resources", app.Status.Sync, len(app.Status.Resources))
				}
				return
			}
			// A refused kind is a refused task: the ConfigMap, and only
			// it, has a SyncFailed result that says why.
			st := app.Status.OperationState
			var got []string
			for _, r := range st.SyncResult.Resources {
				got = append(got, fmt.Sprintf("%s %s/%s %s", r.Kind, r.Namespace, r.Name, r.Status))
				if !strings.Contains(r.Message, c.message) {
					t.Errorf("result message %q, want it to contain %q", r.Message, c.message)
				}
			}
			if d := cmp.Diff(got, []string{"ConfigMap " + dest + "/settings SyncFailed"}); d != "" {
				t.Errorf("results (-got +want):\n%s\n%s", d, dumpState(st))
			}
		})
	}
}

// A deny window that is open blocks a manual sync: the operation waits
// with Argo CD's message and applies nothing.
func TestDenyWindowBlocksSync(t *testing.T) {
	t.Parallel()
	const name = "window-app"
	newProject(t, "frozen", v1alpha1.AppProjectSpec{
		SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		SyncWindows: []v1alpha1.SyncWindow{{Kind: "deny", Schedule: "* * * * *", Duration: "1h", Applications: []string{"*"}}},
	})
	_, dest, _ := newAppWith(t, name, map[string]string{"app/cm.yaml": configMap("DEST", name, "x")}, func(a *v1alpha1.Application) { a.Spec.Project = "frozen" })
	requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	app := waitStatus(t, name, "blocked", func(s *v1alpha1.ApplicationStatus) bool {
		return s.OperationState != nil && strings.HasPrefix(s.OperationState.Message, controller.MessageBlockedByWindow)
	})
	if app.Status.OperationState.Phase != v1alpha1.OperationRunning {
		t.Errorf("phase %s while blocked, want Running", app.Status.OperationState.Phase)
	}
	if _, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "settings", metav1.GetOptions{}); err == nil {
		t.Errorf("the ConfigMap was applied")
	}
	setOperationPhase(t, name, v1alpha1.OperationTerminating)
	waitStatus(t, name, "terminated", opDone(v1alpha1.OperationFailed))
}

// A controller stopped in the middle of a multi-wave sync leaves its
// progress in the status; a new controller finishes the sync without
// running again the hook that had succeeded. The test runs controllers of
// its own, for Applications in a namespace of its own.
func TestSyncSurvivesRestart(t *testing.T) {
	t.Parallel()
	const name = "restart-waves"
	ns := cluster.Namespace(t)
	newProjectIn := func() {
		p := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}}
		p.Spec.SourceRepos, p.Spec.Destinations = []string{"*"}, []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}}
		_ = apps.Create(t.Context(), p)
	}
	newProjectIn()
	dest := cluster.Namespace(t)
	dir, _ := reposervertest.CommitFiles(t, map[string]string{"app/waves.yaml": wavesApp})
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + dir, Path: "app", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: dest},
		},
		Operation: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}},
	}
	start := func() func() { return runPrivateController(t, ns, time.Second) }
	stop := start()
	if err := apps.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apps.Delete(context.Background(), app) })
	get := func() *v1alpha1.Application {
		var a v1alpha1.Application
		if err := apps.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: name}, &a); err != nil {
			t.Fatal(err)
		}
		return &a
	}
	var hook string
	poll(t, "the wave 1 hook succeeded", func(context.Context) (bool, error) {
		st := get().Status.OperationState
		if st == nil || st.SyncResult == nil {
			return false, nil
		}
		for _, r := range st.SyncResult.Resources {
			if r.SyncWave == 1 && r.HookPhase == v1alpha1.OperationSucceeded {
				hook = r.Name
				return true, nil
			}
		}
		return false, nil
	})
	stop()
	if st := get().Status.OperationState; st.Phase != v1alpha1.OperationRunning {
		b, _ := yaml.Marshal(st)
		t.Fatalf("the sync ended before the restart:\n%s", b)
	}
	before, err := cluster.Client.BatchV1().Jobs(dest).Get(t.Context(), hook, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	stop = start()
	defer stop()
	poll(t, "the sync finished after the restart", func(context.Context) (bool, error) {
		st := get().Status.OperationState
		return st != nil && st.FinishedAt != nil, nil
	})
	a := get()
	if a.Status.OperationState.Phase != v1alpha1.OperationSucceeded {
		b, _ := yaml.Marshal(a.Status.OperationState)
		t.Fatalf("the sync did not succeed after the restart:\n%s", b)
	}
	after, err := cluster.Client.BatchV1().Jobs(dest).Get(t.Context(), hook, metav1.GetOptions{})
	if err != nil || after.UID != before.UID {
		t.Errorf("the hook that had succeeded was run again (before %s, after %v, %v)", before.UID, after, err)
	}
	jobs, err := cluster.Client.BatchV1().Jobs(dest).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, j := range jobs.Items {
		if strings.HasPrefix(j.Name, "maintenance-on-") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d maintenance-on jobs, want 1", n)
	}
	if d := cmp.Diff(resultOrder(a.Status.OperationState, "schema-upgrade-", "maintenance-on-"), wavesOrder); d != "" {
		t.Errorf("recorded order (-got +want):\n%s", d)
	}
}

// The status that records a sync's end already compares what the sync
// wrote: the executor waits until the cluster cache has seen its writes,
// so the app is Synced in the same status write that says Succeeded, not
// OutOfSync with its new resources Missing until a later comparison. The
// test watches every version of the Application, so it sees that write.
func TestSyncEndsCompared(t *testing.T) {
	t.Parallel()
	const name = "sync-compared"
	files := map[string]string{}
	for i := range 4 {
		files[fmt.Sprintf("app/%d.yaml", i)] = fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: cm-%[1]d, namespace: DEST}
data: {n: "%[1]d"}
---
apiVersion: v1
kind: Secret
metadata: {name: secret-%[1]d, namespace: DEST}
stringData: {n: "%[1]d"}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: sa-%[1]d, namespace: DEST}
---
apiVersion: v1
kind: Service
metadata: {name: svc-%[1]d, namespace: DEST}
spec:
  ports: [{port: 80}]
`, i)
	}
	newApp(t, name, files)
	waitStatus(t, name, "OutOfSync", func(s *v1alpha1.ApplicationStatus) bool { return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync })
	versions := watchApp(t, name)
	requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	timeout := time.After(90 * time.Second)
	for {
		select {
		case <-timeout:
			t.Fatal("no status with the sync's end within 90 s")
		case app, ok := <-versions:
			if !ok {
				t.Fatal("the watch ended before the sync did")
			}
			st := app.Status.OperationState
			if st == nil || st.FinishedAt == nil {
				continue
			}
			if st.Phase != v1alpha1.OperationSucceeded {
				t.Fatalf("the sync ended %s: %s", st.Phase, st.Message)
			}
			var behind []string
			for _, r := range app.Status.Resources {
				if r.Status != v1alpha1.SyncStatusCodeSynced || (r.Health != nil && r.Health.Status == v1alpha1.HealthStatusMissing) {
					behind = append(behind, fmt.Sprintf("%s/%s %s", r.Kind, r.Name, r.Status))
				}
			}
			if app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || len(behind) > 0 || len(app.Status.Resources) != 4*len(files) {
				t.Errorf("the status that ends the sync: %s, %d resources, not synced: %v", app.Status.Sync.Status, len(app.Status.Resources), behind)
			}
			return
		}
	}
}

// runPrivateController runs a controller of its own for the apps of ns,
// as a restarted process would, until the returned stop is called.
func runPrivateController(t *testing.T, ns string, waveDelay time.Duration) (stop func()) {
	t.Helper()
	return runController(t, controller.Config{Namespace: ns, SyncWaveDelay: waveDelay})
}
