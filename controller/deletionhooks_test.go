package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestDeletionFinalizers(t *testing.T) {
	obj := func(ann map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job"}}
		u.SetAnnotations(ann)
		return u
	}
	tests := []struct {
		name string
		ann  map[string]string
		want []string
	}{
		{"plain resource", nil, nil},
		{"sync hook", map[string]string{"argocd.argoproj.io/hook": "PreSync"}, nil},
		{"PreDelete", map[string]string{"argocd.argoproj.io/hook": "PreDelete"}, []string{PreDeleteFinalizer}},
		{"both in one", map[string]string{"argocd.argoproj.io/hook": "PostSync, PostDelete,PreDelete"}, []string{PreDeleteFinalizer, PostDeleteFinalizer}},
		{"Helm post-delete", map[string]string{"helm.sh/hook": "post-delete"}, []string{PostDeleteFinalizer}},
		{"Argo CD's annotation wins over Helm's", map[string]string{"argocd.argoproj.io/hook": "Sync", "helm.sh/hook": "pre-delete"}, nil},
		{"Helm name in Argo CD's annotation", map[string]string{"argocd.argoproj.io/hook": "pre-delete"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := deletionFinalizers([]*unstructured.Unstructured{obj(tt.ann)})
			if d := cmp.Diff(got, tt.want); d != "" {
				t.Errorf("finalizers (-got +want):\n%s", d)
			}
		})
	}
}
