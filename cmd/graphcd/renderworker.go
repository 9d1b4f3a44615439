package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/reposerver/inproc"
)

// renderWorkerCommand is the hidden subcommand a render worker process
// runs (see inproc.WorkerOptions).
const renderWorkerCommand = "render-worker"

// renderWorkerOptions are the flags that run each render in a worker
// process of its own under a memory limit.
type renderWorkerOptions struct {
	memoryLimit int64
	parallelism int
}

func (o *renderWorkerOptions) addFlags(f *pflag.FlagSet) {
	f.Int64Var(&o.memoryLimit, "render-memory-limit", inproc.DefaultWorkerMemoryLimit,
		"address space of the worker process each Helm, Kustomize or Jsonnet render runs in, in bytes; 0 renders inside this process, unbounded")
	f.IntVar(&o.parallelism, "render-parallelism", inproc.DefaultWorkerParallelism,
		"how many render worker processes may run at once")
}

// worker returns the reposerver worker options, or nil with
// --render-memory-limit=0 (render in process).
func (o *renderWorkerOptions) worker(c *cobra.Command) (*inproc.WorkerOptions, error) {
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
	return &inproc.WorkerOptions{Command: []string{exe, renderWorkerCommand}, MemoryLimit: o.memoryLimit, Parallelism: o.parallelism}, nil
}

func newRenderWorkerCmd() *cobra.Command {
	return &cobra.Command{
		Use:    renderWorkerCommand,
		Short:  "Render one job read from standard input (started by the repository server)",
		Hidden: true,
		Args:   command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return inproc.ServeRenderWorker(c.Context(), c.InOrStdin(), c.OutOrStdout())
		},
	}
}
