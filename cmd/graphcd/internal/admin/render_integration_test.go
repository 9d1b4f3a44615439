//go:build integration

package admin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphcd/graphcd/reposerver/render/plugin"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// A config-management plugin served by a real cmp-server renders an app
// it claims by discovery, through admin render.
func TestAdminRenderPlugin(t *testing.T) {
	sockets := t.TempDir()
	config := filepath.Join(t.TempDir(), "plugin.yaml")
	spec := `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: envsubst
spec:
  generate:
    command: [sh, -c, 'sed "s/NAME/$ARGOCD_APP_NAME/" app.tmpl']
  discover:
    fileName: "*.tmpl"
`
	if err := os.WriteFile(config, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- plugin.Serve(ctx, plugin.ServerOptions{Config: config, SocketDir: sockets}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("cmp-server: %v", err)
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if names, _ := plugin.Plugins(sockets); len(names) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("plugin socket did not appear")
		}
	}
	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		"apps/cm/app.tmpl": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: NAME-config\n",
	})
	code, stdout, stderr := runCLI(t, nil, "admin", "render", "--repo", dir, "--path", "apps/cm", "--app-name", "shop", "--plugin-socket-dir", sockets)
	if code != 0 || !strings.Contains(stdout, "name: shop-config") {
		t.Fatalf("render plugin app: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// admin render reads a local Git working copy (committed state), detects
// the tool and prints the objects as YAML or a JSON array.
func TestAdminRenderLocalRepo(t *testing.T) {
	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		"apps/web/Chart.yaml":         "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		"apps/web/values.yaml":        "replicas: 1\n",
		"apps/web/values-prod.yaml":   "replicas: 3\n",
		"apps/web/templates/dep.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.replicas }}\n",
		"apps/plain/a.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
		"apps/plain/b.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
	})

	code, stdout, stderr := runCLI(t, nil, "admin", "render", "--repo", dir, "--path", "apps/web", "--helm-values", "values-prod.yaml", "--release-name", "shop", "-o", "json")
	if code != 0 {
		t.Fatalf("render chart: exit %d: %s", code, stderr)
	}
	var objs []map[string]any
	if err := json.Unmarshal([]byte(stdout), &objs); err != nil || len(objs) != 1 {
		t.Fatalf("render chart -o json = %q (%v); want one object", stdout, err)
	}
	meta, spec := objs[0]["metadata"].(map[string]any), objs[0]["spec"].(map[string]any)
	if meta["name"] != "shop" || spec["replicas"] != float64(3) {
		t.Errorf("rendered %v; want Deployment shop with 3 replicas from values-prod.yaml", objs[0])
	}

	// A subdirectory of the working copy works as --repo too.
	code, stdout, stderr = runCLI(t, nil, "admin", "render", "--repo", filepath.Join(dir, "apps"), "--path", "plain")
	if code != 0 || strings.Count(stdout, "kind: ConfigMap") != 2 || !strings.Contains(stdout, "\n---\n") {
		t.Errorf("render directory: exit %d, stdout %q, stderr %q; want two YAML documents", code, stdout, stderr)
	}

	code, _, stderr = runCLI(t, nil, "admin", "render", "--repo", dir, "--path", "../../etc")
	if code != 1 || !strings.Contains(stderr, "does not exist") {
		t.Errorf("escaping path: exit %d, stderr %q; want a one-line error", code, stderr)
	}
}

// admin render --settings applies the installation's tool settings: a
// kustomization's helmCharts inflate only with --enable-helm in its
// kustomize.buildOptions, as on the server.
func TestAdminRenderSettings(t *testing.T) {
	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		"apps/inflate/kustomization.yaml":                "namePrefix: k-\nhelmCharts:\n- name: vendored\n  releaseName: web\n",
		"apps/inflate/charts/vendored/Chart.yaml":        "apiVersion: v2\nname: vendored\nversion: 0.1.0\n",
		"apps/inflate/charts/vendored/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
	})
	settings := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(settings, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata:\n  kustomize.buildOptions: --enable-helm\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, nil, "admin", "render", "--repo", dir, "--path", "apps/inflate")
	if code != 1 || !strings.Contains(stderr, "--enable-helm") {
		t.Errorf("helmCharts without --settings: exit %d, stderr %q; want a refusal naming --enable-helm", code, stderr)
	}
	code, stdout, stderr := runCLI(t, nil, "admin", "render", "--repo", dir, "--path", "apps/inflate", "--settings", settings)
	if code != 0 || !strings.Contains(stdout, "name: k-web") {
		t.Errorf("helmCharts with --enable-helm: exit %d, stdout %q, stderr %q; want ConfigMap k-web", code, stdout, stderr)
	}
}

// admin render --app renders a multi-source Application as the
// controller does: a chart from a chart repository with its values from a
// Git repository ($values), at the values' target revision or at the one
// --source-revision names.
func TestAdminRenderApp(t *testing.T) {
	charts := reposervertest.ServeChartRepo(t, reposervertest.ConfigMapChart("web", "1.0.0", map[string]string{"mode": "{{ .Values.mode | quote }}"}, nil))
	values, first := reposervertest.CommitFiles(t, map[string]string{"envs/prod.yaml": "mode: blue\n"})
	reposervertest.CommitMore(t, values, map[string]string{"envs/prod.yaml": "mode: green\n"})
	app := filepath.Join(t.TempDir(), "app.yaml")
	manifest := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: argocd}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: web}
  sources:
  - repoURL: ` + charts + `
    chart: web
    targetRevision: 1.0.0
    helm: {valueFiles: [$values/envs/prod.yaml]}
  - repoURL: file://` + values + `
    targetRevision: main
    ref: values
`
	if err := os.WriteFile(app, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, `mode: green`},
		{[]string{"--source-revision", "2=" + first}, `mode: blue`},
	} {
		code, stdout, stderr := runCLI(t, nil, append([]string{"admin", "render", "--app", app}, tc.args...)...)
		if code != 0 || !strings.Contains(stdout, tc.want) || !strings.Contains(stdout, "name: web") {
			t.Errorf("render --app %v: exit %d, stdout %q, stderr %q; want %s", tc.args, code, stdout, stderr, tc.want)
		}
	}
	if code, _, stderr := runCLI(t, nil, "admin", "render", "--app", app, "--source-revision", "3=main"); code == 0 || !strings.Contains(stderr, "sources 1 to 2") {
		t.Errorf("a third source: exit %d, stderr %q", code, stderr)
	}
}
