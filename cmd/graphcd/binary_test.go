package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

// The version buildBinary stamps, so tests can tell it reached the API.
const (
	testVersion = "v0.0.0-test"
	testCommit  = "0123abc"
)

// buildBinary builds graphcd into a temporary directory, so tests see what a
// user sees: the real exit code and the real stderr.
func buildBinary(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not in PATH")
	}
	bin := filepath.Join(t.TempDir(), "graphcd")
	ldflags := "-X github.com/graphcd/graphcd/internal/version.Version=" + testVersion +
		" -X github.com/graphcd/graphcd/internal/version.Commit=" + testCommit
	out, err := exec.CommandContext(t.Context(), goTool, "build", "-ldflags", ldflags, "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// binaryEnv is the environment for the binary: the test's, without
// Kubernetes or GRAPHCD_* settings.
func binaryEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, command.EnvPrefix) || name == "KUBECONFIG" || name == "KUBERNETES_SERVICE_HOST" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func TestBinary(t *testing.T) {
	bin := buildBinary(t)

	t.Run("runtime error is one line", func(t *testing.T) {
		for _, args := range [][]string{
			{"server", "--kubeconfig", "/nonexistent"},
			{"server", "--kubeconfig", writeKubeconfig(t, "https://127.0.0.1:1")},
			{"install", "crds", "--kubeconfig", "/nonexistent"},
		} {
			cmd := exec.CommandContext(t.Context(), bin, args...)
			cmd.Env = binaryEnv()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) || exitErr.ExitCode() != command.ExitError {
				t.Errorf("graphcd %s: %v, want exit code %d", strings.Join(args, " "), err, command.ExitError)
			}
			if s := stderr.String(); !strings.HasPrefix(s, "graphcd: ") || strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") {
				t.Errorf("graphcd %s: stderr %q, want one line starting with %q", strings.Join(args, " "), s, "graphcd: ")
			}
		}
	})

	t.Run("usage error exits 2", func(t *testing.T) {
		cmd := exec.CommandContext(t.Context(), bin, "server", "--bogus")
		cmd.Env = binaryEnv()
		err := cmd.Run()
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitCode() != command.ExitUsage {
			t.Errorf("graphcd server --bogus: %v, want exit code %d", err, command.ExitUsage)
		}
	})

}
