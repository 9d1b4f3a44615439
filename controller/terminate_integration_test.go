//go:build integration

package controller_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	gosync "sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// terminateWaves is a sync in three waves: a ConfigMap, a Sync hook that
// never completes (a claim no storage class binds), and a ConfigMap that
// must never be applied once the sync is terminated.
const terminateWaves = `apiVersion: v1
kind: ConfigMap
metadata:
  name: first
data: {wave: "0"}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: wait-forever
  annotations:
    argocd.argoproj.io/hook: Sync
    argocd.argoproj.io/sync-wave: "1"
spec:
  storageClassName: no-such-class
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: last
  annotations:
    argocd.argoproj.io/sync-wave: "2"
data: {wave: "2"}
`

// roundTripFunc adapts a function to http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A person terminates a running multi-wave sync at the very moment the
// controller writes the sync's progress (the write that records the
// wave-1 hook): the terminate lands first, and the controller's write must
// not undo it. The operation ends Failed with "operation terminated", the
// hook is deleted and the last wave is never applied.
func TestTerminateDuringStatusWrite(t *testing.T) {
	t.Parallel()
	const name = "terminate-race"
	ns, dest := cluster.Namespace(t), cluster.Namespace(t)
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}}
	proj.Spec.SourceRepos, proj.Spec.Destinations = []string{"*"}, []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}}
	if err := apps.Create(t.Context(), proj); err != nil {
		t.Fatal(err)
	}
	dir, _ := reposervertest.CommitFiles(t, map[string]string{"app/waves.yaml": terminateWaves})
	key := types.NamespacedName{Namespace: ns, Name: name}
	statusPath := "/namespaces/" + ns + "/applications/" + name + "/status"
	var once gosync.Once
	injected := make(chan error, 1)
	wrap := func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method != http.MethodPatch || !strings.HasSuffix(req.URL.Path, statusPath) || req.Body == nil {
				return rt.RoundTrip(req)
			}
			body, err := io.ReadAll(req.Body)
			if err != nil {
				return nil, err
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`persistentvolumeclaim/wait-forever created`)) {
				once.Do(func() {
					// The person's terminate, through a client of its own.
					patch := []byte(`{"status":{"operationState":{"phase":"Terminating"}}}`)
					app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
					injected <- apps.Status().Patch(req.Context(), app, client.RawPatch(types.MergePatchType, patch))
				})
			}
			return rt.RoundTrip(req)
		})
	}
	stop := startOwnController(t, ns, repoSvc, wrap)
	defer stop()
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + dir, Path: "app", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: dest},
		},
		Operation: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}},
	}
	if err := apps.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apps.Delete(context.Background(), app) })
	var got v1alpha1.Application
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := yaml.Marshal(got.Status)
			t.Logf("last status read:\n%s", b)
		}
	})
	poll(t, "the operation ended", func(ctx context.Context) (bool, error) {
		if err := apps.Get(ctx, key, &got); err != nil {
			return false, err
		}
		st := got.Status.OperationState
		return st != nil && st.FinishedAt != nil && st.Phase != v1alpha1.OperationRunning && st.Phase != v1alpha1.OperationTerminating, nil
	})
	select {
	case err := <-injected:
		if err != nil {
			t.Fatalf("the concurrent terminate: %v", err)
		}
	default:
		t.Fatal("the controller never wrote the status that records the hook")
	}
	if st := got.Status.OperationState; st.Phase != v1alpha1.OperationFailed || st.Message != "operation terminated" {
		b, _ := yaml.Marshal(st)
		t.Errorf("want phase Failed with message %q; got:\n%s", "operation terminated", b)
	}
	poll(t, "hook deleted", func(ctx context.Context) (bool, error) {
		pvc, err := cluster.Client.CoreV1().PersistentVolumeClaims(dest).Get(ctx, "wait-forever", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && pvc.DeletionTimestamp != nil, err
	})
	if !exists(t, dest, "ConfigMap", "first") {
		t.Error("wave 0 was not applied")
	}
	if exists(t, dest, "ConfigMap", "last") {
		t.Error("the last wave was applied after the terminate")
	}
}
