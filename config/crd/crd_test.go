package crd_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/graphcd/graphcd/config/crd"
)

func TestObjects(t *testing.T) {
	crds, err := crd.Objects()
	if err != nil {
		t.Fatal(err)
	}

	type summary struct {
		Name       string
		Kind       string
		Scope      apiextensionsv1.ResourceScope
		ShortNames []string
		Versions   []string
		Columns    []string
		Status     bool
	}
	var got []summary
	for _, c := range crds {
		s := summary{
			Name:       c.Name,
			Kind:       c.Spec.Names.Kind,
			Scope:      c.Spec.Scope,
			ShortNames: c.Spec.Names.ShortNames,
		}
		for _, v := range c.Spec.Versions {
			s.Versions = append(s.Versions, v.Name)
			for _, col := range v.AdditionalPrinterColumns {
				s.Columns = append(s.Columns, col.Name)
			}
			s.Status = v.Subresources != nil && v.Subresources.Status != nil
		}
		got = append(got, s)
	}
	want := []summary{
		{
			Name:       "applications.graphcd.io",
			Kind:       "Application",
			Scope:      apiextensionsv1.NamespaceScoped,
			ShortNames: []string{"app", "apps"},
			Versions:   []string{"v1alpha1"},
			Columns:    []string{"Project", "Sync", "Health", "Revision", "Age"},
			Status:     true,
		},
		{
			Name:       "applicationsets.graphcd.io",
			Kind:       "ApplicationSet",
			Scope:      apiextensionsv1.NamespaceScoped,
			ShortNames: []string{"appset", "appsets"},
			Versions:   []string{"v1alpha1"},
			Columns:    []string{"Generated", "Age"},
			Status:     true,
		},
		{
			Name:       "appprojects.graphcd.io",
			Kind:       "AppProject",
			Scope:      apiextensionsv1.NamespaceScoped,
			ShortNames: []string{"appproj", "appprojs"},
			Versions:   []string{"v1alpha1"},
			Columns:    []string{"Description", "Age"},
			Status:     true,
		},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("CRDs differ (-got +want):\n%s", diff)
	}
}

// TestObjectsReturnsCopies checks that a caller changing the returned
// objects does not change what later callers, and Install, get.
func TestObjectsReturnsCopies(t *testing.T) {
	first, err := crd.Objects()
	if err != nil {
		t.Fatal(err)
	}
	first[0].Name = "changed"
	second, err := crd.Objects()
	if err != nil {
		t.Fatal(err)
	}
	if second[0].Name == "changed" {
		t.Error("Objects returned shared objects")
	}
}

func TestEstablished(t *testing.T) {
	crds, err := crd.Objects()
	if err != nil {
		t.Fatal(err)
	}
	withCondition := func(c *apiextensionsv1.CustomResourceDefinition, status apiextensionsv1.ConditionStatus) runtime.Object {
		c = c.DeepCopy()
		c.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{
			Type:               apiextensionsv1.Established,
			Status:             status,
			Reason:             "Test",
			LastTransitionTime: metav1.Now(),
		}}
		return c
	}

	tests := []struct {
		name    string
		objects []runtime.Object
		wantErr string // substring; empty means no error
	}{
		{
			name:    "none installed",
			wantErr: "crd applications.graphcd.io not established: not found",
		},
		{
			name:    "one missing",
			objects: []runtime.Object{withCondition(crds[0], apiextensionsv1.ConditionTrue), withCondition(crds[1], apiextensionsv1.ConditionTrue)},
			wantErr: "crd appprojects.graphcd.io not established: not found",
		},
		{
			name: "one not established",
			objects: []runtime.Object{
				withCondition(crds[0], apiextensionsv1.ConditionFalse),
				withCondition(crds[1], apiextensionsv1.ConditionTrue),
				withCondition(crds[2], apiextensionsv1.ConditionTrue),
			},
			wantErr: "crd applications.graphcd.io not established",
		},
		{
			name:    "no conditions yet",
			objects: []runtime.Object{crds[0], crds[1], crds[2]},
			wantErr: "crd applications.graphcd.io not established",
		},
		{
			name: "all established",
			objects: []runtime.Object{
				withCondition(crds[0], apiextensionsv1.ConditionTrue),
				withCondition(crds[1], apiextensionsv1.ConditionTrue),
				withCondition(crds[2], apiextensionsv1.ConditionTrue),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := crd.Established(t.Context(), fake.NewClientset(tt.objects...))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Established() = %v, want nil", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("Established() = nil, want error containing %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("Established() = %q, want it to contain %q", err, tt.wantErr)
			case tt.wantErr != "" && !errors.Is(err, crd.ErrNotEstablished):
				t.Fatalf("Established() = %q, does not wrap ErrNotEstablished", err)
			}
		})
	}
}
