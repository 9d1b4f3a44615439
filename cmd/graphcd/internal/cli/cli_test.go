package cli

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command/commandtest"
)

// runCLI runs the CLI's commands in process under a root "graphcd", with
// the given environment.
func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return commandtest.Run(t, commandtest.Root(Commands), env, args...)
}

func TestParseResource(t *testing.T) {
	for in, want := range map[string]client.SyncResourceInput{
		"apps:Deployment:web":                        {Group: "apps", Kind: "Deployment", Name: "web"},
		":ConfigMap:team/settings":                   {Kind: "ConfigMap", Namespace: "team", Name: "settings"},
		"rbac.authorization.k8s.io:ClusterRole:view": {Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "view"},
	} {
		got, err := parseResource(in)
		if err != nil {
			t.Errorf("parseResource(%q): %v", in, err)
			continue
		}
		if d := cmp.Diff(got, want); d != "" {
			t.Errorf("parseResource(%q) (-got +want):\n%s", in, d)
		}
	}
	for _, in := range []string{"Deployment:web", "apps::web", "apps:Deployment:"} {
		if _, err := parseResource(in); err == nil {
			t.Errorf("parseResource(%q) succeeded, want an error", in)
		}
	}
}

func TestServerURL(t *testing.T) {
	for in, want := range map[string]string{
		"cd.example.com":         "https://cd.example.com",
		"http://127.0.0.1:8080/": "http://127.0.0.1:8080",
		"https://cd.example.com": "https://cd.example.com",
	} {
		if got, err := serverURL(in); err != nil || got != want {
			t.Errorf("serverURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := serverURL("ftp://cd.example.com"); err == nil {
		t.Error("serverURL accepted ftp://")
	}
}

// Contexts are listed, switched and deleted in the configuration file,
// and the client commands exit 2 on errors.
func TestContextCommand(t *testing.T) {
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
	path, err := func() (string, error) {
		t.Setenv("XDG_CONFIG_HOME", env["XDG_CONFIG_HOME"])
		return client.ConfigPath()
	}()
	if err != nil {
		t.Fatal(err)
	}
	cfg := &client.Config{}
	cfg.Put(client.Context{Name: "a", Server: "http://127.0.0.1:1", User: "admin", Token: "t"})
	cfg.Put(client.Context{Name: "b", Server: "http://127.0.0.1:2"})
	if err := cfg.Save(path); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, env, "context")
	if code != 0 || !strings.Contains(out, "*         b") || !strings.Contains(out, "a      http://127.0.0.1:1   admin   yes") {
		t.Errorf("context = %d %q %q", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, env, "context", "a"); code != 0 {
		t.Fatalf("context a = %d %s", code, errOut)
	}
	if got, _ := client.LoadConfig(path); got.CurrentContext != "a" {
		t.Errorf("current context = %q, want a", got.CurrentContext)
	}
	if code, _, errOut := runCLI(t, env, "context", "nope"); code != ExitError || !strings.Contains(errOut, `no context "nope"`) {
		t.Errorf("context nope = %d %q, want 2", code, errOut)
	}
	if code, _, errOut := runCLI(t, env, "context", "--delete", "a"); code != 0 {
		t.Fatalf("context --delete a = %d %s", code, errOut)
	}
	if got, _ := client.LoadConfig(path); got.Context("a") != nil || got.CurrentContext != "" {
		t.Errorf("after deleting a: %+v", got)
	}
	// No current context and no --server.
	if code, _, errOut := runCLI(t, env, "app", "list"); code != ExitError || !strings.Contains(errOut, "no server") {
		t.Errorf("app list without a server = %d %q, want 2", code, errOut)
	}
	if code, _, _ := runCLI(t, env, "app", "get"); code != command.ExitUsage {
		t.Errorf("app get without a name = %d, want %d", code, command.ExitUsage)
	}
}

func TestSpecEditApply(t *testing.T) {
	s := func(v string) *string { return &v }
	yes, no := true, false
	for _, tc := range []struct {
		name    string
		edit    specEdit
		spec    string
		want    string
		wantErr string
	}{
		{"source", specEdit{revision: s("v2"), path: s("web")},
			`{"source":{"repoURL":"r","path":"app","targetRevision":"main"},"destination":{"server":"s","namespace":"n"}}`,
			`{"source":{"repoURL":"r","path":"web","targetRevision":"v2"},"destination":{"server":"s","namespace":"n"}}`, ""},
		{"destination by name drops the server", specEdit{destName: s("in-cluster"), destNS: s("web")},
			`{"destination":{"server":"s","namespace":"n"}}`,
			`{"destination":{"name":"in-cluster","namespace":"web"}}`, ""},
		{"automated with prune", specEdit{syncPolicy: s("automated"), autoPrune: &yes, selfHeal: &no},
			`{"destination":{}}`,
			`{"destination":{},"syncPolicy":{"automated":{"prune":true,"selfHeal":false}}}`, ""},
		{"manual keeps the options", specEdit{syncPolicy: s("none")},
			`{"destination":{},"syncPolicy":{"automated":{"prune":true},"syncOptions":["CreateNamespace=true"]}}`,
			`{"destination":{},"syncPolicy":{"syncOptions":["CreateNamespace=true"]}}`, ""},
		{"prune without automated", specEdit{autoPrune: &yes}, `{"destination":{}}`, "", "need automated sync"},
		{"multi-source", specEdit{revision: s("v2")}, `{"sources":[{"repoURL":"r"}],"destination":{}}`, "", "several"},
		{"bad policy", specEdit{syncPolicy: s("sometimes")}, `{"destination":{}}`, "", "want automated or none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var spec map[string]any
			if err := json.Unmarshal([]byte(tc.spec), &spec); err != nil {
				t.Fatal(err)
			}
			err := tc.edit.apply(spec)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("apply = %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(spec, want); d != "" {
				t.Errorf("spec (-got +want):\n%s", d)
			}
		})
	}
}

func TestAppArgument(t *testing.T) {
	for _, tc := range []struct {
		arg, flag string
		wantName  string
		wantNS    string // "" for the server's own
		wantUsage string
	}{
		{arg: "web", wantName: "web"},
		{arg: "web", flag: "team-a", wantName: "web", wantNS: "team-a"},
		{arg: "team-a/web", wantName: "web", wantNS: "team-a"},
		{arg: "team-a/web", flag: "team-a", wantName: "web", wantNS: "team-a"},
		{arg: "team-a/web", flag: "team-b", wantUsage: `is in namespace "team-a", but --app-namespace says "team-b"`},
		{arg: "/web", wantUsage: "want NAME or NAMESPACE/NAME"},
		{arg: "team-a/", wantUsage: "want NAME or NAMESPACE/NAME"},
		{arg: "a/b/c", wantUsage: "want NAME or NAMESPACE/NAME"},
		{arg: "", wantUsage: "the application name is empty"},
	} {
		o := &appOptions{namespace: tc.flag}
		err := appArgs(o)(&cobra.Command{Use: "get"}, []string{tc.arg})
		if tc.wantUsage != "" {
			if _, ok := errors.AsType[*command.UsageError](err); !ok || !strings.Contains(err.Error(), tc.wantUsage) {
				t.Errorf("%q (--app-namespace %q): err = %v, want a usage error saying %q", tc.arg, tc.flag, err, tc.wantUsage)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.arg, err)
			continue
		}
		ref := o.ref(tc.arg)
		ns := ""
		if ref.Namespace != nil {
			ns = *ref.Namespace
		}
		if ref.Name != tc.wantName || ns != tc.wantNS {
			t.Errorf("%q (--app-namespace %q) = %q in %q, want %q in %q", tc.arg, tc.flag, ref.Name, ns, tc.wantName, tc.wantNS)
		}
	}
}
