//go:build integration

package cache

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/graphcd/graphcd/internal/settings"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// widgetCRD returns a namespaced CRD for kind Widget in group.
func widgetCRD(group string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "widgets." + group},
		"spec": map[string]any{
			"group": group,
			"scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
}

func TestCRDCreatedAfterStart(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	app := "crd-" + ns
	group := ns + ".graphcd.test"
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	c := startCache(t, Options{})

	if _, err := dyn.Resource(crdGVR).Create(ctx, widgetCRD(group), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	t.Cleanup(func() {
		_ = dyn.Resource(crdGVR).Delete(context.Background(), "widgets."+group, metav1.DeleteOptions{})
	})

	widgets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1",
		"kind":       "Widget",
		"metadata": map[string]any{
			"name": "w1", "namespace": ns,
			"labels": map[string]any{settings.DefaultInstanceLabelKey: app},
		},
		"spec": map[string]any{"size": int64(3)},
	}}
	// The API serves the kind once the CRD is established.
	eventually(t, "custom resource created", func() bool {
		_, err := dyn.Resource(widgets).Namespace(ns).Create(ctx, cr, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err)
	})
	want := []ResourceKey{{Group: group, Kind: "Widget", Namespace: ns, Name: "w1"}}
	eventually(t, "widget managed", func() bool { return len(c.Managed(app)) == 1 })
	if diff := cmp.Diff(c.Managed(app), want); diff != "" {
		t.Errorf("Managed (-got +want):\n%s", diff)
	}
	if namespaced, err := c.IsNamespaced(schema.GroupKind{Group: group, Kind: "Widget"}); err != nil || !namespaced {
		t.Errorf("IsNamespaced(Widget) = %v, %v", namespaced, err)
	}

	// Removing the CRD stops the watch and forgets its objects.
	if err := dyn.Resource(crdGVR).Delete(ctx, "widgets."+group, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete CRD: %v", err)
	}
	eventually(t, "widget forgotten", func() bool { return len(c.Managed(app)) == 0 })
}
