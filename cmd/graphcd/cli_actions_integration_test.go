//go:build integration

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/cli"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// adminCLI logs the admin in with the CLI binary under a home of its own
// and returns run (any exit code) and runOK (exit 0, else the test fails;
// returns stdout).
func (s *authServer) adminCLI(t *testing.T) (run func(args ...string) cliResult, runOK func(args ...string) string) {
	t.Helper()
	home := t.TempDir()
	run = func(args ...string) cliResult {
		t.Helper()
		return s.runCLIBinary(t, home, "", nil, args...)
	}
	runOK = func(args ...string) string {
		t.Helper()
		r := run(args...)
		if r.code != 0 {
			t.Fatalf("graphcd %s = exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		return r.stdout
	}
	secret, err := cluster.Client.CoreV1().Secrets(s.namespace).Get(t.Context(), "graphcd-initial-admin-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("initial admin secret: %v", err)
	}
	if r := s.runCLIBinary(t, home, string(secret.Data["password"])+"\n", nil, "login", s.base, "--username", "admin", "--password-stdin"); r.code != 0 {
		t.Fatalf("login: %d %s", r.code, r.stderr)
	}
	return run, runOK
}

// `graphcd app actions list|run` against the real server with its
// controller: a synced app's CronJob is suspended by its built-in action,
// a custom Lua action of graphcd-cm sets a ConfigMap from a parameter,
// and bad flags and unknown actions fail with a clear exit code.
func TestCLIAppActions(t *testing.T) {
	s := startAuthServer(t, "--controller=true")
	run, runOK := s.adminCLI(t)
	settings, _ := json.Marshal(map[string]any{"data": map[string]string{"resource.customizations.actions.ConfigMap": `discovery.lua: |
  return {["set-mode"] = {params = {{name = "mode", default = "prod"}}}}
definitions:
- name: set-mode
  action.lua: |
    obj.data.mode = actionParams["mode"]
    return obj
`}})
	if _, err := cluster.Client.CoreV1().ConfigMaps(s.namespace).Patch(t.Context(), "graphcd-cm", types.MergePatchType, settings, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		"app/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: dev\n",
		"app/report.yaml": `apiVersion: batch/v1
kind: CronJob
metadata:
  name: report
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: report, image: example.com/report:1}]
`,
	})
	dest := cluster.Namespace(t)
	manifest := filepath.Join(t.TempDir(), "app.yaml")
	if err := os.WriteFile(manifest, fmt.Appendf(nil, `apiVersion: graphcd.io/v1alpha1
kind: Application
metadata:
  name: cli-actions
spec:
  project: default
  source: {repoURL: %q, path: app, targetRevision: main}
  destination: {name: %s, namespace: %s}
`, serveGit(t, dir), controller.InClusterName, dest), 0o600); err != nil {
		t.Fatal(err)
	}
	runOK("app", "create", "-f", manifest)
	runOK("app", "sync", "cli-actions")

	type listed struct {
		Kind, Name string
		Actions    []struct {
			Name     string
			Disabled bool
			Params   []struct{ Name, Default string }
		}
	}
	var found []listed
	poll(t, "the actions of the synced objects, with graphcd-cm's", func() (bool, string) {
		out := runOK("app", "actions", "list", "cli-actions", "-o", "json")
		found = nil
		if err := json.Unmarshal([]byte(out), &found); err != nil {
			return false, out
		}
		return slices.ContainsFunc(found, func(l listed) bool { return l.Kind == "ConfigMap" && len(l.Actions) == 1 }) &&
			slices.ContainsFunc(found, func(l listed) bool { return l.Kind == "CronJob" }), out
	})
	for _, l := range found {
		var names []string
		for _, a := range l.Actions {
			names = append(names, a.Name)
		}
		switch l.Kind {
		case "CronJob":
			if !slices.Equal(names, []string{"create-job", "resume", "suspend"}) {
				t.Errorf("CronJob actions %v", names)
			}
		case "ConfigMap":
			if a := l.Actions[0]; a.Name != "set-mode" || len(a.Params) != 1 || a.Params[0].Default != "prod" {
				t.Errorf("ConfigMap action %+v, want set-mode with mode defaulting to prod", a)
			}
		}
	}
	if table := runOK("app", "actions", "list", "cli-actions", "--kind", "CronJob"); !strings.Contains(table, "GROUP") || !strings.Contains(table, "suspend") || strings.Contains(table, "set-mode") {
		t.Errorf("app actions list --kind CronJob:\n%s", table)
	}

	want := fmt.Sprintf("batch/CronJob %s/report: suspend ran (patch CronJob %s/report)\n", dest, dest)
	if got := runOK("app", "actions", "run", "cli-actions", "suspend", "--kind", "CronJob"); got != want {
		t.Errorf("app actions run suspend = %q, want %q", got, want)
	}
	if c, err := cluster.Client.BatchV1().CronJobs(dest).Get(t.Context(), "report", metav1.GetOptions{}); err != nil || c.Spec.Suspend == nil || !*c.Spec.Suspend {
		t.Errorf("after suspend: %v %v", c.Spec.Suspend, err)
	}
	runOK("app", "actions", "run", "cli-actions", "set-mode", "--kind", "ConfigMap", "--resource-name", "settings", "--param", "mode=staging")
	if cm, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "settings", metav1.GetOptions{}); err != nil || cm.Data["mode"] != "staging" {
		t.Errorf("after set-mode: %v %v", cm.Data, err)
	}

	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"suspend"}, command.ExitUsage, "--kind is required"},
		{[]string{"set-mode", "--kind", "ConfigMap", "--param", "staging"}, command.ExitUsage, "want name=value"},
		{[]string{"explode", "--kind", "CronJob"}, cli.ExitError, `no such action "explode"`},
		{[]string{"suspend", "--kind", "CronJob"}, cli.ExitError, "action is disabled"},
		{[]string{"suspend", "--kind", "StatefulSet"}, cli.ExitError, "no live StatefulSet"},
	} {
		r := run(append([]string{"app", "actions", "run", "cli-actions"}, tt.args...)...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("app actions run %v = %d %q, want %d with %q", tt.args, r.code, r.stderr, tt.code, tt.want)
		}
	}
}
