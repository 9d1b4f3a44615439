//go:build integration

package controller_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// End-to-end sync scenarios through the controller TestMain runs: each
// commits an app to a Git repository, asks for a sync the way the API
// does and judges the outcome from status.operationState and the cluster.

// syncResults renders the recorded results as "SyncPhase wave Kind name
// hookPhase status", generated name suffixes replaced by "*".
func syncResults(st *v1alpha1.OperationState, generated ...string) []string {
	out := resultOrder(st, generated...)
	for i, r := range st.SyncResult.Resources {
		out[i] += " " + string(r.Status)
	}
	return out
}

// dumpState is the operation state as YAML, for failure messages.
func dumpState(st *v1alpha1.OperationState) string {
	b, _ := yaml.Marshal(st)
	return string(b)
}

// configMapExists reports whether ConfigMap ns/name exists on the
// management cluster.
func configMapExists(t *testing.T, ns, name string) bool {
	t.Helper()
	_, err := cluster.Client.CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// namedConfigMap is configMap with another name and extra annotations.
func namedConfigMap(ns, app, name string, annotations map[string]string) string {
	all := map[string]string{"argocd.argoproj.io/tracking-id": app + ":/ConfigMap:" + ns + "/" + name}
	maps.Copy(all, annotations)
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n  annotations:\n", name, ns)
	for _, k := range slices.Sorted(maps.Keys(all)) {
		fmt.Fprintf(&b, "    %s: %q\n", k, all[k])
	}
	b.WriteString("data:\n  mode: \"x\"\n")
	return b.String()
}

// helmHookJob is a Helm chart template of a hook Job with a weight.
func helmHookJob(name, hook, weight string) string {
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-%[1]s
  annotations:
    helm.sh/hook: %[2]s
    helm.sh/hook-weight: "%[3]s"
    helm.sh/hook-delete-policy: before-hook-creation
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: %[1]s, image: {{ .Values.image | quote }}}]
`, name, hook, weight)
}

// A Helm chart in Git with two pre-install hooks (weights -2 and -1) and
// a post-install hook syncs in Argo CD's order: the PreSync hooks by
// weight, then the chart's resources, then the PostSync hook.
func TestHelmChartHooksOrder(t *testing.T) {
	t.Parallel()
	const name = "helm-hooks"
	dest, _ := newApp(t, name, map[string]string{
		"app/Chart.yaml":  "apiVersion: v2\nname: shop\nversion: 0.1.0\n",
		"app/values.yaml": "image: registry.example.com/shop/tools:1.0\nmode: prod\n",
		"app/templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  mode: {{ .Values.mode | quote }}
`,
		"app/templates/migrate.yaml": helmHookJob("migrate", "pre-install", "-1"),
		"app/templates/backup.yaml":  helmHookJob("backup", "pre-install,pre-upgrade", "-2"),
		"app/templates/smoke.yaml":   helmHookJob("smoke", "post-install", "0"),
	})
	waitStatus(t, name, "compared as a Helm chart", func(s *v1alpha1.ApplicationStatus) bool {
		return s.SourceType == v1alpha1.ApplicationSourceTypeHelm && s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})
	requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	app := waitStatus(t, name, "synced", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	want := []string{
		"PreSync -2 Job helm-hooks-backup Succeeded Synced",
		"PreSync -1 Job helm-hooks-migrate Succeeded Synced",
		"Sync 0 ConfigMap helm-hooks-settings Running Synced",
		"PostSync 0 Job helm-hooks-smoke Succeeded Synced",
	}
	if d := cmp.Diff(syncResults(app.Status.OperationState), want); d != "" {
		t.Errorf("recorded order (-got +want):\n%s\n%s", d, dumpState(app.Status.OperationState))
	}
	// Every hook ran: its Job is there (before-hook-creation keeps it).
	for _, job := range []string{"helm-hooks-backup", "helm-hooks-migrate", "helm-hooks-smoke"} {
		if _, err := cluster.Client.BatchV1().Jobs(dest).Get(t.Context(), job, metav1.GetOptions{}); err != nil {
			t.Errorf("hook Job %s: %v", job, err)
		}
	}
}

// syncFailHook is a SyncFail hook: a ConfigMap that records the failure.
const syncFailHook = `apiVersion: v1
kind: ConfigMap
metadata:
  name: sync-failed
  annotations:
    argocd.argoproj.io/hook: SyncFail
data:
  alert: "the sync failed"
`

// rejectedConfigMap is a ConfigMap the API server refuses: its data key
// is not a valid key.
const rejectedConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: rejected
data:
  "not a valid key!": "x"
`

// A SyncFail hook runs when a sync fails (here the API server rejects a
// resource) and is recorded in the SyncFail phase; when the sync succeeds
// it does not run at all.
func TestSyncFailHook(t *testing.T) {
	t.Parallel()
	t.Run("failing", func(t *testing.T) {
		t.Parallel()
		const name = "syncfail-runs"
		dest, _ := newApp(t, name, map[string]string{
			"app/hook.yaml": syncFailHook,
			"app/bad.yaml":  rejectedConfigMap,
		})
		requestSync(t, name, manual(v1alpha1.SyncOperation{}))
		app := waitStatus(t, name, "failed", opDone(v1alpha1.OperationFailed))
		st := app.Status.OperationState
		var rejected, hook *v1alpha1.ResourceResult
		for i := range st.SyncResult.Resources {
			switch r := &st.SyncResult.Resources[i]; r.Name {
			case "rejected":
				rejected = r
			case "sync-failed":
				hook = r
			}
		}
		if rejected == nil || rejected.Status != v1alpha1.ResultCodeSyncFailed || !strings.Contains(rejected.Message, "not a valid key!") {
			t.Errorf("result of the rejected ConfigMap %+v, want SyncFailed naming the bad key\n%s", rejected, dumpState(st))
		}
		if hook == nil || hook.SyncPhase != v1alpha1.SyncPhaseSyncFail || hook.HookPhase != v1alpha1.OperationSucceeded {
			t.Errorf("result of the SyncFail hook %+v, want it run in the SyncFail phase\n%s", hook, dumpState(st))
		}
		if !configMapExists(t, dest, "sync-failed") {
			t.Errorf("the SyncFail hook was not created")
		}
	})
	t.Run("succeeding", func(t *testing.T) {
		t.Parallel()
		const name = "syncfail-idle"
		dest, _ := newApp(t, name, map[string]string{
			"app/hook.yaml": syncFailHook,
			"app/cm.yaml":   configMap("DEST", name, "prod"),
		})
		requestSync(t, name, manual(v1alpha1.SyncOperation{}))
		app := waitStatus(t, name, "succeeded", opDone(v1alpha1.OperationSucceeded))
		if got, want := syncResults(app.Status.OperationState), []string{"Sync 0 ConfigMap settings Running Synced"}; !slices.Equal(got, want) {
			t.Errorf("results %v, want %v", got, want)
		}
		if configMapExists(t, dest, "sync-failed") {
			t.Errorf("the SyncFail hook ran although the sync succeeded")
		}
	})
}

// A selective sync (operation.sync.resources) of one of two resources
// applies only that one; the other stays missing and the app OutOfSync.
func TestSelectiveSync(t *testing.T) {
	t.Parallel()
	const name = "selective"
	dest, _ := newApp(t, name, map[string]string{
		"app/a.yaml": namedConfigMap("DEST", name, "chosen", nil),
		"app/b.yaml": namedConfigMap("DEST", name, "left-out", nil),
	})
	waitStatus(t, name, "OutOfSync", func(s *v1alpha1.ApplicationStatus) bool { return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync })
	requestSync(t, name, manual(v1alpha1.SyncOperation{
		Resources: []v1alpha1.SyncOperationResource{{Kind: "ConfigMap", Namespace: dest, Name: "chosen"}},
	}))
	app := waitStatus(t, name, "synced selectively", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})
	if got, want := syncResults(app.Status.OperationState), []string{"Sync 0 ConfigMap chosen Running Synced"}; !slices.Equal(got, want) {
		t.Errorf("results %v, want %v", got, want)
	}
	if !configMapExists(t, dest, "chosen") {
		t.Errorf("the chosen ConfigMap was not applied")
	}
	if configMapExists(t, dest, "left-out") {
		t.Errorf("the ConfigMap outside the selection was applied")
	}
}

// A dry run validates every resource with the API server and creates
// nothing: the operation Succeeds with a result per resource and the app
// stays OutOfSync.
func TestDryRunSync(t *testing.T) {
	t.Parallel()
	const name = "dry-run"
	dest, _ := newApp(t, name, map[string]string{
		"app/deploy.yaml": deployment("DEST", name),
		"app/cm.yaml":     configMap("DEST", name, "prod"),
		"app/hook.yaml":   pendingHook,
	})
	requestSync(t, name, manual(v1alpha1.SyncOperation{DryRun: true}))
	app := waitStatus(t, name, "dry run done", opDone(v1alpha1.OperationSucceeded))
	st := app.Status.OperationState
	var kinds []string
	for _, r := range st.SyncResult.Resources {
		kinds = append(kinds, r.Kind+"/"+r.Name)
		if r.Status != v1alpha1.ResultCodeSynced {
			t.Errorf("result of %s/%s: %s %q, want Synced", r.Kind, r.Name, r.Status, r.Message)
		}
	}
	if want := []string{"ConfigMap/settings", "Deployment/web"}; !slices.Equal(kinds, want) {
		t.Errorf("dry-run results %v, want %v (hooks do not run)\n%s", kinds, want, dumpState(st))
	}
	if configMapExists(t, dest, "settings") {
		t.Errorf("a dry run created the ConfigMap")
	}
	if _, err := cluster.Client.AppsV1().Deployments(dest).Get(t.Context(), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a dry run created the Deployment (err %v)", err)
	}
	if _, err := cluster.Client.CoreV1().PersistentVolumeClaims(dest).Get(t.Context(), "wait-forever", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a dry run ran the hook (err %v)", err)
	}
	if len(app.Status.History) != 0 || app.Status.Sync.Status != v1alpha1.SyncStatusCodeOutOfSync {
		t.Errorf("after a dry run: %d history entries, sync %s; want none and OutOfSync", len(app.Status.History), app.Status.Sync.Status)
	}
}

// Removing files from Git and syncing with prune deletes their objects: a
// plain one with the other resources of its wave, one marked
// PruneLast=true only after every other task, the resource of a later
// wave included.
func TestPruneLastOrder(t *testing.T) {
	t.Parallel()
	const name = "prune-last"
	late := map[string]string{"argocd.argoproj.io/sync-wave": "1"}
	last := map[string]string{"argocd.argoproj.io/sync-options": "PruneLast=true"}
	dir, dest, _ := newAppWith(t, name, map[string]string{
		"app/keep.yaml":  namedConfigMap("DEST", name, "keep", nil),
		"app/late.yaml":  namedConfigMap("DEST", name, "late", late),
		"app/early.yaml": namedConfigMap("DEST", name, "gone-early", nil),
		"app/last.yaml":  namedConfigMap("DEST", name, "gone-last", last),
	}, nil)
	requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	first := waitStatus(t, name, "first sync", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	for _, f := range []string{"early.yaml", "last.yaml"} {
		if err := os.Remove(filepath.Join(dir, "app", f)); err != nil {
			t.Fatal(err)
		}
	}
	// keep changes so that it is applied again in the second sync.
	sha := reposervertest.CommitMore(t, dir, map[string]string{"app/keep.yaml": strings.Replace(namedConfigMap(dest, name, "keep", nil), `"x"`, `"y"`, 1)})
	refresh(t, name)
	waitStatus(t, name, "OutOfSync at the new commit", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Revision == sha && s.Sync.Revision != first.Status.Sync.Revision && s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})
	requestSync(t, name, manual(v1alpha1.SyncOperation{Prune: true}))
	app := waitStatus(t, name, "pruned", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.OperationState.SyncResult.Revision == sha && s.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	st := app.Status.OperationState
	var order []string
	for _, r := range st.SyncResult.Resources {
		order = append(order, fmt.Sprintf("%s %d %s %s", r.SyncPhase, r.SyncWave, r.Name, r.Status))
	}
	// Argo CD numbers the PruneLast wave one past the last wave.
	want := []string{
		"Sync 0 gone-early Pruned",
		"Sync 0 keep Synced",
		"Sync 1 late Synced",
		"Sync 2 gone-last Pruned",
	}
	if d := cmp.Diff(order, want); d != "" {
		t.Errorf("recorded order (-got +want):\n%s\n%s", d, dumpState(st))
	}
	for _, cm := range []string{"gone-early", "gone-last"} {
		poll(t, cm+" deleted", func(context.Context) (bool, error) {
			return !configMapExists(t, dest, cm), nil
		})
	}
}

// badAnnotations are sync annotations the planner refuses, with the
// message it gives.
var badAnnotations = []struct {
	name, annotation, value, message string
}{
	{"bad-hook", "argocd.argoproj.io/hook", "PreSnyc", `annotation argocd.argoproj.io/hook: unknown hook type "PreSnyc"`},
	{"bad-wave", "argocd.argoproj.io/sync-wave", "first", `annotation argocd.argoproj.io/sync-wave: "first" is not an integer`},
}

// syncBadAnnotation syncs an app of two ConfigMaps, "bad" carrying
// annotation=value, and returns the finished operation state after
// checking that it did not succeed and that nothing was applied.
func syncBadAnnotation(t *testing.T, name, annotation, value string) (dest string, _ *v1alpha1.OperationState) {
	t.Helper()
	dest, _ = newApp(t, name, map[string]string{
		"app/good.yaml": namedConfigMap("DEST", name, "good", nil),
		"app/bad.yaml":  namedConfigMap("DEST", name, "bad", map[string]string{annotation: value}),
	})
	requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	app := waitStatus(t, name, "refused", func(s *v1alpha1.ApplicationStatus) bool {
		return s.OperationState != nil && s.OperationState.FinishedAt != nil
	})
	st := app.Status.OperationState
	if st.Phase != v1alpha1.OperationFailed {
		t.Errorf("phase %s, want Failed\n%s", st.Phase, dumpState(st))
	}
	for _, cm := range []string{"good", "bad"} {
		if configMapExists(t, dest, cm) {
			t.Errorf("ConfigMap %s was applied", cm)
		}
	}
	return dest, st
}

// Bad sync annotations fail the sync before anything is applied, with a
// message that names the resource that carries them: an unknown hook type
// and a sync wave that is not an integer.
func TestBadAnnotationsApplyNothing(t *testing.T) {
	t.Parallel()
	for _, c := range badAnnotations {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dest, st := syncBadAnnotation(t, c.name, c.annotation, c.value)
			if want := "ConfigMap " + dest + "/bad: " + c.message; !strings.Contains(st.Message, want) {
				t.Errorf("operation message %q, want it to contain %q", st.Message, want)
			}
		})
	}
}

// As in Argo CD, each resource refused for its annotations also gets a
// SyncFailed result with the message in syncResult.resources.
func TestBadAnnotationsResultPerResource(t *testing.T) {
	t.Parallel()
	for _, c := range badAnnotations {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, st := syncBadAnnotation(t, c.name+"-result", c.annotation, c.value)
			var bad *v1alpha1.ResourceResult
			if st.SyncResult != nil {
				for i := range st.SyncResult.Resources {
					if r := &st.SyncResult.Resources[i]; r.Name == "bad" {
						bad = r
					}
				}
			}
			if bad == nil || bad.Status != v1alpha1.ResultCodeSyncFailed || !strings.Contains(bad.Message, c.message) {
				t.Errorf("result of the bad ConfigMap %+v, want SyncFailed with a message containing %q\n%s", bad, c.message, dumpState(st))
			}
		})
	}
}
