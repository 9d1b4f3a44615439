//go:build integration

package controller_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// An automated sync without hooks runs its first step in the reconcile
// that starts it: the status goes from the comparison straight to the
// ended operation, with no Running state written between (one status
// write fewer per synced app). A sync with a hook saves Running before
// the step that creates the hook, so a controller that stops then finds
// its hook again.
func TestOperationSavedBeforeHooksOnly(t *testing.T) {
	t.Parallel()
	const hook = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: before\n  namespace: %s\n  annotations: {argocd.argoproj.io/hook: PreSync}\ndata: {a: \"1\"}\n"
	gvr := v1alpha1.GroupVersion.WithResource("applications")
	for _, tc := range []struct {
		name      string
		hook      bool
		wantSaved bool
	}{
		{"opsave-plain", false, false},
		{"opsave-hook", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dest := cluster.Namespace(t)
			files := map[string]string{"app/cm.yaml": configMap(dest, tc.name, "prod")}
			if tc.hook {
				files["app/hook.yaml"] = fmt.Sprintf(hook, dest)
			}
			dir, _ := reposervertest.CommitFiles(t, files)
			w, err := dynamic.NewForConfigOrDie(cluster.Config).Resource(gvr).Namespace(appNamespace).
				Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=" + tc.name})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			createApp(t, tc.name, dir, dest, func(a *v1alpha1.Application) {
				a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}
			})
			var phases []v1alpha1.OperationPhase // each operation state written, in order
			timeout := time.After(90 * time.Second)
			for {
				var app v1alpha1.Application
				select {
				case ev, ok := <-w.ResultChan():
					u, isObj := ev.Object.(*unstructured.Unstructured)
					if !ok || !isObj {
						t.Fatalf("the watch ended (%v) after operation states %v", ev.Object, phases)
					}
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &app); err != nil {
						t.Fatal(err)
					}
				case <-timeout:
					t.Fatalf("no ended sync after 90 s; operation states written: %v", phases)
				}
				st := app.Status.OperationState
				if st == nil || (len(phases) > 0 && phases[len(phases)-1] == st.Phase) {
					continue
				}
				phases = append(phases, st.Phase)
				if st.Phase == v1alpha1.OperationRunning {
					continue
				}
				if st.Phase != v1alpha1.OperationSucceeded {
					t.Fatalf("the sync ended %s: %s", st.Phase, st.Message)
				}
				break
			}
			if saved := phases[0] == v1alpha1.OperationRunning; saved != tc.wantSaved {
				t.Errorf("operation states written %v: Running saved before the first step %v, want %v", phases, saved, tc.wantSaved)
			}
		})
	}
}
