package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command/commandtest"
)

// runCLI runs graphcd in-process with args and the given environment on top
// of an environment cleared of Kubernetes and GRAPHCD_* settings.
func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return commandtest.Run(t, newRootCmd, env, args...)
}

// writeKubeconfig writes a kubeconfig for server with a bearer token and
// returns its path.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: ` + server + `
    insecure-skip-tls-verify: true
users:
- name: test
  user:
    token: secret-token
contexts:
- name: test
  context: {cluster: test, user: test}
current-context: test
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestVersion(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "version")
	if code != command.ExitOK || stderr != "" {
		t.Fatalf("graphcd version: exit %d, stderr %q", code, stderr)
	}
	if !strings.HasPrefix(stdout, "graphcd ") || strings.Count(stdout, "\n") != 1 {
		t.Errorf("graphcd version printed %q, want one line starting with %q", stdout, "graphcd ")
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string // stderr
	}{
		{
			name: "unknown flag",
			args: []string{"server", "--bogus"},
			want: "graphcd: unknown flag: --bogus\nRun 'graphcd server --help' for usage.\n",
		},
		{
			name: "unknown command",
			args: []string{"serve"},
			want: "graphcd: unknown command \"serve\" for \"graphcd\"; did you mean \"server\"?\nRun 'graphcd --help' for usage.\n",
		},
		{
			name: "bad flag value",
			args: []string{"--log-level", "loud", "version"},
			want: "graphcd: invalid argument \"loud\" for \"--log-level\" flag: must be one of debug, info, warn, error\nRun 'graphcd version --help' for usage.\n",
		},
		{
			name: "bad env value",
			env:  map[string]string{"GRAPHCD_LOG_FORMAT": "xml"},
			args: []string{"version"},
			want: "graphcd: invalid value \"xml\" for GRAPHCD_LOG_FORMAT: must be one of text, json\nRun 'graphcd version --help' for usage.\n",
		},
		{
			name: "unexpected argument",
			args: []string{"version", "extra"},
			want: "graphcd: \"graphcd version\" takes no arguments, got \"extra\"\nRun 'graphcd version --help' for usage.\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.env, tt.args...)
			if diff := cmp.Diff([]any{code, stderr}, []any{command.ExitUsage, tt.want}); diff != "" {
				t.Errorf("graphcd %s (-got +want):\n%s", strings.Join(tt.args, " "), diff)
			}
		})
	}
}

func TestRuntimeErrors(t *testing.T) {
	unreachable := writeKubeconfig(t, "https://127.0.0.1:1")
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    string // stderr
		notWant string
	}{
		{
			name: "missing kubeconfig",
			args: []string{"server", "--kubeconfig", "/nonexistent"},
			want: "graphcd: kubeconfig /nonexistent (from --kubeconfig): file does not exist\n",
		},
		{
			name: "missing kubeconfig from env",
			env:  map[string]string{"GRAPHCD_KUBECONFIG": "/nonexistent"},
			args: []string{"server"},
			want: "graphcd: kubeconfig /nonexistent (from GRAPHCD_KUBECONFIG): file does not exist\n",
		},
		{
			name: "empty KUBECONFIG files",
			env:  map[string]string{"KUBECONFIG": "/nonexistent"},
			args: []string{"server"},
			want: "graphcd: KUBECONFIG=/nonexistent: no kubeconfig found there\n",
		},
		{
			name: "no configuration at all",
			args: []string{"server"},
			want: "graphcd: no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG, or run in a cluster\n",
		},
		{
			name:    "unreachable API",
			args:    []string{"server", "--kubeconfig", unreachable},
			want:    "graphcd: kubernetes API at https://127.0.0.1:1 unreachable: dial tcp 127.0.0.1:1: connect: connection refused\n",
			notWant: "secret-token",
		},
		{
			name: "unreachable API via KUBECONFIG",
			env:  map[string]string{"KUBECONFIG": unreachable},
			args: []string{"install", "crds"},
			want: "graphcd: kubernetes API at https://127.0.0.1:1 unreachable: dial tcp 127.0.0.1:1: connect: connection refused\n",
		},
		{
			name: "bad listen from env",
			env:  map[string]string{"GRAPHCD_LISTEN": "bad::"},
			args: []string{"server"},
			want: "graphcd: GRAPHCD_LISTEN: invalid listen address \"bad::\": too many colons in address\n",
		},
		{
			name: "flag wins over env",
			env:  map[string]string{"GRAPHCD_LISTEN": "bad::"},
			args: []string{"server", "--listen", "127.0.0.1:0", "--kubeconfig", "/nonexistent"},
			want: "graphcd: kubeconfig /nonexistent (from --kubeconfig): file does not exist\n",
		},
		{
			name: "bad listen port",
			args: []string{"server", "--listen", "127.0.0.1:http-ish"},
			want: "graphcd: --listen: invalid listen address \"127.0.0.1:http-ish\": bad port \"http-ish\"\n",
		},
		{
			name: "tls cert without key",
			args: []string{"server", "--tls-cert", "/etc/c.pem"},
			want: "graphcd: --tls-cert and --tls-key must be given together\n",
		},
		{
			name: "chat bot without a server",
			args: []string{"chatops"},
			want: "graphcd: the server (--server) must be an http or https URL\n",
		},
		{
			name: "chat bot's identity file from env",
			env: map[string]string{"GRAPHCD_SERVER": "https://cd.example.com", "GRAPHCD_TOKEN": "tok", "SLACK_SIGNING_SECRET": "sig",
				"GRAPHCD_WEBHOOK_URL": "https://hooks.example.com/secret-part", "GRAPHCD_CONFIG": "/nonexistent"},
			args:    []string{"chatops"},
			want:    "graphcd: identity file: open /nonexistent: no such file or directory\n",
			notWant: "secret-part",
		},
		{
			name: "insecure with a certificate",
			args: []string{"server", "--insecure", "--tls-cert", "/etc/c.pem", "--tls-key", "/etc/k.pem"},
			want: "graphcd: --insecure conflicts with --tls-cert: plain HTTP serves no certificate\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.env, tt.args...)
			if diff := cmp.Diff([]any{code, stderr}, []any{command.ExitError, tt.want}); diff != "" {
				t.Errorf("graphcd %s (-got +want):\n%s", strings.Join(tt.args, " "), diff)
			}
			if tt.notWant != "" && strings.Contains(stderr, tt.notWant) {
				t.Errorf("stderr %q contains %q", stderr, tt.notWant)
			}
		})
	}
}

// A command's own flag must not hide a flag its parents give every
// subcommand: `repo add --insecure` once meant the repository's TLS while
// GRAPHCD_INSECURE meant the server's, and set both.
func TestNoFlagHidesAnInheritedOne(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			for p := c.Parent(); p != nil; p = p.Parent() {
				if p.PersistentFlags().Lookup(f.Name) != nil {
					t.Errorf("%s --%s hides the --%s of %s", c.CommandPath(), f.Name, f.Name, p.CommandPath())
				}
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(io.Discard, io.Discard))
}

func TestCompletionScripts(t *testing.T) {
	for shell, want := range map[string]string{"bash": "__start_graphcd", "zsh": "#compdef graphcd", "fish": "complete -c graphcd",
		"powershell": "Register-ArgumentCompleter -CommandName 'graphcd'"} {
		code, out, errOut := runCLI(t, nil, "completion", shell)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("completion %s = %d, %q in the script: %v; stderr %q", shell, code, want, strings.Contains(out, want), errOut)
		}
	}
	// Contexts complete from the configuration file.
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	path, err := client.ConfigPath()
	if err != nil {
		t.Fatal(err)
	}
	cfg := &client.Config{}
	cfg.Put(client.Context{Name: "prod.example.com", Server: "https://prod.example.com"})
	if err := cfg.Save(path); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, map[string]string{"XDG_CONFIG_HOME": home}, "__complete", "context", "")
	if code != 0 || !strings.Contains(out, "prod.example.com") {
		t.Errorf("completing a context = %d %q", code, out)
	}
}
