//go:build integration

package controller_test

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// An app annotated argocd.argoproj.io/skip-reconcile (any true value of
// strconv.ParseBool, as Argo CD reads it) is not processed at all: its
// requested sync does not run and no status is written, while an app
// created after it is synced. Once the annotation goes, the sync runs.
func TestSkipReconcile(t *testing.T) {
	t.Parallel()
	const skipped, other = "skip-reconcile", "skip-reconcile-neighbour"
	op := manual(v1alpha1.SyncOperation{})
	_, dest, _ := newAppWith(t, skipped, map[string]string{"app/cm.yaml": configMap("DEST", skipped, "prod")}, func(a *v1alpha1.Application) {
		a.Annotations = map[string]string{v1alpha1.SkipReconcileAnnotation: "True"}
		a.Operation = &op
	})
	newAppWith(t, other, map[string]string{"app/cm.yaml": configMap("DEST", other, "prod")}, func(a *v1alpha1.Application) { a.Operation = &op })
	waitStatus(t, other, "the neighbour synced", opDone(v1alpha1.OperationSucceeded))

	app := getApp(t, skipped)
	if app.Operation == nil || app.Status.OperationState != nil || app.Status.Sync.Status != "" || app.Status.ReconciledAt != nil {
		t.Errorf("the skipped app was processed: operation %v, status %+v", app.Operation, app.Status)
	}
	if configMapExists(t, dest, "settings") {
		t.Error("the skipped app's sync applied its ConfigMap")
	}

	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{v1alpha1.SkipReconcileAnnotation: nil}}})
	if err != nil {
		t.Fatal(err)
	}
	obj := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: skipped}}
	if err := apps.Patch(t.Context(), obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, skipped, "the sync once the annotation is gone", opDone(v1alpha1.OperationSucceeded))
	if !configMapExists(t, dest, "settings") {
		t.Error("the sync after the annotation went did not apply the ConfigMap")
	}
}
