//go:build integration

package reliability

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphcd/graphcd/internal/testenv/graphcdbin"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

var (
	cluster *localcluster.Cluster
	// graphcdBin is the graphcd binary every role runs, built once.
	graphcdBin string
	// logDir holds the roles' logs.
	logDir string
	// fullMode is GRAPHCD_FAULTS=full: the fault durations and
	// load instead of the short ones `make test` runs.
	fullMode = os.Getenv("GRAPHCD_FAULTS") == "full"
)

func TestMain(m *testing.M) {
	// The roles inherit this environment: no GRAPHCD_* variable (graphcd
	// reads its flags from them) and no Kubernetes setting must reach them.
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GRAPHCD_") || name == "KUBECONFIG" || name == "KUBERNETES_SERVICE_HOST" {
			_ = os.Unsetenv(name)
		}
	}
	// Full: hooks are Jobs and waves hold Deployments, which need the
	// controller manager, the scheduler and KWOK's fake nodes to finish.
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Full}, &cluster, buildGraphcd))
}

// buildGraphcd builds the graphcd binary into a temporary directory.
func buildGraphcd(*localcluster.Cluster) (func(), error) {
	dir, err := os.MkdirTemp("", "graphcd-faults-")
	if err != nil {
		return nil, err
	}
	graphcdBin, logDir = filepath.Join(dir, "graphcd"), dir
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := graphcdbin.Build(ctx, graphcdBin); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	// GRAPHCD_KEEP_CLUSTER_DIR (which keeps the cluster's directory) keeps
	// the roles' logs too.
	return func() {
		if os.Getenv("GRAPHCD_KEEP_CLUSTER_DIR") == "" {
			_ = os.RemoveAll(dir)
		}
	}, nil
}

// full reports whether GRAPHCD_FAULTS=full asks for the fault
// durations and load instead of the short ones `make test` runs.
func full() bool { return fullMode }
