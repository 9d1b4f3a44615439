//go:build integration

package admin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// The git generators read a real repository (file://) through graphcd's
// Git layer: one app per directory, the excluded one left out.
func TestAdminAppSetGenerateGit(t *testing.T) {
	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		"apps/web/cm.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n",
		"apps/api/cm.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: api}\n",
		"apps/legacy/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: legacy}\n",
	})
	set := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: apps, namespace: graphcd}
spec:
  generators:
  - git:
      repoURL: file://` + dir + `
      revision: main
      directories: [{path: 'apps/*'}, {path: apps/legacy, exclude: true}]
  template:
    metadata: {name: '{{path.basename}}'}
    spec:
      project: default
      source: {repoURL: 'file://` + dir + `', targetRevision: main, path: '{{path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{path.basename}}'}
`
	file := filepath.Join(t.TempDir(), "set.yaml")
	if err := os.WriteFile(file, []byte(set), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, nil, "admin", "appset", "generate", "-f", file, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var apps []v1alpha1.Application
	if err := json.Unmarshal([]byte(stdout), &apps); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range apps {
		names = append(names, a.Name+"="+a.Spec.Source.Path)
	}
	if strings.Join(names, ",") != "api=apps/api,web=apps/web" {
		t.Errorf("generated %v, want api and web", names)
	}
}
