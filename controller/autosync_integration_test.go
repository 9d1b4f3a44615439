//go:build integration

package controller_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// autoApp creates an app with an automated sync policy.
func autoApp(t *testing.T, name string, auto v1alpha1.SyncPolicyAutomated, files map[string]string) (dir, dest string) {
	t.Helper()
	dir, dest, _ = newAppWith(t, name, files, func(a *v1alpha1.Application) {
		a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &auto}
	})
	return dir, dest
}

// refresh asks for a refresh, as `argocd app get --refresh` does.
func refresh(t *testing.T, name string) {
	t.Helper()
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: name}}
	patch := []byte(`{"metadata":{"annotations":{"` + v1alpha1.RefreshAnnotation + `":"normal"}}}`)
	if err := apps.Patch(t.Context(), app, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// Auto-sync deploys a new app, and with prune deletes the resource whose
// file is removed from Git.
func TestAutoSyncPrunes(t *testing.T) {
	t.Parallel()
	const name = "auto-prune"
	dir, dest := autoApp(t, name, v1alpha1.SyncPolicyAutomated{Prune: true}, map[string]string{
		"app/cm.yaml":    configMap("DEST", name, "prod"),
		"app/extra.yaml": strings.ReplaceAll(configMap("DEST", name, "x"), "name: settings", "name: extra"),
	})
	first := waitStatus(t, name, "auto-synced", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	if by := first.Status.History[0].InitiatedBy; !by.Automated {
		t.Errorf("history initiatedBy %+v, want automated", by)
	}
	if err := os.Remove(filepath.Join(dir, "app", "extra.yaml")); err != nil {
		t.Fatal(err)
	}
	sha := reposervertest.CommitMore(t, dir, nil)
	refresh(t, name)
	app := waitStatus(t, name, "synced to the new commit", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.OperationState.SyncResult.Revision == sha && s.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	if _, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "extra", metav1.GetOptions{}); err == nil {
		t.Errorf("the ConfigMap removed from Git was not pruned")
	}
	if len(app.Status.History) != 2 || app.Status.History[1].ID != 2 {
		t.Errorf("history %+v, want ids 1 and 2", app.Status.History)
	}
}

// scaleWeb sets the replicas of the app's Deployment by hand.
func scaleWeb(t *testing.T, dest string, replicas int32) {
	t.Helper()
	patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
	if _, err := cluster.Client.AppsV1().Deployments(dest).Patch(t.Context(), "web", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Self-heal puts back a Deployment edited by hand; without self-heal the
// edit stays and the app stays OutOfSync.
func TestSelfHeal(t *testing.T) {
	t.Parallel()
	for _, heal := range []bool{true, false} {
		t.Run(fmt.Sprintf("selfHeal=%v", heal), func(t *testing.T) {
			t.Parallel()
			name := fmt.Sprintf("heal-%v", heal)
			_, dest := autoApp(t, name, v1alpha1.SyncPolicyAutomated{SelfHeal: heal}, map[string]string{"app/deploy.yaml": deployment("DEST", name)})
			waitStatus(t, name, "auto-synced", func(s *v1alpha1.ApplicationStatus) bool {
				return opDone(v1alpha1.OperationSucceeded)(s) && s.Sync.Status == v1alpha1.SyncStatusCodeSynced
			})
			scaleWeb(t, dest, 5)
			if !heal {
				waitStatus(t, name, "OutOfSync after the edit", func(s *v1alpha1.ApplicationStatus) bool { return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync })
				// The self-heal backoff is 5 s; twice that without a
				// sync shows none comes.
				time.Sleep(10 * time.Second)
				app := getApp(t, name)
				if len(app.Status.History) != 1 || app.Status.Sync.Status != v1alpha1.SyncStatusCodeOutOfSync {
					t.Errorf("without selfHeal: history %d entries, sync %s; want 1 and OutOfSync", len(app.Status.History), app.Status.Sync.Status)
				}
				return
			}
			waitStatus(t, name, "healed", func(s *v1alpha1.ApplicationStatus) bool {
				return len(s.History) == 2 && s.Sync.Status == v1alpha1.SyncStatusCodeSynced
			})
			d, err := cluster.Client.AppsV1().Deployments(dest).Get(t.Context(), "web", metav1.GetOptions{})
			if err != nil || *d.Spec.Replicas != 2 {
				t.Errorf("replicas after self-heal: %v %v, want 2", d.Spec.Replicas, err)
			}
		})
	}
}

// An automated sync is started in the status write that records the
// comparison deciding it: the app's status goes from nothing to OutOfSync
// with the sync Running, then to the sync's end, two writes in all, and
// the request is on the app before the status that starts it. The test
// watches every version of the Application.
func TestAutoSyncStartsWithComparison(t *testing.T) {
	t.Parallel()
	const name = "autosync-started"
	dest := cluster.Namespace(t)
	dir, _ := reposervertest.CommitFiles(t, map[string]string{"app/cm.yaml": configMap(dest, name, "prod")})
	versions := watchApp(t, name)
	createApp(t, name, dir, dest, func(a *v1alpha1.Application) {
		a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}
	})
	// Each status written, as "<sync status>/<operation phase>".
	var written []string
	var last v1alpha1.ApplicationStatus
	timeout := time.After(90 * time.Second)
	for {
		var app *v1alpha1.Application
		select {
		case <-timeout:
			t.Fatalf("no ended sync within 90 s; statuses written: %v", written)
		case v, ok := <-versions:
			if !ok {
				t.Fatalf("the watch ended after statuses %v", written)
			}
			app = v
		}
		st := app.Status.DeepCopy()
		st.ReconciledAt = last.ReconciledAt
		if equality.Semantic.DeepEqual(*st, last) {
			continue
		}
		last = app.Status
		op := app.Status.OperationState
		phase := v1alpha1.OperationPhase("none")
		if op != nil {
			phase = op.Phase
		}
		written = append(written, fmt.Sprintf("%s/%s", app.Status.Sync.Status, phase))
		if phase == v1alpha1.OperationRunning && (app.Operation == nil || !op.Operation.InitiatedBy.Automated) {
			t.Errorf("the status starts operation %+v; the app requests %+v", op.Operation, app.Operation)
		}
		if op != nil && op.FinishedAt != nil {
			break
		}
	}
	want := []string{"OutOfSync/Running", "Synced/Succeeded"}
	if d := cmp.Diff(written, want); d != "" {
		t.Errorf("statuses written (-got +want):\n%s", d)
	}
}
