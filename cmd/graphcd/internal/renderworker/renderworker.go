// Package renderworker runs each render of the repository server in a
// worker process of its own under a memory limit: the flags that set the
// limit (on server, controller, repo-server and admin render), and the
// hidden command such a worker runs, "graphcd render-worker", which reads
// one job from stdin (see inproc.WorkerOptions).
package renderworker

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/reposerver/inproc"
)

// Command is the hidden subcommand a render worker process runs.
const Command = "render-worker"

// Options are the flags that run each render in a worker process of its
// own under a memory limit.
type Options struct {
	memoryLimit int64
	parallelism int
}

// AddFlags adds --render-memory-limit and --render-parallelism to f.
func (o *Options) AddFlags(f *pflag.FlagSet) {
	f.Int64Var(&o.memoryLimit, "render-memory-limit", inproc.DefaultWorkerMemoryLimit,
		"address space of the worker process each Helm, Kustomize or Jsonnet render runs in, in bytes; 0 renders inside this process, unbounded")
	f.IntVar(&o.parallelism, "render-parallelism", inproc.DefaultWorkerParallelism,
		"how many render worker processes may run at once")
}

// Worker returns the repository server's worker options, or nil with
// --render-memory-limit=0 (render in process).
func (o *Options) Worker(c *cobra.Command) (*inproc.WorkerOptions, error) {
	if o.memoryLimit < 0 {
		return nil, fmt.Errorf("%s: must not be negative, got %d", command.FlagOrigin(c, "render-memory-limit"), o.memoryLimit)
	}
	if o.parallelism <= 0 {
		return nil, fmt.Errorf("%s: must be positive, got %d", command.FlagOrigin(c, "render-parallelism"), o.parallelism)
	}
	if o.memoryLimit == 0 {
		return nil, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("render workers: find the graphcd executable: %w", err)
	}
	return &inproc.WorkerOptions{Command: []string{exe, Command}, MemoryLimit: o.memoryLimit, Parallelism: o.parallelism}, nil
}

// NewCommand returns the hidden render-worker command, for the graphcd
// root command to mount.
func NewCommand() *cobra.Command {
	return &cobra.Command{
		Use:    Command,
		Short:  "Render one job read from standard input (started by the repository server)",
		Hidden: true,
		Args:   command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return inproc.ServeRenderWorker(c.Context(), c.InOrStdin(), c.OutOrStdout())
		},
	}
}

// ExitIfWorker serves one render and exits when this process was started
// as a render worker (its first argument is Command), and returns
// otherwise. Test binaries call it first in TestMain: the commands they
// run in process start their workers from os.Executable, the test binary.
func ExitIfWorker() {
	if len(os.Args) < 2 || os.Args[1] != Command {
		return
	}
	root := &cobra.Command{Use: "graphcd"}
	root.AddCommand(NewCommand())
	os.Exit(command.Execute(context.Background(), root, os.Args[1:], os.Stderr))
}
