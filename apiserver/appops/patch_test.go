package appops

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/project"
)

func TestPatchApply(t *testing.T) {
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "guestbook", Labels: map[string]string{"team": "a"}},
		Spec:       v1alpha1.ApplicationSpec{Project: "default"},
	}
	for _, tc := range []struct {
		name, doc   string
		typ         PatchType
		wantLabels  map[string]string
		wantProject string
		wantInvalid string
	}{
		{"merge", `{"metadata":{"labels":{"team":"b"}},"spec":{"project":"web"}}`, MergePatch, map[string]string{"team": "b"}, "web", ""},
		{"json", `[{"op":"replace","path":"/spec/project","value":"web"}]`, JSONPatch, map[string]string{"team": "a"}, "web", ""},
		{"json test fails", `[{"op":"test","path":"/spec/project","value":"x"}]`, JSONPatch, nil, "", "patch: "},
		{"not a json patch", `{"op":"add"}`, JSONPatch, nil, "", "patch: "},
		{"outside the patchable part", `{"status":{"sync":{}}}`, MergePatch, nil, "", "patch: the result is not a valid application"},
		{"too large", `{"a":"` + strings.Repeat("x", MaxPatch) + `"}`, MergePatch, nil, "", "patch: larger than 256 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPatch(tc.typ, tc.doc)
			var next *v1alpha1.Application
			if err == nil {
				next, err = p.Apply(app)
			}
			if tc.wantInvalid != "" {
				if inv, ok := errors.AsType[*InvalidError](err); !ok || !strings.HasPrefix(inv.Msg, tc.wantInvalid) {
					t.Fatalf("err = %v, want an InvalidError starting %q", err, tc.wantInvalid)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(next.Labels, tc.wantLabels); diff != "" || next.Spec.Project != tc.wantProject {
				t.Errorf("labels (-got +want):\n%s; project %q, want %q", diff, next.Spec.Project, tc.wantProject)
			}
			if app.Spec.Project != "default" || app.Labels["team"] != "a" {
				t.Errorf("the patch changed its input: %+v", app)
			}
		})
	}
}

func TestDecodeApplication(t *testing.T) {
	const manifest = "apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  project: web\n"
	for _, tc := range []struct {
		name, apiVersion, kind, app, ns string
		served                          bool // graphcd and team-* only
		wantNS, wantInvalid             string
	}{
		{"graphcd's group", "graphcd.io/v1alpha1", "Application", "a", "apps", false, "apps", ""},
		{"Argo CD's group", "argoproj.io/v1alpha1", "Application", "a", "", false, "graphcd", ""},
		{"wrong kind", "graphcd.io/v1alpha1", "AppProject", "a", "", false, "", "manifest: kind must be Application"},
		{"wrong group", "example.com/v1", "Application", "a", "", false, "", "manifest: apiVersion must be"},
		{"no name", "graphcd.io/v1alpha1", "Application", `""`, "", false, "", "manifest: metadata.name is required"},
		{"graphcd's namespace by default", "graphcd.io/v1alpha1", "Application", "a", "", true, "graphcd", ""},
		{"a served namespace", "graphcd.io/v1alpha1", "Application", "a", "team-a", true, "team-a", ""},
		{"another namespace", "graphcd.io/v1alpha1", "Application", "a", "apps", true, "", `manifest: metadata.namespace "apps"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := Namespaces{Default: "graphcd"}
			if tc.served {
				served, err := project.CompileAppNamespaces("graphcd", []string{"team-*"})
				if err != nil {
					t.Fatal(err)
				}
				ns.Allowed = served.Allowed
			}
			app, err := DecodeApplication(fmt.Sprintf(manifest, tc.apiVersion, tc.kind, tc.app, tc.ns), ns)
			if tc.wantInvalid != "" {
				if inv, ok := errors.AsType[*InvalidError](err); !ok || !strings.HasPrefix(inv.Msg, tc.wantInvalid) {
					t.Fatalf("err = %v, want an InvalidError starting %q", err, tc.wantInvalid)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if app.Namespace != tc.wantNS || app.Spec.Project != "web" {
				t.Errorf("namespace %q, project %q; want %q, web", app.Namespace, app.Spec.Project, tc.wantNS)
			}
		})
	}
}
