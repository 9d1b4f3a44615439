//go:build integration

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/cli"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

// day2 is a logged-in CLI against one server, for the day-2 commands'
// tests.
type day2 struct {
	s    *authServer
	home string
	kube ctrlclient.Client
}

func startDay2(t *testing.T, serverArgs ...string) *day2 {
	t.Helper()
	s := startAuthServer(t, serverArgs...)
	d := &day2{s: s, home: t.TempDir()}
	secret, err := cluster.Client.CoreV1().Secrets(s.namespace).Get(t.Context(), "graphcd-initial-admin-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.ok(t, string(secret.Data["password"])+"\n", "login", s.base, "--username", "admin", "--password-stdin")
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if d.kube, err = ctrlclient.New(cluster.Config, ctrlclient.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d *day2) run(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	return d.s.runCLIBinary(t, d.home, stdin, nil, args...)
}

// ok runs the CLI and fails the test unless it exits 0.
func (d *day2) ok(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	r := d.run(t, stdin, args...)
	if r.code != 0 {
		t.Fatalf("graphcd %s = exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// fails runs the CLI and fails the test unless it exits with code and
// says want on stderr.
func (d *day2) fails(t *testing.T, code int, want string, args ...string) {
	t.Helper()
	r := d.run(t, "", args...)
	if r.code != code || !strings.Contains(r.stderr, want) {
		t.Errorf("graphcd %s = exit %d %q, want exit %d saying %q", strings.Join(args, " "), r.code, r.stderr, code, want)
	}
}

func (d *day2) project(t *testing.T, name string) *v1alpha1.AppProject {
	t.Helper()
	p := &v1alpha1.AppProject{}
	if err := d.kube.Get(t.Context(), types.NamespacedName{Namespace: d.s.namespace, Name: name}, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The day-2 commands against a real server (without its controller):
// sync windows and source parameters, each read back from the objects
// in the cluster.
func TestCLIDay2(t *testing.T) {
	d := startDay2(t)

	t.Run("proj windows", func(t *testing.T) {
		t.Parallel()
		d.ok(t, "", "proj", "create", "-f", writeFile(t, filepath.Join(t.TempDir(), "p.yaml"), `apiVersion: graphcd.io/v1alpha1
kind: AppProject
metadata: {name: windows}
spec:
  description: keeps its other fields
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: "*"}]
`))
		if got := d.ok(t, "", "proj", "windows", "list", "windows", "-o", "json"); strings.TrimSpace(got) != "[]" {
			t.Errorf("windows of a new project = %q, want []", got)
		}
		d.ok(t, "", "proj", "windows", "add", "windows", "--kind", "deny", "--schedule", "0 22 * * *", "--duration", "8h",
			"--applications", "*", "--description", "nightly freeze")
		d.ok(t, "", "proj", "windows", "add", "windows", "--kind", "allow", "--schedule", "* * * * *", "--duration", "1h",
			"--namespaces", "prod-*,web", "--clusters", "in-cluster", "--manual-sync", "--time-zone", "Europe/Berlin", "--use-and-operator")
		p := d.project(t, "windows")
		want := []v1alpha1.SyncWindow{
			{Kind: "deny", Schedule: "0 22 * * *", Duration: "8h", Applications: []string{"*"}, Description: "nightly freeze"},
			{Kind: "allow", Schedule: "* * * * *", Duration: "1h", Namespaces: []string{"prod-*", "web"}, Clusters: []string{"in-cluster"},
				ManualSync: true, TimeZone: "Europe/Berlin", UseAndOperator: true},
		}
		if d := diffJSON(p.Spec.SyncWindows, want); d != "" {
			t.Errorf("windows after two adds (-got +want):\n%s", d)
		}
		if p.Spec.Description != "keeps its other fields" || len(p.Spec.Destinations) != 1 {
			t.Errorf("adding windows changed the rest of the spec: %+v", p.Spec)
		}
		// The every-minute window, open for an hour, is active now.
		table := d.ok(t, "", "proj", "windows", "list", "windows")
		if lines := strings.Split(strings.TrimSpace(table), "\n"); len(lines) != 3 ||
			!strings.HasPrefix(lines[2], "1") || !strings.Contains(lines[2], "Active") || !strings.Contains(lines[2], "Europe/Berlin") {
			t.Errorf("windows list =\n%s", table)
		}

		d.ok(t, "", "proj", "windows", "update", "windows", "0", "--duration", "4h", "--namespaces", "batch")
		d.ok(t, "", "proj", "windows", "disable-manual-sync", "windows", "1")
		p = d.project(t, "windows")
		if w := p.Spec.SyncWindows[0]; w.Duration != "4h" || w.Schedule != "0 22 * * *" || w.Kind != "deny" || strings.Join(w.Namespaces, ",") != "batch" {
			t.Errorf("window 0 after update = %+v", w)
		}
		if p.Spec.SyncWindows[1].ManualSync {
			t.Error("disable-manual-sync left manualSync on")
		}
		d.ok(t, "", "proj", "windows", "enable-manual-sync", "windows", "1")
		if !d.project(t, "windows").Spec.SyncWindows[1].ManualSync {
			t.Error("enable-manual-sync left manualSync off")
		}

		// Bad input is refused before anything is written.
		d.fails(t, command.ExitUsage, "--kind", "proj", "windows", "add", "windows", "--kind", "maybe", "--schedule", "* * * * *", "--duration", "1h", "--applications", "*")
		d.fails(t, command.ExitUsage, "--schedule", "proj", "windows", "add", "windows", "--kind", "deny", "--schedule", "at noon", "--duration", "1h", "--applications", "*")
		d.fails(t, command.ExitUsage, "--duration", "proj", "windows", "add", "windows", "--kind", "deny", "--schedule", "@daily", "--duration", "long", "--applications", "*")
		d.fails(t, command.ExitUsage, "--time-zone", "proj", "windows", "add", "windows", "--kind", "deny", "--schedule", "@daily", "--duration", "1h", "--applications", "*", "--time-zone", "Mars/Olympus")
		d.fails(t, command.ExitUsage, "applies to nothing", "proj", "windows", "add", "windows", "--kind", "deny", "--schedule", "@daily", "--duration", "1h")
		d.fails(t, cli.ExitError, "no sync window 7", "proj", "windows", "update", "windows", "7", "--duration", "1h")
		d.fails(t, command.ExitUsage, "want a number", "proj", "windows", "delete", "windows", "first")
		d.fails(t, cli.ExitError, "NOT_FOUND", "proj", "windows", "list", "no-such-project")
		if n := len(d.project(t, "windows").Spec.SyncWindows); n != 2 {
			t.Errorf("bad input left %d windows, want 2", n)
		}

		d.ok(t, "", "proj", "windows", "delete", "windows", "0")
		p = d.project(t, "windows")
		if len(p.Spec.SyncWindows) != 1 || p.Spec.SyncWindows[0].Kind != "allow" {
			t.Errorf("after deleting window 0: %+v", p.Spec.SyncWindows)
		}
		d.ok(t, "", "proj", "windows", "delete", "windows", "0")
		if got := d.project(t, "windows").Spec.SyncWindows; len(got) != 0 {
			t.Errorf("after deleting every window: %+v", got)
		}
	})
}

// diffJSON compares got and want as their JSON, so nil and empty agree.
func diffJSON(got, want any) string {
	g, _ := json.MarshalIndent(got, "", "  ")
	w, _ := json.MarshalIndent(want, "", "  ")
	if string(g) == string(w) {
		return ""
	}
	return "got:  " + string(g) + "\nwant: " + string(w)
}
