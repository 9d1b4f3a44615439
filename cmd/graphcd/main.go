// Command graphcd is the graphcd GitOps continuous-delivery server and CLI.
//
// This package only wires: flags -> options structs -> constructors -> run.
// Every flag can also be set from the environment as GRAPHCD_<FLAG> (see
// env.go). Errors are printed as one line, "graphcd: <message>", with exit
// code 1, or 2 for usage errors such as an unknown flag.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // restore default handling: a second signal ends the process at once
	}()
	code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit codes of execute.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// execute runs the graphcd command line with args and returns the process
// exit code. It prints errors to stderr as one line and never lets a panic
// through.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			_, _ = fmt.Fprintf(stderr, "graphcd: internal error: %s\n", oneLine(fmt.Sprint(p)))
			code = exitError
		}
	}()
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	_, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	if ce, ok := errors.AsType[exitCodeError](err); ok {
		if ce.err != nil {
			_, _ = fmt.Fprintf(stderr, "graphcd: %s\n", oneLine(ce.err.Error()))
		}
		return ce.code
	}
	_, _ = fmt.Fprintf(stderr, "graphcd: %s\n", oneLine(err.Error()))
	if ue, ok := errors.AsType[*usageError](err); ok {
		_, _ = fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", ue.cmd.CommandPath())
		return exitUsage
	}
	return exitError
}

// exitCodeError ends a command with a chosen exit code, for commands whose
// code carries a result (`admin diff` exits 1 when objects differ). A nil
// err prints nothing.
type exitCodeError struct {
	code int
	err  error
}

func (e exitCodeError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit code %d", e.code)
	}
	return e.err.Error()
}

// usageError is a mistake in how graphcd was invoked (an unknown flag or
// command, an invalid flag value), as opposed to a failure while running.
type usageError struct {
	cmd *cobra.Command
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// oneLine collapses s to a single line, so every error is one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
