//go:build integration

package controller_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
)

// gatedJob is a hook Job whose pod can only run on a node labelled gate:
// it stays running until the test opens the gate (see openGate).
func gatedJob(meta, hook, gate string) string {
	return `apiVersion: batch/v1
kind: Job
metadata:
  ` + meta + `
  namespace: DEST
  annotations:
    argocd.argoproj.io/hook: ` + hook + `
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {"` + gate + `": open}
      containers: [{name: hook, image: registry.example.com/tools/hook:1}]
`
}

// openGate labels a KWOK node with gate, so the pods waiting for it run
// (and complete); the label is removed when the test ends.
func openGate(t *testing.T, gate string) {
	t.Helper()
	patch := []byte(`{"metadata":{"labels":{"` + gate + `":"open"}}}`)
	if _, err := cluster.Client.CoreV1().Nodes().Patch(t.Context(), "kwok-node-0", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		patch := []byte(`{"metadata":{"labels":{"` + gate + `":null}}}`)
		_, _ = cluster.Client.CoreV1().Nodes().Patch(context.Background(), "kwok-node-0", types.MergePatchType, patch, metav1.PatchOptions{})
	})
}

// liveJobs lists the Jobs of dest whose name starts with prefix and that
// are not being deleted.
func liveJobs(ctx context.Context, t *testing.T, dest, prefix string) []batchv1.Job {
	t.Helper()
	list, err := cluster.Client.BatchV1().Jobs(dest).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []batchv1.Job
	for _, j := range list.Items {
		if strings.HasPrefix(j.Name, prefix) && j.DeletionTimestamp == nil {
			out = append(out, j)
		}
	}
	return out
}

// syncedWithDeletionHooks creates an app with a ConfigMap and the given
// hooks and a cascade finalizer, syncs it, and waits until the
// controller added the deletion hook finalizers want.
func syncedWithDeletionHooks(t *testing.T, name string, hooks map[string]string, want ...string) (dest string) {
	t.Helper()
	files := map[string]string{"app/cm.yaml": configMap("DEST", name, "prod")}
	for k, v := range hooks {
		files[k] = v
	}
	_, dest, _ = newAppWith(t, name, files, func(a *v1alpha1.Application) {
		a.Finalizers = []string{v1alpha1.ArgoResourcesFinalizer}
	})
	requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	app := waitStatus(t, name, "synced", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	// Deletion hooks are neither applied by a sync nor compared.
	if len(app.Status.Resources) != 1 || app.Status.Resources[0].Kind != "ConfigMap" {
		t.Errorf("resources %+v, want only the ConfigMap", app.Status.Resources)
	}
	for _, r := range app.Status.OperationState.SyncResult.Resources {
		if r.HookType != "" {
			t.Errorf("the sync ran hook %s %s", r.Kind, r.Name)
		}
	}
	if jobs := liveJobs(t.Context(), t, dest, ""); len(jobs) != 0 {
		t.Errorf("the sync created %d Jobs, want none", len(jobs))
	}
	poll(t, "the deletion hook finalizers are added", func(ctx context.Context) (bool, error) {
		var a v1alpha1.Application
		if err := apps.Get(ctx, types.NamespacedName{Namespace: appNamespace, Name: name}, &a); err != nil {
			return false, err
		}
		for _, f := range want {
			if !slices.Contains(a.Finalizers, f) {
				return false, nil
			}
		}
		return true, nil
	})
	return dest
}

// appExists reports whether the Application still exists.
func appExists(t *testing.T, name string) bool {
	t.Helper()
	var a v1alpha1.Application
	err := apps.Get(t.Context(), types.NamespacedName{Namespace: appNamespace, Name: name}, &a)
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// Deleting an app runs its PreDelete hook before its resources are
// deleted and its PostDelete hook after they are gone; the Application
// goes away only once the PostDelete hook completed, and both hooks are
// deleted once they succeeded (the default policy of deletion hooks).
func TestDeletionHooks(t *testing.T) {
	t.Parallel()
	const name = "deletion-hooks"
	preGate, postGate := "gate.graphcd.io/"+name+"-pre", "gate.graphcd.io/"+name+"-post"
	dest := syncedWithDeletionHooks(t, name, map[string]string{
		"app/pre.yaml":  gatedJob("generateName: backup-", "PreDelete", preGate),
		"app/post.yaml": gatedJob("name: goodbye", "PostDelete", postGate),
	}, controller.PreDeleteFinalizer, controller.PostDeleteFinalizer)

	if err := apps.Delete(t.Context(), &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: name}}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the PreDelete hook runs", func(ctx context.Context) (bool, error) {
		return len(liveJobs(ctx, t, dest, "backup-")) == 1, nil
	})
	if !exists(t, dest, "ConfigMap", "settings") {
		t.Fatal("the resources were deleted while the PreDelete hook ran")
	}
	if len(liveJobs(t.Context(), t, dest, "goodbye")) != 0 {
		t.Fatal("the PostDelete hook ran before the resources were deleted")
	}

	openGate(t, preGate)
	poll(t, "the resources are deleted", func(context.Context) (bool, error) {
		return !exists(t, dest, "ConfigMap", "settings"), nil
	})
	poll(t, "the PostDelete hook runs", func(ctx context.Context) (bool, error) {
		return len(liveJobs(ctx, t, dest, "goodbye")) == 1, nil
	})
	if n := len(liveJobs(t.Context(), t, dest, "backup-")); n != 0 {
		t.Errorf("%d PreDelete hooks left after they succeeded, want them deleted", n)
	}
	if !appExists(t, name) {
		t.Fatal("the Application went away before its PostDelete hook completed")
	}

	openGate(t, postGate)
	poll(t, "the Application is gone", func(context.Context) (bool, error) { return !appExists(t, name), nil })
	poll(t, "the PostDelete hook is deleted", func(ctx context.Context) (bool, error) {
		return len(liveJobs(ctx, t, dest, "goodbye")) == 0, nil
	})
}

// A PreDelete hook that fails stops the deletion: the Application stays
// with a DeletionError condition naming the hook, and its resources are
// kept.
func TestFailedPreDeleteHookKeepsResources(t *testing.T) {
	t.Parallel()
	const name = "deletion-hook-fails"
	failing := strings.Replace(gatedJob("generateName: refuse-", "PreDelete", "gate.graphcd.io/never"), "backoffLimit: 0", "backoffLimit: 0\n  activeDeadlineSeconds: 1", 1)
	dest := syncedWithDeletionHooks(t, name, map[string]string{"app/pre.yaml": failing}, controller.PreDeleteFinalizer)
	key := types.NamespacedName{Namespace: appNamespace, Name: name}
	t.Cleanup(func() {
		// Let the Application go: remove every finalizer.
		var a v1alpha1.Application
		if err := apps.Get(context.Background(), key, &a); err == nil {
			_ = apps.Patch(context.Background(), &a, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
		}
	})

	if err := apps.Delete(t.Context(), &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: name}}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, name, "DeletionError naming the failed hook", func(s *v1alpha1.ApplicationStatus) bool {
		return hasCondition(s, v1alpha1.ApplicationConditionDeletionError, "PreDelete hooks failed: Job "+dest+"/refuse-") &&
			hasCondition(s, v1alpha1.ApplicationConditionDeletionError, "resources are kept")
	})
	if !exists(t, dest, "ConfigMap", "settings") {
		t.Error("the resources were deleted although the PreDelete hook failed")
	}
	if !appExists(t, name) {
		t.Error("the Application went away although its PreDelete hook failed")
	}
	if n := len(liveJobs(t.Context(), t, dest, "refuse-")); n != 1 {
		t.Errorf("%d failed PreDelete hooks, want the one kept for inspection", n)
	}
}
