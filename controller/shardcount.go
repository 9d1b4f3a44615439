package controller

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// shardPoll is how often a Dynamic shard reads the shards' Leases.
const shardPoll = 5 * time.Second

// shardCounter keeps a Dynamic shard's count: one more than the highest
// shard whose Lease (LeaseName) a leader renewed within grace, and never
// fewer than the Shard's Count or its own Index+1. A controller started
// with a new --shard therefore joins: within one poll of it taking its
// Lease, every shard counts it, and the clusters rendezvous hashing gives
// it (about 1/(M+1) of them) move to it without a restart of the others.
// A shard gone for longer than grace (removed from the top, as a
// StatefulSet scales down) hands its clusters back. grace outlasts a
// leader's failover, so that a standby taking over moves nothing.
type shardCounter struct {
	reader    client.Reader
	namespace string
	shard     Shard
	every     time.Duration
	grace     time.Duration
	// changed is told the Shard as it was before the count changed.
	changed func(before Shard)
	log     interface {
		Info(msg string, args ...any)
		Warn(msg string, args ...any)
	}
}

// Start implements manager.Runnable: it polls the Leases until ctx ends.
func (s *shardCounter) Start(ctx context.Context) error {
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		s.poll(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: a
// standby counts too, so that it knows the count when it takes over.
func (s *shardCounter) NeedLeaderElection() bool { return false }

func (s *shardCounter) poll(ctx context.Context) {
	var leases coordinationv1.LeaseList
	if err := s.reader.List(ctx, &leases, client.InNamespace(s.namespace)); err != nil {
		if ctx.Err() == nil {
			s.log.Warn("cannot count the controller shards: keeping the count", "shards", s.shard.count(), "err", err)
		}
		return
	}
	n := countShards(leases.Items, time.Now().Add(-s.grace), max(s.shard.Count, s.shard.Index+1, 1))
	if old := s.shard.live.Swap(int64(n)); int(old) != n {
		s.log.Info("controller shard count changed: rebalancing the clusters", "shard", s.shard.Index, "from", old, "to", n)
		s.changed(s.shard.withCount(int(old)))
	}
}

// countShards is one more than the highest shard whose Lease was renewed
// after since, and at least least.
func countShards(leases []coordinationv1.Lease, since time.Time, least int) int {
	n := least
	for _, l := range leases {
		rest, ok := strings.CutPrefix(l.Name, leasePrefix)
		if !ok {
			continue
		}
		i, err := strconv.Atoi(rest)
		if err != nil || i < 0 || strconv.Itoa(i) != rest {
			continue
		}
		// A Lease released by a leader that stopped (its holder emptied)
		// still counts until grace: its standby takes it at once.
		if l.Spec.RenewTime != nil && l.Spec.RenewTime.After(since) {
			n = max(n, i+1)
		}
	}
	return n
}

// newLiveCount gives a Dynamic shard its shared count, starting from the
// least it can be.
func newLiveCount(s Shard) *atomic.Int64 {
	live := new(atomic.Int64)
	live.Store(int64(max(s.Count, s.Index+1, 1)))
	return live
}
