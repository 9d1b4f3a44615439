package controller

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func TestCascadeOf(t *testing.T) {
	tests := []struct {
		name       string
		finalizers []string
		want       []string
		policy     metav1.DeletionPropagation
		ok         bool
	}{
		{"none", nil, nil, metav1.DeletePropagationForeground, false},
		{"foreign only", []string{"example.com/x"}, nil, metav1.DeletePropagationForeground, false},
		{"argo", []string{"example.com/x", v1alpha1.ArgoResourcesFinalizer}, []string{v1alpha1.ArgoResourcesFinalizer}, metav1.DeletePropagationForeground, true},
		{"graphcd", []string{v1alpha1.ResourcesFinalizer}, []string{v1alpha1.ResourcesFinalizer}, metav1.DeletePropagationForeground, true},
		{"background", []string{v1alpha1.ArgoResourcesFinalizerBackground}, []string{v1alpha1.ArgoResourcesFinalizerBackground}, metav1.DeletePropagationBackground, true},
		{"background and foreground", []string{v1alpha1.ArgoResourcesFinalizerBackground, v1alpha1.ArgoResourcesFinalizer},
			[]string{v1alpha1.ArgoResourcesFinalizerBackground, v1alpha1.ArgoResourcesFinalizer}, metav1.DeletePropagationForeground, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Finalizers: tt.finalizers}}
			got, policy, ok := cascadeOf(app)
			if !slices.Equal(got, tt.want) || policy != tt.policy || ok != tt.ok {
				t.Errorf("cascadeOf = %v, %s, %v; want %v, %s, %v", got, policy, ok, tt.want, tt.policy, tt.ok)
			}
		})
	}
}

func TestKeptOnDelete(t *testing.T) {
	tests := []struct {
		ann  map[string]string
		want string
	}{
		{nil, ""},
		{map[string]string{"argocd.argoproj.io/sync-options": "Prune=false"}, ""},
		{map[string]string{"argocd.argoproj.io/sync-options": "Prune=false, Delete=false"}, "Delete=false"},
		{map[string]string{"argocd.argoproj.io/sync-options": "Delete=true"}, ""},
		{map[string]string{"helm.sh/resource-policy": "keep"}, "helm.sh/resource-policy: keep"},
		{map[string]string{"helm.sh/resource-policy": "delete"}, ""},
	}
	for _, tt := range tests {
		obj := &unstructured.Unstructured{Object: map[string]any{}}
		obj.SetAnnotations(tt.ann)
		if got := keptOnDelete(obj); got != tt.want {
			t.Errorf("keptOnDelete(%v) = %q, want %q", tt.ann, got, tt.want)
		}
	}
}

func TestCreatedNamespace(t *testing.T) {
	app := func(opts ...string) *v1alpha1.Application {
		a := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Destination: v1alpha1.ApplicationDestination{Namespace: "shop"}}}
		if opts != nil {
			a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{SyncOptions: opts}
		}
		return a
	}
	ns := ResourceKey{Kind: "Namespace", Name: "shop"}
	tests := []struct {
		name string
		app  *v1alpha1.Application
		key  ResourceKey
		want bool
	}{
		{"created", app("CreateNamespace=true"), ns, true},
		{"no option", app(), ns, false},
		{"option off", app("CreateNamespace=false"), ns, false},
		{"another namespace", app("CreateNamespace=true"), ResourceKey{Kind: "Namespace", Name: "other"}, false},
		{"not a namespace", app("CreateNamespace=true"), ResourceKey{Kind: "ConfigMap", Namespace: "shop", Name: "shop"}, false},
	}
	for _, tt := range tests {
		if got := createdNamespace(tt.app, tt.key); got != tt.want {
			t.Errorf("%s: createdNamespace = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDeleteNeedsConfirmation(t *testing.T) {
	for v, want := range map[string]bool{
		"":                               false,
		"Delete=confirm":                 true,
		"Prune=confirm":                  false,
		"PruneLast=true, Delete=confirm": true,
		"Delete=false":                   false,
	} {
		obj := &unstructured.Unstructured{Object: map[string]any{}}
		obj.SetAnnotations(map[string]string{"argocd.argoproj.io/sync-options": v})
		if got := deleteNeedsConfirmation(obj); got != want {
			t.Errorf("deleteNeedsConfirmation(%q) = %v, want %v", v, got, want)
		}
	}
}
