// Command graphcd is the graphcd GitOps continuous-delivery server and CLI.
//
// This package holds the daemons (server, controller, repo-server,
// cmp-server, the render worker, the chat bot) and install, and only wires
// them: flags -> options structs -> constructors -> run. The operators'
// tools are package internal/admin, the user CLI package internal/cli, the
// chat bot package internal/chatops; all are mounted on the root command
// here. Every flag can also be set from the environment as GRAPHCD_<FLAG>.
// Errors are printed as one line, "graphcd: <message>", with exit code 1,
// or 2 for usage errors such as an unknown flag (package
// internal/command).
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
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

// execute runs the graphcd command line with args and returns the process
// exit code.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return command.Execute(ctx, newRootCmd(stdout, stderr), args, stderr)
}
