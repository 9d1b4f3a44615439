//go:build integration

package main

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/testenv/graphcdbin"
)

// The small scale run of make test: the code of make scale with small
// numbers — 300 auto-synced apps over 3 destination clusters (each its
// own etcd and kube-apiserver), graphcd's roles as processes (2 API
// replicas, 2 round-robin controller shards each with a standby, 2 repository
// servers, Redis) on the package's cluster, the busiest shard's leader
// killed a third of the way, then one push of every app; then a third
// shard joins (every controller runs with --dynamic-shards) and one more
// push must reach every app. It asserts what
// must hold at any size, not time: every app Synced and Healthy with one
// sync in its history (the standby finished what the killed leader left;
// no app synced twice), each app's ConfigMap on its own cluster and no
// other, the list counting every app through an API replica, every app's
// OutOfSync event after each push, the other shards counting the third
// without a restart and handing it the apps of the clusters it won, no
// role panicked.
func TestScale(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "graphcd")
	if err := graphcdbin.Build(t.Context(), bin); err != nil {
		t.Fatal(err)
	}
	o := scaleOptions{
		graphcd: bin, apps: 300, clusters: 3, shards: 2, shardMethod: controller.ShardRoundRobin, apiReplicas: 2, repoServers: 2,
		namespace: "graphcd-scale", killShard: true, addShard: true, pushes: 1, listRequests: 5, steady: 10 * time.Second, serviceAccounts: true,
		dir: t.TempDir(), log: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	r, err := runScale(t.Context(), testCluster, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + r.report())
	for _, f := range r.failures {
		t.Error(f)
	}
	if r.killedRole == "" || r.takeover == 0 {
		t.Errorf("no shard leader was killed and replaced (killed %q, takeover %v)", r.killedRole, r.takeover)
	}
	if len(r.pushes) != 1 || len(r.pushes[0].latencies) != o.apps {
		t.Errorf("the push was seen by %d of %d apps", len(r.pushes[0].latencies), o.apps)
	}
	if r.rebalance == nil || len(r.rebalance.push.latencies) != o.apps {
		t.Errorf("after adding a shard, the push was not seen by every app: %+v", r.rebalance)
	}
}
