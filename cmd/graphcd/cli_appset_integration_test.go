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

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/cli"
	"github.com/graphcd/graphcd/controller"
)

// graphcd appset against the real server with its controller: preview
// an Argo CD manifest (a failing element exits 1 and is named on
// stderr), create it, watch the controller generate its Applications
// through appset get, list, create two sets from one file, and delete.
func TestCLIAppSet(t *testing.T) {
	s := startAuthServer(t, "--controller=true")
	run, runOK := s.adminCLI(t)
	write := func(name, body string) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	dest := cluster.Namespace(t)
	set := func(name string, elements ...string) string {
		return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: %s}
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - list: {elements: [%s]}
  template:
    metadata: {name: '%s-{{ .env }}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/guestbook.git, path: 'envs/{{ .env }}', targetRevision: main}
      destination: {name: %s, namespace: %s}
`, name, strings.Join(elements, ", "), name, controller.InClusterName, dest)
	}
	guestbook := write("guestbook.yaml", set("guestbook", "{env: dev}", "{env: prod}"))
	// The controller creates the default project as it starts.
	poll(t, "the default project", func() (bool, string) {
		r := run("proj", "get", "default")
		return r.code == 0, r.stderr
	})

	// Preview: the two Applications, nothing written.
	out := runOK("appset", "preview", "-f", guestbook)
	for _, want := range []string{"guestbook-dev", "guestbook-prod", "envs/prod", controller.InClusterName + "/" + dest} {
		if !strings.Contains(out, want) {
			t.Errorf("appset preview lacks %q:\n%s", want, out)
		}
	}
	var preview struct {
		TotalCount, FailedCount int
		Elements                []struct {
			Params      string
			Application struct{ Name string }
		}
	}
	if err := json.Unmarshal([]byte(runOK("appset", "preview", "-f", guestbook, "-o", "json")), &preview); err != nil ||
		preview.TotalCount != 2 || preview.FailedCount != 0 || preview.Elements[1].Params != `{"env":"prod"}` {
		t.Errorf("appset preview -o json = %+v (%v)", preview, err)
	}
	if got := strings.Fields(runOK("appset", "list", "-o", "name")); len(got) != 0 {
		t.Errorf("sets after a preview: %v", got)
	}
	broken := write("broken.yaml", set("broken", "{env: dev}", "{stage: prod}"))
	r := run("appset", "preview", "-f", broken)
	if r.code != cli.ExitNotAsExpected || !strings.Contains(r.stdout, "broken-dev") ||
		!strings.Contains(r.stderr, `element 1 of generator 0 {"stage":"prod"}: template:`) || !strings.Contains(r.stderr, `map has no entry for key "env"`) {
		t.Errorf("preview of a failing element = exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	// Create; again is a conflict; --upsert replaces.
	if out := runOK("appset", "create", "-f", guestbook); out != "applicationset \"guestbook\" created\n" {
		t.Errorf("appset create = %q", out)
	}
	if r := run("appset", "create", "-f", guestbook); r.code != cli.ExitError || !strings.Contains(r.stderr, client.CodeConflict) {
		t.Errorf("creating guestbook twice = %d %q, want exit 2 with CONFLICT", r.code, r.stderr)
	}
	runOK("appset", "create", "-f", guestbook, "--upsert")

	// The controller generates the Applications; get shows what it did.
	type gotSet struct {
		Name, Project string
		Status        struct {
			ResourcesCount int
			Generated      []struct{ Name, Action string }
		}
	}
	var got gotSet
	poll(t, "the controller to generate guestbook's Applications", func() (bool, string) {
		out := runOK("appset", "get", "guestbook", "-o", "json")
		got = gotSet{}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			return false, err.Error()
		}
		return got.Status.ResourcesCount == 2 && len(got.Status.Generated) == 2, out
	})
	for _, g := range got.Status.Generated {
		if !slices.Contains([]string{"guestbook-dev", "guestbook-prod"}, g.Name) || (g.Action != "Created" && g.Action != "Unchanged") {
			t.Errorf("generated %+v", got.Status.Generated)
		}
	}
	if apps := strings.Fields(runOK("app", "list", "-o", "name")); !slices.Contains(apps, "guestbook-dev") || !slices.Contains(apps, "guestbook-prod") {
		t.Errorf("app list = %v, want the generated apps", apps)
	}
	out = runOK("appset", "get", "guestbook")
	for _, want := range []string{"Project:", "default", "Generators:", "list", "guestbook-{{ .env }}", "ParametersGenerated", `{"env":"prod"}`, "guestbook-prod"} {
		if !strings.Contains(out, want) {
			t.Errorf("appset get lacks %q:\n%s", want, out)
		}
	}

	// Two sets from one file, and the list.
	runOK("appset", "create", "-f", write("two.yaml", "# two sets\n"+set("blue", "{env: a}")+"---\n"+set("green", "{env: a}")))
	if got := strings.Fields(runOK("appset", "list", "-o", "name")); !slices.Equal(got, []string{"blue", "green", "guestbook"}) {
		t.Errorf("appset list -o name = %v", got)
	}
	out = runOK("appset", "list", "-o", "wide")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 4 || !strings.Contains(lines[0], "GENERATORS") ||
		!strings.Contains(out, "https://git.example.com/guestbook.git") {
		t.Errorf("appset list -o wide:\n%s", out)
	}

	// Delete; then it is not found.
	if out := runOK("appset", "delete", "blue"); out != "applicationset \"blue\" deleted\n" {
		t.Errorf("appset delete = %q", out)
	}
	if r := run("appset", "get", "blue"); r.code != cli.ExitError || !strings.Contains(r.stderr, client.CodeNotFound) {
		t.Errorf("appset get of a deleted set = %d %q, want exit 2 NOT_FOUND", r.code, r.stderr)
	}
	if r := run("appset", "delete", "blue"); r.code != cli.ExitError || !strings.Contains(r.stderr, client.CodeNotFound) {
		t.Errorf("deleting blue twice = %d %q, want exit 2 NOT_FOUND", r.code, r.stderr)
	}
}
