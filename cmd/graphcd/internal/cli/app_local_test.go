package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/client"
)

func writeLocal(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReadLocal(t *testing.T) {
	dir := writeLocal(t, map[string]string{
		"a.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# empty\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
		"sub/c.json":     `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Secret","metadata":{"name":"c"}}]}`,
		"README.md":      "not a manifest",
		".git/x.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hidden}\n",
		"other/skip.txt": "kind: nothing",
	})
	objs, err := readLocal(dir, defaultLocalInclude)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.str("kind")+"/"+o.str("metadata", "name"))
	}
	if got := strings.Join(names, ","); got != "ConfigMap/a,ConfigMap/b,Secret/c" {
		t.Errorf("objects = %s", got)
	}
	for name, files := range map[string]map[string]string{
		"holds a kustomization.yaml": {"kustomization.yaml": "resources: []"},
		"want an object with":        {"x.yaml": "apiVersion: v1\nkind: ConfigMap\n"},
		"no manifests":               {"x.txt": "x"},
		"document 2":                 {"x.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n[1, 2"},
	} {
		if _, err := readLocal(writeLocal(t, files), defaultLocalInclude); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("readLocal of %v = %v, want an error saying %q", files, err, name)
		}
	}
}

func TestDiffLocal(t *testing.T) {
	app := &client.ApplicationLiveApplication{}
	app.Spec.Destination.Namespace = "web"
	app.ManagedResources = []client.ApplicationLiveApplicationManagedResourcesManagedResource{
		{Kind: "ConfigMap", Namespace: "web", Name: "same", Live: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\n  namespace: web\n  uid: x\n  labels: {app.kubernetes.io/instance: a}\ndata: {k: v}\n"},
		{Kind: "ConfigMap", Namespace: "web", Name: "changed", Live: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: changed, namespace: web}\ndata: {k: old}\n"},
		{Kind: "ConfigMap", Namespace: "web", Name: "gone", Live: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gone, namespace: web}\n"},
		{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "view", Live: "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: view}\nrules: []\n"},
		{Kind: "Secret", Namespace: "web", Name: "s", Live: "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: web}\ndata: {k: '++++++++'}\n"},
	}
	dir := writeLocal(t, map[string]string{"m.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: same}
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: changed}
data: {k: new}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: added}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: view}
rules: []
---
apiVersion: v1
kind: Secret
metadata: {name: s}
stringData: {k: secret}
`})
	objs, err := readLocal(dir, defaultLocalInclude)
	if err != nil {
		t.Fatal(err)
	}
	diffs, err := diffLocal(app, objs)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range diffs {
		got[d.Name] = d.Diff
	}
	if len(got) != 3 || !strings.Contains(got["changed"], "-  k: old\n+  k: new") ||
		!strings.Contains(got["added"], "+kind: ConfigMap") || !strings.Contains(got["gone"], "-kind: ConfigMap") {
		t.Errorf("diffs = %v, want changed, added and gone", got)
	}
}
