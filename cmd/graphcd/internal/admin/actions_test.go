package admin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

const (
	actionsObjects  = "testdata/actions/objects.yaml"
	actionsSettings = "testdata/actions/settings.yaml"
)

// admin actions list shows each object's built-in and custom actions: the
// split key replaces nothing built in, the map form merges.
func TestAdminActionsList(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "admin", "actions", "list", "-f", actionsObjects, "--settings", actionsSettings, "-o", "json")
	if code != command.ExitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var got []struct {
		Kind, Name string
		Actions    []struct {
			Name     string
			Disabled bool
			Params   []map[string]string
		}
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
	var lines []string
	for _, o := range got {
		for _, a := range o.Actions {
			line := o.Kind + "/" + o.Name + " " + a.Name
			if a.Disabled {
				line += " (disabled)"
			}
			for _, p := range a.Params {
				line += " " + p["name"] + ":" + p["type"] + "=" + p["default"]
			}
			lines = append(lines, line)
		}
		if len(o.Actions) == 0 {
			lines = append(lines, o.Kind+"/"+o.Name+" -")
		}
	}
	want := []string{
		"Deployment/web annotate",
		"Deployment/web pause",
		"Deployment/web restart",
		"Deployment/web resume (disabled)",
		"Deployment/web scale replicas:integer=2",
		"CronJob/report create-job",
		"CronJob/report resume",
		"CronJob/report suspend (disabled)",
		"Backup/nightly retain days:integer=7",
		"Backup/nightly run-now",
		"ConfigMap/settings -",
	}
	if diff := cmp.Diff(lines, want); diff != "" {
		t.Errorf("actions (-got +want):\n%s", diff)
	}

	code, stdout, _ = runCLI(t, nil, "admin", "actions", "list", "-f", actionsObjects, "-o", "table")
	if code != command.ExitOK || !strings.Contains(stdout, "scale") || strings.Contains(stdout, "annotate") || !strings.Contains(stdout, "replicas:integer=2") {
		t.Errorf("table without settings: exit %d; want only the built-in actions:\n%s", code, stdout)
	}
}

// admin actions run prints what the action would write, each with its
// operation: a parameterised patch, a create from a custom script and a
// built-in one.
func TestAdminActionsRun(t *testing.T) {
	type change struct {
		Operation string         `json:"operation"`
		Object    map[string]any `json:"object"`
		Patch     map[string]any `json:"patch"`
	}
	run := func(t *testing.T, output string, args ...string) []change {
		t.Helper()
		code, stdout, stderr := runCLI(t, nil, append([]string{"admin", "actions", "run", "--settings", actionsSettings, "-o", output}, args...)...)
		if code != command.ExitOK {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		var got []change
		if err := yaml.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("output is not %s: %v\n%s", output, err, stdout)
		}
		return got
	}
	got := run(t, "json", "retain", "-f", "testdata/actions/backup.yaml", "--param", "days=30")
	if len(got) != 1 || got[0].Operation != "patch" || !cmp.Equal(got[0].Patch, map[string]any{"spec": map[string]any{"retainDays": float64(30)}}) {
		t.Errorf("retain: %+v, want one patch of spec.retainDays", got)
	}
	got = run(t, "yaml", "run-now", "-f", "testdata/actions/backup.yaml")
	if len(got) != 1 || got[0].Operation != "create" || got[0].Object["kind"] != "BackupRun" || got[0].Patch != nil {
		t.Errorf("run-now: %+v, want one BackupRun to create", got)
	}
	if md, _ := got[0].Object["metadata"].(map[string]any); md["namespace"] != "shop" || md["name"] != "nightly-manual" {
		t.Errorf("run-now: metadata %v, want shop/nightly-manual", md)
	}
	got = run(t, "json", "create-job", "-f", "testdata/actions/cronjob.yaml")
	if len(got) != 1 || got[0].Operation != "create" || got[0].Object["kind"] != "Job" {
		t.Errorf("create-job: %+v, want one Job to create", got)
	}
}

// Failures end with exit 2 and say why: a failing script, a disabled or
// unknown action, a bad parameter, a file with more than one object.
func TestAdminActionsRunErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"failing script", []string{"explode", "-f", "testdata/actions/configmap.yaml", "--settings", "testdata/actions/failing-settings.yaml"}, "the cache is gone"},
		{"disabled", []string{"resume", "-f", actionsObjects}, "holds 4 objects; an action runs on one"},
		{"disabled action", []string{"suspend", "-f", "testdata/actions/cronjob.yaml"}, `action is disabled: "suspend" on batch/CronJob shop/report`},
		{"unknown action", []string{"explode", "-f", "testdata/actions/cronjob.yaml"}, `no such action "explode" for batch/CronJob; it offers: create-job, resume, suspend`},
		{"bad parameter", []string{"retain", "-f", "testdata/actions/backup.yaml", "--settings", actionsSettings, "--param", "days=many"}, `invalid action parameter days: "many" is not a 32-bit integer`},
		{"malformed parameter", []string{"retain", "-f", "testdata/actions/backup.yaml", "--param", "days"}, `--param "days": want name=value`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, nil, append([]string{"admin", "actions", "run"}, tc.args...)...)
			if code != command.ExitUsage || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, stdout, stderr, tc.want)
			}
		})
	}
}

// A failing discovery script is reported in place; the other objects are
// still listed and the exit code is 2.
func TestAdminActionsListFailingScript(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "admin", "actions", "list", "-f", actionsObjects, "--settings", "testdata/actions/failing-settings.yaml", "-o", "yaml")
	if code != command.ExitUsage || !strings.Contains(stderr, "could not be listed") {
		t.Errorf("exit %d, stderr %q; want 2", code, stderr)
	}
	var got []actionsObject
	if err := yaml.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("output is not YAML: %v\n%s", err, stdout)
	}
	if len(got) != 4 || len(got[0].Actions) != 4 || !strings.Contains(got[2].Error, "no backups today") || got[3].Error != "" || len(got[3].Actions) != 1 {
		t.Errorf("got %+v; want the Deployment's built-in actions, the Backup's error and the ConfigMap's explode", got)
	}
}
