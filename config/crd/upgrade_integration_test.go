//go:build integration

package crd_test

import (
	"context"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/graphcd/graphcd/config/crd"
)

// An upgrade over CRDs an older release installed with `kubectl apply
// --server-side` (field manager kubectl): Install, which `graphcd install
// crds` and `graphcd server --install-crds` run, brings back a field the
// old schema lacked, and drops a field only the old schema had.
func TestInstallUpgradesOlderCRD(t *testing.T) {
	ctx := t.Context()
	ext := apiextensionsclientset.NewForConfigOrDie(cluster.Config)
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	const name = "appprojects.graphcd.io"

	// Start from no CRD, so that only the old release's manager owns it.
	if err := crds.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	poll(ctx, t, "the CRD to be gone", func(ctx context.Context) (bool, error) {
		_, err := crds.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})

	current, err := crd.Objects()
	if err != nil {
		t.Fatal(err)
	}
	var old *apiextensionsv1.CustomResourceDefinition
	for _, c := range current {
		if c.Name == name {
			old = c
		}
	}
	if old == nil {
		t.Fatalf("no CRD %s embedded", name)
	}
	spec := old.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	if _, ok := spec.Properties["description"]; !ok {
		t.Fatal("the AppProject schema has no spec.description to remove")
	}
	delete(spec.Properties, "description")
	spec.Properties["retiredField"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	old.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	old.TypeMeta = metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}
	body, err := runtime.DefaultUnstructuredConverter.ToUnstructured(old)
	if err != nil {
		t.Fatal(err)
	}
	delete(body, "status")
	crdResource := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	dyn := dynamic.NewForConfigOrDie(cluster.Config)
	if _, err := dyn.Resource(crdResource).Apply(ctx, name, &unstructured.Unstructured{Object: body}, metav1.ApplyOptions{FieldManager: "kubectl", Force: true}); err != nil {
		t.Fatalf("apply the older CRD as kubectl: %v", err)
	}
	t.Cleanup(func() {
		// Leave the current CRD for the package's other tests.
		_ = crd.Install(context.WithoutCancel(ctx), ext)
	})
	waitEstablished(ctx, t, crds, name)

	ns := cluster.Namespace(t)
	projects := dyn.Resource(schema.GroupVersionResource{Group: "graphcd.io", Version: "v1alpha1", Resource: "appprojects"}).Namespace(ns)
	project := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "graphcd.io/v1alpha1", "kind": "AppProject",
			"metadata": map[string]any{"name": name},
			"spec":     map[string]any{"description": "kept", "retiredField": "x"},
		}}
	}
	before, err := projects.Create(ctx, project("before"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, described, _ := unstructured.NestedString(before.Object, "spec", "description")
	_, retired, _ := unstructured.NestedString(before.Object, "spec", "retiredField")
	if described || !retired {
		t.Fatalf("under the older CRD spec.description kept %v, spec.retiredField kept %v: it does not test an upgrade", described, retired)
	}

	if err := crd.Install(ctx, ext); err != nil {
		t.Fatalf("Install over the older CRD: %v", err)
	}
	got, err := crds.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	props := got.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties
	if _, ok := props["description"]; !ok {
		t.Error("after Install the schema still lacks spec.description")
	}
	if _, ok := props["retiredField"]; ok {
		t.Error("after Install the schema still has spec.retiredField, which only the older release had")
	}

	// The API server now keeps the field and prunes the retired one.
	poll(ctx, t, "a new AppProject to keep spec.description", func(ctx context.Context) (bool, error) {
		_ = projects.Delete(ctx, "after", metav1.DeleteOptions{})
		after, err := projects.Create(ctx, project("after"), metav1.CreateOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // the delete may still be going on: try again
		}
		d, _, _ := unstructured.NestedString(after.Object, "spec", "description")
		_, retired, _ := unstructured.NestedString(after.Object, "spec", "retiredField")
		return d == "kept" && !retired, nil
	})
	patch := []byte(`{"spec":{"description":"kept"}}`)
	updated, err := projects.Patch(ctx, "before", types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d, _, _ := unstructured.NestedString(updated.Object, "spec", "description"); d != "kept" {
		t.Errorf("an AppProject made under the older CRD, patched after the upgrade: spec.description = %q, want kept", d)
	}
}

func waitEstablished(ctx context.Context, t *testing.T, crds interface {
	Get(context.Context, string, metav1.GetOptions) (*apiextensionsv1.CustomResourceDefinition, error)
}, name string) {
	t.Helper()
	poll(ctx, t, "CRD "+name+" to be established", func(ctx context.Context) (bool, error) {
		c, err := crds.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // not there yet
		}
		for _, cond := range c.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

func poll(ctx context.Context, t *testing.T, what string, done wait.ConditionWithContextFunc) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, done); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
