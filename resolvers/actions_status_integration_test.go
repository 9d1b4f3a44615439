//go:build integration

package resolvers_test

import (
	"context"
	"errors"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/appstate"
)

var rollouts = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}

// installRolloutCRD serves argoproj.io Rollouts with a status subresource,
// as Argo Rollouts' own CRD does (its schema left open).
func installRolloutCRD(t *testing.T) {
	t.Helper()
	cs := apiextensionsclientset.NewForConfigOrDie(cluster.Config)
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "rollouts.argoproj.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "argoproj.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "rollouts", Singular: "rollout", Kind: "Rollout", ListKind: "RolloutList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1alpha1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: new(true),
				}},
			}},
		},
	}
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(t.Context(), crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	eventually(t, "the Rollout kind served", func() error {
		_, err := dynamic.NewForConfigOrDie(cluster.Config).Resource(rollouts).Namespace("default").List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return errors.Join(errNotYet, err)
		}
		return nil
	})
}

// An Argo Rollouts action that changes status (promote-full, a pause
// step's resume) reaches the status subresource, where a plain patch of
// the object would be dropped.
func TestResourceActionWritesStatus(t *testing.T) {
	t.Parallel()
	installRolloutCRD(t)
	ns := cluster.Namespace(t)
	dyn := dynamic.NewForConfigOrDie(cluster.Config).Resource(rollouts).Namespace(ns)
	r := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": "canary"},
		"spec":     map[string]any{"replicas": int64(3)},
	}}
	created, err := dyn.Create(t.Context(), r, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Object["status"] = map[string]any{"pauseConditions": []any{map[string]any{"reason": "CanaryPauseStep"}}, "controllerPause": true}
	if _, err := dyn.UpdateStatus(t.Context(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	actionProject(t, ns, "ops")
	st := appstate.State{App: types.NamespacedName{Namespace: ns, Name: "canary"}, ReconciledAt: time.Now(), Managed: []appstate.ManagedResource{
		{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout", Namespace: ns, Name: "canary", Status: v1alpha1.SyncStatusCodeSynced},
	}}
	if err := states.Put(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	createApps(t, ns, appSpec{name: "canary", project: "ops"})
	waitCount(t, ns, 1)
	run := func(action string) {
		t.Helper()
		var got struct{ RunResourceAction []actionChange }
		data(t, runAction, map[string]any{"in": actionInput("canary", ns, "argoproj.io", "Rollout", "canary"), "a": action, "p": []any{}}, &got)
	}
	read := func() *unstructured.Unstructured {
		t.Helper()
		u, err := dyn.Get(context.WithoutCancel(t.Context()), "canary", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}

	run("promote-full")
	if v, _, _ := unstructured.NestedBool(read().Object, "status", "promoteFull"); !v {
		t.Errorf("status after promote-full: %v, want promoteFull true", read().Object["status"])
	}
	run("pause")
	run("resume")
	got := read()
	paused, _, _ := unstructured.NestedBool(got.Object, "spec", "paused")
	_, conditions, _ := unstructured.NestedSlice(got.Object, "status", "pauseConditions")
	if paused || conditions {
		t.Errorf("after resume: spec.paused %v, pauseConditions kept %v (status %v)", paused, conditions, got.Object["status"])
	}
}
