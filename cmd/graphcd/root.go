package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// rootOptions holds the persistent flags and what PersistentPreRunE
// derives from them for the subcommands.
type rootOptions struct {
	logLevel   *enumValue
	logFormat  *enumValue
	kubeconfig string

	stdout, stderr io.Writer
	log            *slog.Logger
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &rootOptions{
		logLevel:  newEnum("info", "debug", "info", "warn", "error"),
		logFormat: newEnum("text", "text", "json"),
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
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          noArgs,
		RunE:          func(c *cobra.Command, _ []string) error { return c.Help() },
		PersistentPreRunE: func(c *cobra.Command, _ []string) error {
			if err := bindEnv(c); err != nil {
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
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &usageError{cmd: c, err: err} })
	root.CompletionOptions.HiddenDefaultCmd = true

	f := root.PersistentFlags()
	f.Var(o.logLevel, "log-level", "log level: "+strings.Join(o.logLevel.allowed, ", "))
	f.Var(o.logFormat, "log-format", "log format: "+strings.Join(o.logFormat.allowed, ", "))
	f.StringVar(&o.kubeconfig, "kubeconfig", "",
		"path to a kubeconfig; else $KUBECONFIG, else the in-cluster service account")

	root.AddCommand(newVersionCmd(o), newServerCmd(o), newControllerCmd(o), newInstallCmd(o), newAdminCmd(o), newCMPServerCmd(o), newRepoServerCmd(o), newRenderWorkerCmd())
	root.AddCommand(cliCommands(o)...)
	documentEnv(root)
	return root
}

// newLogger returns the process logger. Logs go to stderr so that stdout
// stays free for command output.
func newLogger(w io.Writer, level, format string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level)) // validated by the flag
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// noArgs rejects positional arguments as a usage error, suggesting a
// subcommand when the argument looks like a misspelt one.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	if !c.HasSubCommands() {
		msg = fmt.Sprintf("%q takes no arguments, got %q", c.CommandPath(), args[0])
	}
	if s := c.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	}
	return &usageError{cmd: c, err: fmt.Errorf("%s", msg)}
}
