package appops

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/controller/appset"
)

func TestDecodeApplicationSet(t *testing.T) {
	ns := Namespaces{Default: "graphcd", Allowed: func(n string) bool { return n == "graphcd" || n == "team" }}
	const body = `
spec:
  generators: [{list: {elements: [{env: dev}]}}]
  template:
    metadata: {name: '{{env}}-web'}
    spec: {project: web, destination: {name: in-cluster, namespace: '{{env}}'}}
`
	tests := []struct {
		name, manifest string
		wantNS         string
		wantErr        string
	}{
		{name: "argo cd group, status and finalizers dropped", manifest: "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: web, finalizers: [x]}\nstatus: {resourcesCount: 3}" + body, wantNS: "graphcd"},
		{name: "own group in a served namespace", manifest: "apiVersion: graphcd.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: web, namespace: team}" + body, wantNS: "team"},
		{name: "another namespace", manifest: "apiVersion: graphcd.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: web, namespace: elsewhere}" + body, wantErr: `metadata.namespace "elsewhere"`},
		{name: "wrong kind", manifest: "apiVersion: graphcd.io/v1alpha1\nkind: Application\nmetadata: {name: web}" + body, wantErr: "kind must be ApplicationSet"},
		{name: "wrong group", manifest: "apiVersion: apps/v1\nkind: ApplicationSet\nmetadata: {name: web}" + body, wantErr: "apiVersion must be"},
		{name: "no name", manifest: "apiVersion: graphcd.io/v1alpha1\nkind: ApplicationSet\nmetadata: {}" + body, wantErr: "metadata.name is required"},
		{name: "unknown field", manifest: "apiVersion: graphcd.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: web}\nspec: {generatorz: []}", wantErr: "unknown field"},
		{name: "no generators", manifest: "apiVersion: graphcd.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: web}\nspec: {generators: [], template: {metadata: {}, spec: {destination: {}}}}", wantErr: "spec.generators is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := DecodeApplicationSet(tt.manifest, ns)
			if tt.wantErr != "" {
				var inv *InvalidError
				if !errors.As(err, &inv) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want an InvalidError with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if set.Namespace != tt.wantNS || set.Name != "web" || len(set.Finalizers) > 0 || set.Status.ResourcesCount != 0 {
				t.Errorf("decoded %s/%s finalizers %v status %+v", set.Namespace, set.Name, set.Finalizers, set.Status)
			}
			if got := set.Spec.Template.Spec.Project; got != "web" {
				t.Errorf("template project = %q, want web", got)
			}
		})
	}
}

func TestSetProjects(t *testing.T) {
	tests := []struct {
		name          string
		spec          string
		wantProjects  []string
		wantTemplated bool
	}{
		{name: "template project", spec: `{generators: [{list: {elements: []}}], template: {metadata: {}, spec: {project: web, destination: {}}}}`,
			wantProjects: []string{"web"}},
		{name: "empty is default", spec: `{generators: [{list: {elements: []}}], template: {metadata: {}, spec: {destination: {}}}}`,
			wantProjects: []string{"default"}},
		{name: "templated", spec: `{generators: [{list: {elements: []}}], template: {metadata: {}, spec: {project: '{{.p}}', destination: {}}}}`,
			wantProjects: []string{"{{.p}}"}, wantTemplated: true},
		{name: "a generator's template overrides it", spec: `{generators: [{list: {elements: [], template: {metadata: {}, spec: {project: other, destination: {}}}}}],
  template: {metadata: {}, spec: {project: web, destination: {}}}}`,
			wantProjects: []string{"web", "other"}},
		{name: "inside a matrix, and a nested merge", spec: `{generators: [{matrix: {generators: [
    {clusters: {template: {metadata: {}, spec: {project: c, destination: {}}}}},
    {merge: {mergeKeys: [k], generators: [{list: {elements: [], template: {metadata: {}, spec: {project: deep, destination: {}}}}}]}}]}}],
  template: {metadata: {}, spec: {project: web, destination: {}}}}`,
			wantProjects: []string{"web", "c", "deep"}},
		{name: "any generator's template counts, clusterDecisionResource's too", spec: `{generators: [{clusterDecisionResource: {configMapRef: cm, name: n,
    template: {metadata: {}, spec: {project: decided, destination: {}}}}}], template: {metadata: {}, spec: {project: web, destination: {}}}}`,
			wantProjects: []string{"web", "decided"}},
		{name: "a parameter named template is not one", spec: `{generators: [{list: {elements: [{template: {spec: {project: param}}}]}}],
  template: {metadata: {}, spec: {project: web, destination: {}}}}`,
			wantProjects: []string{"web"}},
		{name: "templatePatch may set any", spec: `{generators: [{list: {elements: []}}], templatePatch: 'spec: {project: x}', template: {metadata: {}, spec: {project: web, destination: {}}}}`,
			wantProjects: []string{"web"}, wantTemplated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := DecodeApplicationSetSpec(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			set, err := DecodeApplicationSet("apiVersion: graphcd.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s}\nspec: "+tt.spec, Namespaces{Default: "graphcd"})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(set.Spec, spec); d != "" {
				t.Fatalf("spec and manifest decode differently (-manifest +spec):\n%s", d)
			}
			projects, templated := appset.SetProjects(set)
			slices.Sort(projects)
			want := slices.Sorted(slices.Values(tt.wantProjects))
			if d := cmp.Diff([]any{projects, templated}, []any{want, tt.wantTemplated}); d != "" {
				t.Errorf("SetProjects (-got +want):\n%s", d)
			}
		})
	}
}
