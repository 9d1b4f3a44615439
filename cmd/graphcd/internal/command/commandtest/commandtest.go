// Package commandtest runs graphcd's command trees in process, for tests,
// with the same exit codes and error lines as the binary.
package commandtest

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

// Run runs the command tree newRoot builds with args, in an environment
// cleared of Kubernetes and GRAPHCD_* settings with env on top, and
// returns the exit code and what the commands printed.
func Run(t *testing.T, newRoot func(stdout, stderr io.Writer) *cobra.Command, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, command.EnvPrefix) {
			t.Setenv(name, "")
		}
	}
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	for k, v := range env {
		t.Setenv(k, v)
	}
	defaultLog := slog.Default()
	t.Cleanup(func() { slog.SetDefault(defaultLog) })

	var out, errOut bytes.Buffer
	code = command.Execute(t.Context(), newRoot(&out, &errOut), args, &errOut)
	return code, out.String(), errOut.String()
}

// Root returns a builder of a root command "graphcd" that holds the
// commands cmds returns and reads their flags from the environment as the
// binary does: for the tests of a group of commands without the rest of
// the binary.
func Root(cmds func() []*cobra.Command) func(stdout, stderr io.Writer) *cobra.Command {
	return func(stdout, stderr io.Writer) *cobra.Command {
		root := &cobra.Command{
			Use:               "graphcd",
			Args:              command.NoArgs,
			PersistentPreRunE: func(c *cobra.Command, _ []string) error { return command.BindEnv(c) },
		}
		root.SetOut(stdout)
		root.SetErr(stderr)
		root.AddCommand(cmds()...)
		return root
	}
}
