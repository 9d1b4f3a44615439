package controller

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/graphcd/graphcd/controller/cache"
)

// liveCache starts a destination cluster's cache as a manager Runnable
// that needs leader election: a standby replica runs no informers. ready
// is closed once the cache holds the cluster's initial state; reconciles
// of the cluster's apps wait for it.
type liveCache struct {
	cluster *cache.Cluster
	server  string
	ready   chan struct{}
	log     *slog.Logger
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (l *liveCache) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable: it fills the cache and keeps it
// running until ctx ends.
func (l *liveCache) Start(ctx context.Context) error {
	l.log.Info("starting cluster cache", "server", l.server)
	if err := l.cluster.Start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil //nolint:nilerr // shutting down before the initial lists came in
		}
		return fmt.Errorf("start cluster cache of %s: %w", l.server, err)
	}
	gauge := clusterCacheRunning.WithLabelValues(l.server)
	gauge.Set(1)
	defer gauge.Set(0)
	close(l.ready)
	<-ctx.Done()
	return nil
}

// leading logs when this replica wins its shard's Lease; it runs only on
// the leader.
type leading struct {
	lease    string
	identity string
	log      *slog.Logger
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (l *leading) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable.
func (l *leading) Start(ctx context.Context) error {
	l.log.Info("leading the shard", "lease", l.lease, "identity", l.identity)
	<-ctx.Done()
	return nil
}
