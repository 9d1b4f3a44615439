package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/client"
)

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
	if code, _, errOut := runCLI(t, env, "context", "nope"); code != cliExitError || !strings.Contains(errOut, `no context "nope"`) {
		t.Errorf("context nope = %d %q, want 2", code, errOut)
	}
	if code, _, errOut := runCLI(t, env, "context", "--delete", "a"); code != 0 {
		t.Fatalf("context --delete a = %d %s", code, errOut)
	}
	if got, _ := client.LoadConfig(path); got.Context("a") != nil || got.CurrentContext != "" {
		t.Errorf("after deleting a: %+v", got)
	}
	// No current context and no --server.
	if code, _, errOut := runCLI(t, env, "app", "list"); code != cliExitError || !strings.Contains(errOut, "no server") {
		t.Errorf("app list without a server = %d %q, want 2", code, errOut)
	}
	if code, _, _ := runCLI(t, env, "app", "get"); code != exitUsage {
		t.Errorf("app get without a name = %d, want %d", code, exitUsage)
	}
}
