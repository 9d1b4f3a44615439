//go:build integration

package session

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/testenv/localredis"
)

// The shared fixtures: one local control plane (tests isolate by
// namespace) and one redis-server (tests isolate by key prefix).
var (
	cluster     *localcluster.Cluster
	redisServer *localredis.Server
)

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Minimal}, &cluster, startRedis))
}

func startRedis(*localcluster.Cluster) (func(), error) {
	srv, err := localredis.Start(context.Background())
	if err != nil {
		return nil, err
	}
	redisServer = srv
	return func() { _ = srv.Stop() }, nil
}

// eventually polls cond until it holds; the test's own deadline bounds
// the wait.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-t.Context().Done():
			t.Fatalf("test ended waiting until %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
