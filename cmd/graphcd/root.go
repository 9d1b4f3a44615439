package main

import (
	"io"
	"log/slog"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/admin"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/cli"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/renderworker"
	"github.com/graphcd/graphcd/internal/tracing"
)

// rootOptions holds the persistent flags and what PersistentPreRunE
// derives from them for the subcommands.
type rootOptions struct {
	logLevel   *command.Enum
	logFormat  *command.Enum
	kubeconfig string

	stdout, stderr io.Writer
	log            *slog.Logger
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &rootOptions{
		logLevel:  command.NewEnum("info", "debug", "info", "warn", "error"),
		logFormat: command.NewEnum("text", "text", "json"),
		stdout:    stdout,
		stderr:    stderr,
	}
	root := &cobra.Command{
		Use:   "graphcd",
		Short: "GitOps continuous delivery for Kubernetes with a GraphQL API",
		Long: `graphcd keeps Kubernetes clusters in the state declared in Git.

Every flag can also be set from the environment as GRAPHCD_<FLAG>, upper
case with dashes as underscores (GRAPHCD_LISTEN for --listen); a flag on the
command line wins over the environment.`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			if err := command.BindEnv(c); err != nil {
				return err
			}
			o.log = newLogger(o.stderr, o.logLevel.String(), o.logFormat.String())
			slog.SetDefault(o.log)    // the standard log package, used by some libraries
			klog.SetSlogLogger(o.log) // client-go
			ctrllog.SetLogger(logr.FromSlogHandler(o.log.Handler()))
			return nil
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.CompletionOptions.HiddenDefaultCmd = true

	f := root.PersistentFlags()
	f.Var(o.logLevel, "log-level", "log level: "+strings.Join(o.logLevel.Allowed(), ", "))
	f.Var(o.logFormat, "log-format", "log format: "+strings.Join(o.logFormat.Allowed(), ", "))
	f.StringVar(&o.kubeconfig, "kubeconfig", "",
		"path to a kubeconfig; else $KUBECONFIG, else the in-cluster service account")

	root.AddCommand(newVersionCmd(o), newServerCmd(o), newControllerCmd(o), newInstallCmd(o), admin.NewCommand(&o.kubeconfig), newCMPServerCmd(o), newRepoServerCmd(o), newChatopsCmd(o), renderworker.NewCommand())
	root.AddCommand(cli.Commands()...)
	command.DocumentEnv(root)
	return root
}

// newLogger returns the process logger. Logs go to stderr so that stdout
// stays free for command output.
func newLogger(w io.Writer, level, format string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level)) // validated by the flag
	opts := &slog.HandlerOptions{Level: l}
	// Records logged with a context name its trace, span and API request.
	if format == "json" {
		return slog.New(tracing.NewLogHandler(slog.NewJSONHandler(w, opts)))
	}
	return slog.New(tracing.NewLogHandler(slog.NewTextHandler(w, opts)))
}
