// Package graphcdbin builds the graphcd binary as `make build` and the
// image build do, for the tests and tools that run it as a process.
package graphcdbin

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// Tags are the build tags graphcd ships with (the Makefile's GO_TAGS says
// the same). kustomize_disable_go_plugin_support leaves kustomize's Go
// plugin loader out: graphcd runs kustomize with plugins disabled, and a
// binary that imports Go's plugin package exports every symbol and keeps
// every exported method, 63 MB more binary and about 20 MiB more
// resident memory.
const Tags = "kustomize_disable_go_plugin_support"

// Build compiles cmd/graphcd into out.
func Build(ctx context.Context, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", Tags, "-o", out, "./cmd/graphcd")
	cmd.Dir = localcluster.RepoRoot()
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/graphcd: %w\n%s", err, b)
	}
	return nil
}
