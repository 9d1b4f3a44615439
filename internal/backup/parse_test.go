package backup

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testScope = Scope{
	Namespace:    "graphcd",
	AppNamespace: func(ns string) bool { return strings.HasPrefix(ns, "team-") },
	ConfigMaps:   []string{"graphcd-cm", "graphcd-rbac-cm"},
	Secrets:      []string{"graphcd-secret"},
}

func TestParseOrdersAndPlaces(t *testing.T) {
	file := `# graphcd export of namespace old
---
apiVersion: graphcd.io/v1alpha1
kind: Application
metadata: {name: web, namespace: team-a}
---
apiVersion: graphcd.io/v1alpha1
kind: ApplicationSet
metadata: {name: sets}
---
apiVersion: graphcd.io/v1alpha1
kind: Application
metadata: {name: api}
---
apiVersion: v1
kind: Secret
metadata:
  name: repo
  labels: {argocd.argoproj.io/secret-type: repository}
---
apiVersion: graphcd.io/v1alpha1
kind: AppProject
metadata: {name: default}
---
---
apiVersion: v1
kind: ConfigMap
metadata: {name: graphcd-cm}
`
	objs, err := Parse([]byte(file), testScope)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, objectKey(o))
	}
	want := []string{
		"ConfigMap/graphcd/graphcd-cm",
		"Secret/graphcd/repo",
		"AppProject/graphcd/default",
		"Application/graphcd/api",
		"Application/team-a/web",
		"ApplicationSet/graphcd/sets",
	}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("Parse order (-got +want):\n%s", d)
	}
}

func TestParseRefuses(t *testing.T) {
	const project = "apiVersion: graphcd.io/v1alpha1\nkind: AppProject\nmetadata: {name: p}\n---\n"
	for _, tc := range []struct{ name, doc, want string }{
		{"foreign kind", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n", `document 2 (Deployment "d"): apiVersion "apps/v1" kind "Deployment" is not imported`},
		{"argo group", "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a}\n", `document 2 (Application "a"): apiVersion "argoproj.io/v1alpha1"`},
		{"other version", "apiVersion: graphcd.io/v1beta1\nkind: Application\nmetadata: {name: a}\n", `is not imported`},
		{"unserved namespace", "apiVersion: graphcd.io/v1alpha1\nkind: Application\nmetadata: {name: a, namespace: kube-system}\n", `namespace "kube-system" is not graphcd's namespace`},
		{"project elsewhere", "apiVersion: graphcd.io/v1alpha1\nkind: AppProject\nmetadata: {name: q, namespace: team-a}\n", `namespace "team-a"`},
		{"other ConfigMap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kube-proxy}\n", `not a settings ConfigMap`},
		{"unlabelled Secret", "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\ndata: {password: c2VjcmV0}\n", `not a repository, credential template or cluster Secret`},
		{"no name", "apiVersion: graphcd.io/v1alpha1\nkind: Application\nmetadata: {}\n", `no metadata.name`},
		{"twice", project, `document 2 (AppProject "p"): the same object as document 1`},
		{"not YAML", "kind: [Application\n", `document 2: not YAML`},
		{"not an object", "- a\n- b\n", `document 2: not a Kubernetes object`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(project+tc.doc), testScope)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %v, want an error with %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "c2VjcmV0") {
				t.Errorf("the error quotes a Secret's data: %v", err)
			}
		})
	}
}

func TestParseBoundsSize(t *testing.T) {
	if _, err := Parse(make([]byte, MaxFile+1), testScope); err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Errorf("Parse of a file over the limit = %v", err)
	}
}
