package controller

import (
	"context"
	"slices"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/graphcd/graphcd/controller/cache"
	"github.com/graphcd/graphcd/internal/statusboard"
	"github.com/graphcd/graphcd/internal/version"
)

// Messages of a cluster whose connection state is unknown, as Argo CD
// words them.
const (
	msgNotMonitored = "Cluster has no applications and is not being monitored."
	msgConnecting   = "The cluster cache is starting."
)

// clusterState is one destination cluster of the shard as the cluster
// set sees it.
type clusterState struct {
	server, name string
	// cache is the cluster's running cache, nil when none runs (no app of
	// the shard targets it yet, or it failed to start).
	cache     *cache.Cluster
	status    string // statusboard.Successful, Failed or Unknown
	message   string
	attempted time.Time
}

// states returns every cluster the shard owns or runs a cache for,
// sorted by server. It holds the set only to copy its caches.
func (s *clusterSet) states() []clusterState {
	byServer := map[string]*clusterState{}
	s.mu.Lock()
	running := s.runCtx != nil
	for server, cn := range s.conns {
		if !cn.started {
			continue
		}
		st := &clusterState{server: server, attempted: cn.attempted}
		select {
		case <-cn.ready:
			if err := cn.failure(); err != nil {
				st.status, st.message = statusboard.Failed, err.Error()
			} else {
				st.status, st.cache = statusboard.Successful, cn.cache
			}
		default:
			st.status, st.message = statusboard.Unknown, msgConnecting
		}
		byServer[server] = st
	}
	s.mu.Unlock()
	if running {
		for _, c := range s.reg.List() {
			if st := byServer[c.Server]; st != nil {
				st.name = c.Name
			} else if s.shard.OwnsCluster(c) {
				byServer[c.Server] = &clusterState{server: c.Server, name: c.Name, status: statusboard.Unknown, message: msgNotMonitored}
			}
		}
	}
	out := make([]clusterState, 0, len(byServer))
	for _, st := range byServer {
		if st.name == "" && st.server == InClusterServer {
			st.name = InClusterName
		}
		out = append(out, *st)
	}
	slices.SortFunc(out, func(a, b clusterState) int { return strings.Compare(a.server, b.server) })
	return out
}

// clusterInfos is what the shard publishes of its clusters.
func (c *Controller) clusterInfos() []statusboard.Cluster {
	apps := c.reconciler.memory.appsByServer()
	states := c.clusters.states()
	out := make([]statusboard.Cluster, 0, len(states))
	for _, st := range states {
		info := statusboard.Cluster{
			Server: st.server, Name: st.name, Status: st.status, Message: st.message,
			AttemptedAt: st.attempted, Apps: apps[st.server], Shard: c.cfg.Shard.Index,
		}
		if st.cache != nil {
			info.ServerVersion, _ = st.cache.Capabilities()
			stats := st.cache.Stats()
			info.Resources, info.APIs, info.LastSync = stats.Resources, stats.APIs, stats.LastSync
		}
		out = append(out, info)
	}
	return out
}

// statusPublisher writes the controller's heartbeat to the status board
// every statusboard.Interval on every replica, and, on the shard's
// leader, the state of the shard's clusters.
type statusPublisher struct {
	c       *Controller
	board   statusboard.Board
	id      string
	elected <-chan struct{}
	started time.Time
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: standbys
// beat too, as standbys.
func (p *statusPublisher) NeedLeaderElection() bool { return false }

// Start implements manager.Runnable.
func (p *statusPublisher) Start(ctx context.Context) error {
	t := time.NewTicker(statusboard.Interval)
	defer t.Stop()
	for {
		p.publish(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-p.elected:
			p.elected = nil // publish at once on winning the lease
		}
	}
}

func (p *statusPublisher) publish(ctx context.Context) {
	leader := isClosed(p.c.mgr.Elected())
	comp := statusboard.Component{
		Kind: statusboard.KindController, ID: p.id, Version: version.Get().Version,
		Shard: p.c.cfg.Shard.Index, Leader: leader, Started: p.started,
		Memory: p.c.cfg.Memory.State(),
	}
	var infos []statusboard.Cluster
	if leader {
		infos = p.c.clusterInfos()
		for _, info := range infos {
			if info.Status != statusboard.Unknown || info.AttemptedAt != (time.Time{}) {
				comp.Clusters = append(comp.Clusters, info.Server)
			}
		}
	}
	if err := p.board.Beat(ctx, comp); err != nil && ctx.Err() == nil {
		p.c.cfg.Logger.Debug("publish the controller's heartbeat", "err", err)
	}
	if !leader {
		return
	}
	if err := p.board.PutClusters(ctx, p.c.cfg.Shard.Index, infos); err != nil && ctx.Err() == nil {
		p.c.cfg.Logger.Debug("publish the clusters' status", "err", err)
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// addStatusPublisher makes the manager publish to board; nil publishes
// nothing.
func (c *Controller) addStatusPublisher(mgr ctrl.Manager, board statusboard.Board) error {
	if board == nil {
		return nil
	}
	id := c.cfg.LeaderElection.Identity
	if id == "" {
		id = statusboard.NewID()
	}
	return mgr.Add(&statusPublisher{c: c, board: board, id: id, elected: mgr.Elected(), started: time.Now()})
}
