package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes of Execute.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// Execute runs the command tree root with args and returns the process
// exit code. It prints errors to stderr as one line and never lets a panic
// through; cobra's own printing of errors and usage is silenced, and a
// flag that does not parse is a UsageError.
func Execute(ctx context.Context, root *cobra.Command, args []string, stderr io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			_, _ = fmt.Fprintf(stderr, "graphcd: internal error: %s\n", OneLine(fmt.Sprint(p)))
			code = ExitError
		}
	}()
	root.SilenceUsage, root.SilenceErrors = true, true
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &UsageError{Cmd: c, Err: err} })
	root.SetArgs(args)
	_, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	if ce, ok := errors.AsType[ExitCodeError](err); ok {
		if ce.Err != nil {
			_, _ = fmt.Fprintf(stderr, "graphcd: %s\n", OneLine(ce.Err.Error()))
		}
		return ce.Code
	}
	_, _ = fmt.Fprintf(stderr, "graphcd: %s\n", OneLine(err.Error()))
	if ue, ok := errors.AsType[*UsageError](err); ok {
		_, _ = fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", ue.Cmd.CommandPath())
		return ExitUsage
	}
	return ExitError
}

// ExitCodeError ends a command with a chosen exit code, for commands whose
// code carries a result (`admin diff` exits 1 when objects differ). A nil
// Err prints nothing.
type ExitCodeError struct {
	Code int
	Err  error
}

func (e ExitCodeError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit code %d", e.Code)
	}
	return e.Err.Error()
}

// UsageError is a mistake in how graphcd was invoked (an unknown flag or
// command, an invalid flag value), as opposed to a failure while running.
type UsageError struct {
	Cmd *cobra.Command
	Err error
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// NoArgs rejects positional arguments as a usage error, suggesting a
// subcommand when the argument looks like a misspelt one.
func NoArgs(c *cobra.Command, args []string) error {
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
	return &UsageError{Cmd: c, Err: fmt.Errorf("%s", msg)}
}

// OneLine collapses s to a single line, so every error is one line.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
