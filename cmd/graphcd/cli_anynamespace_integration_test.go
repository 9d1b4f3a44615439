//go:build integration

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/cli"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// The CLI names an app outside the server's namespace as NAMESPACE/NAME:
// against a server (with its controller) started with
// --application-namespaces, an app created in the tenant namespace is
// read, synced and listed that way, and one in a namespace the server
// does not serve does not exist.
func TestCLIAppsInAnyNamespace(t *testing.T) {
	tenant, other := cluster.Namespace(t), cluster.Namespace(t)
	s := startAuthServer(t, "--controller=true", "--application-namespaces="+tenant)
	home := t.TempDir()
	run := func(stdin string, args ...string) cliResult {
		t.Helper()
		return s.runCLIBinary(t, home, stdin, nil, args...)
	}
	runOK := func(args ...string) string {
		t.Helper()
		r := run("", args...)
		if r.code != 0 {
			t.Fatalf("graphcd %s = exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		return r.stdout
	}
	secret, err := cluster.Client.CoreV1().Secrets(s.namespace).Get(t.Context(), "graphcd-initial-admin-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("initial admin secret: %v", err)
	}
	if r := run(string(secret.Data["password"])+"\n", "login", s.base, "--username", "admin", "--password-stdin"); r.code != 0 {
		t.Fatalf("login: %d %s", r.code, r.stderr)
	}

	write := func(name, body string) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	runOK("proj", "create", "-f", write("proj.yaml", fmt.Sprintf(`apiVersion: graphcd.io/v1alpha1
kind: AppProject
metadata: {name: tenants}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: "*"}]
  sourceNamespaces: [%s]
`, tenant)))
	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		"app/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n",
	})
	repo, dest := serveGit(t, dir), cluster.Namespace(t)
	appFile := func(ns string) string {
		return write(ns+".yaml", fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: %s}
spec:
  project: tenants
  source: {repoURL: %q, path: app, targetRevision: main}
  destination: {name: %s, namespace: %s}
`, ns, repo, controller.InClusterName, dest))
	}
	runOK("app", "create", "-f", appFile(tenant))
	if r := run("", "app", "create", "-f", appFile(other)); r.code != cli.ExitError || !strings.Contains(r.stderr, fmt.Sprintf("metadata.namespace %q", other)) {
		t.Errorf("creating an app in %s, not served = %d %q, want exit 2 naming the namespace", other, r.code, r.stderr)
	}

	var got struct {
		Name, Namespace string
		Status          struct{ Sync struct{ Status string } }
	}
	if err := json.Unmarshal([]byte(runOK("app", "get", tenant+"/web", "-o", "json")), &got); err != nil || got.Name != "web" || got.Namespace != tenant {
		t.Fatalf("app get %s/web = %+v, %v", tenant, got, err)
	}
	runOK("app", "sync", tenant+"/web")
	runOK("app", "wait", tenant+"/web", "--sync", "--timeout", "90s")
	if err := json.Unmarshal([]byte(runOK("app", "get", "web", "--app-namespace", tenant, "-o", "json")), &got); err != nil || got.Status.Sync.Status != "Synced" {
		t.Errorf("app get web --app-namespace %s after the sync = %+v, %v", tenant, got, err)
	}
	if cm, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "settings", metav1.GetOptions{}); err != nil ||
		cm.Annotations["argocd.argoproj.io/tracking-id"] != tenant+"_web:/ConfigMap:"+dest+"/settings" {
		t.Errorf("the synced ConfigMap: %v, annotations %v; want the tracking id of %s_web", err, cm.GetAnnotations(), tenant)
	}
	if out := runOK("app", "list", "--app-namespace", tenant, "-o", "name"); out != "web\n" {
		t.Errorf("app list --app-namespace %s -o name = %q", tenant, out)
	}
	if out := runOK("app", "list", "--app-namespace", s.namespace, "-o", "name"); out != "" {
		t.Errorf("app list of the server's namespace = %q, want nothing", out)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"app", "get", other + "/web"}, "not found"},
		{[]string{"app", "get", "web"}, "not found"}, // the server's own namespace
		{[]string{"app", "get", "a/b/c"}, "want NAME or NAMESPACE/NAME"},
		{[]string{"app", "get", tenant + "/web", "--app-namespace", other}, "but --app-namespace says"},
	} {
		if r := run("", tc.args...); r.code != cli.ExitError || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("graphcd %s = %d %q, want exit 2 saying %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
		}
	}
}
