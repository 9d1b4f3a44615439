package controller

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/cache"
	"github.com/graphcd/graphcd/internal/clusters"
	"github.com/graphcd/graphcd/internal/secretcodec"
)

// connectRetry is how long a cluster whose cache failed to start is left
// alone before the next reconcile of one of its apps tries again.
const connectRetry = 10 * time.Second

// clusterSet is the controller's way to its destination clusters: the
// cluster Registry (over the cluster Secrets) and one cluster cache per
// cluster this shard owns, keyed by server URL.
//
// Caches start lazily, when the first owned app targets the cluster, so
// that registered clusters no app uses cost nothing; only the in-cluster
// cache starts eagerly, with the set. A cluster whose Secret changes gets
// a new cache at once if it had one; a cluster whose Secret is deleted
// loses its cache. The set runs as a manager Runnable that needs leader
// election: a standby watches no cluster Secrets and runs no cache.
type clusterSet struct {
	reg   *clusters.Registry
	shard Shard
	log   *slog.Logger
	// qps and burst are the controller's, for every cluster's clients.
	qps   float32
	burst int
	// newCache builds the (unstarted) cache of cluster c, logging in with
	// cfg, and subscribes to its events. The cache watches only the
	// namespaces (and cluster-scoped kinds) c allows.
	newCache func(c *clusters.Cluster, cfg *rest.Config) (*cache.Cluster, error)
	// changed is told about a cluster whose Secret changed, with the
	// cluster's names before and after, to refresh its apps.
	changed func(ctx context.Context, server string, names []string)

	ready chan struct{} // closed once the registry holds every Secret

	mu     sync.Mutex
	runCtx context.Context
	conns  map[string]*conn
	names  map[string]string // server -> cluster name, as last seen
	// inCluster is the latest in-cluster cache, for Controller.Live.
	inCluster *cache.Cluster
}

// conn is one cluster's cache and clients. A cluster whose Secret changes
// gets a new conn, so its clients, impersonating ones included, are built
// again from the new credentials.
type conn struct {
	dest    *Destination
	cache   *cache.Cluster
	started bool
	cancel  context.CancelFunc
	ready   chan struct{}
	// err and failed are written before ready is closed.
	err    error
	failed time.Time
	// attempted is when the cache was started; s.mu guards it.
	attempted time.Time
	// probe follows whether the cluster answers, once the cache runs.
	probe *clusterProbe
}

func (s *clusterSet) loaded() <-chan struct{} { return s.ready }

// Resolve implements destinations.
func (s *clusterSet) Resolve(dest v1alpha1.ApplicationDestination) (*clusters.Cluster, error) {
	return s.reg.Resolve(dest)
}

// failure is why cn's cluster cannot be used once its cache was started:
// the cache did not start, or the cluster does not answer.
func (cn *conn) failure() error {
	if cn.err != nil {
		return cn.err
	}
	return cn.probe.unreachable()
}

// Connect implements destinations: it returns c's running cache, starts
// one when there is none (or when the last one failed over connectRetry
// ago), and otherwise the failure.
func (s *clusterSet) Connect(c *clusters.Cluster) (*Destination, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runCtx == nil {
		return nil, fmt.Errorf("the cluster caches are not running")
	}
	cn := s.conns[c.Server]
	if cn != nil && cn.started && !cn.failed.IsZero() && time.Since(cn.failed) >= connectRetry {
		cn.cancel()
		cn = nil
	}
	if cn == nil {
		var err error
		if cn, err = s.newConn(c); err != nil {
			return nil, err
		}
		s.conns[c.Server] = cn
	}
	if !cn.started {
		s.start(cn)
	}
	return cn.dest, nil
}

// newConn builds the cache and sync clients of c without starting them.
// s.mu is held.
func (s *clusterSet) newConn(c *clusters.Cluster) (*conn, error) {
	cfg := rest.CopyConfig(c.RESTConfig)
	cfg.QPS, cfg.Burst = s.qps, s.burst
	countK8sRequests(cfg, c.Server)
	lc, err := s.newCache(c, cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster cache of %s: %w", c.Name, err)
	}
	clients, err := newSyncClients(cfg)
	if err != nil {
		return nil, fmt.Errorf("sync client of %s: %w", c.Name, err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("sync discovery client of %s: %w", c.Name, err)
	}
	cn := &conn{cache: lc, ready: make(chan struct{}), probe: &clusterProbe{
		ask: func(ctx context.Context) error { return dc.RESTClient().Get().AbsPath("/version").Do(ctx).Error() },
	}}
	cn.dest = &Destination{
		Server: c.Server, Live: lc, Client: clients.own, Mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)),
		clients: clients, ready: cn.ready, err: cn.failure,
	}
	if c.Server == InClusterServer {
		s.inCluster = lc
	}
	return cn, nil
}

// start runs cn's cache until the set stops or cn is replaced. s.mu is
// held.
func (s *clusterSet) start(cn *conn) {
	ctx, cancel := context.WithCancel(s.runCtx)
	cn.started, cn.cancel, cn.attempted = true, cancel, time.Now()
	server := cn.dest.Server
	go func() {
		s.log.Info("starting cluster cache", "server", server)
		if err := cn.cache.Start(ctx); err != nil {
			if ctx.Err() == nil {
				s.log.Warn("cluster cache did not start; apps of the cluster retry", "server", server, "err", err)
			}
			s.mu.Lock()
			cn.err, cn.failed = fmt.Errorf("start cluster cache: %w", err), time.Now()
			s.mu.Unlock()
			close(cn.ready)
			return
		}
		close(cn.ready)
		cn.probe.turned = func() { s.turned(cn, server) }
		go cn.probe.run(ctx)
		gauge := clusterCacheRunning.WithLabelValues(server)
		gauge.Set(1)
		<-ctx.Done()
		gauge.Set(0)
	}()
}

// turned reacts to cn's cluster being reported unreachable, or answering
// again after that: either way the cluster's apps are refreshed, and a
// cluster that is back gets a new cache, which lists everything afresh
// rather than waiting for the old one's watches to retry (they back off
// up to half a minute).
func (s *clusterSet) turned(cn *conn, server string) {
	s.mu.Lock()
	ctx, name := s.runCtx, s.names[server]
	down := cn.probe.unreachable()
	replace := down == nil && s.conns[server] == cn
	if replace {
		cn.cancel()
		delete(s.conns, server)
	}
	s.mu.Unlock()
	if down != nil {
		s.log.Warn("cluster unreachable: refreshing its apps", "server", server, "err", down)
	} else {
		s.log.Info("cluster answers again: restarting its cache and refreshing its apps", "server", server)
		if c, ok := s.reg.ByServer(server); ok && replace && s.shard.OwnsCluster(c) {
			if _, err := s.Connect(c); err != nil {
				s.log.Warn("restart cluster cache", "server", server, "err", err)
			}
		}
	}
	go s.changed(ctx, server, []string{name})
}

// Start implements manager.Runnable: it loads the cluster Secrets, starts
// the in-cluster cache when the shard owns that cluster, and runs until
// ctx ends.
func (s *clusterSet) Start(ctx context.Context) error {
	s.mu.Lock()
	s.runCtx = ctx
	s.mu.Unlock()
	remove := s.reg.OnChange(func(server string) { s.clusterChanged(ctx, server) })
	defer remove() // a standby that wins the lease again registers anew
	if err := s.reg.Start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil //nolint:nilerr // shutting down before the Secrets were listed
		}
		return fmt.Errorf("cluster registry: %w", err)
	}
	s.shard.arrange(s.reg.List())
	s.mu.Lock()
	s.names = clusterNames(s.reg)
	s.mu.Unlock()
	if !slices.ContainsFunc(s.reg.List(), s.shard.OwnsCluster) {
		s.log.Info("the shard owns no destination cluster: no cluster cache, no reconciles", "shard", s.shard.String())
	}
	if c, ok := s.reg.ByServer(InClusterServer); ok && s.shard.OwnsCluster(c) {
		s.mu.Lock()
		if cn := s.conns[InClusterServer]; cn != nil && c.Secret != "" {
			delete(s.conns, InClusterServer) // a Secret declares it: use its config
		}
		s.mu.Unlock()
		if _, err := s.Connect(c); err != nil {
			s.log.Warn("in-cluster cache", "err", err)
		}
	}
	close(s.ready)
	<-ctx.Done()
	return nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (s *clusterSet) NeedLeaderElection() bool { return true }

// clusterChanged restarts or stops the cache of a cluster whose Secret
// changed and refreshes the cluster's apps; with ShardRoundRobin, it also
// hands over the clusters that moved as the order of the clusters changed.
// It runs on the registry's informer goroutine and does not block.
func (s *clusterSet) clusterChanged(ctx context.Context, server string) {
	owners := s.shard.frozen()
	s.shard.arrange(s.reg.List())
	select {
	case <-s.ready:
		defer s.reshard(owners)
	default: // the Secrets are still being listed: no app was claimed yet
	}
	s.mu.Lock()
	before := s.names[server]
	cn := s.conns[server]
	running := cn != nil && cn.started
	if cn != nil {
		if cn.cancel != nil {
			cn.cancel()
		}
		delete(s.conns, server)
	}
	s.names = clusterNames(s.reg)
	after := s.names[server]
	s.mu.Unlock()
	c, registered := s.reg.ByServer(server)
	switch {
	case registered && running && s.shard.OwnsCluster(c):
		s.log.Info("cluster secret changed: restarting the cluster cache", "server", server, "cluster", c.Name)
		if _, err := s.Connect(c); err != nil {
			s.log.Warn("restart cluster cache", "server", server, "err", err)
		}
	case running:
		s.log.Info("cluster gone or no longer this shard's: stopped its cache", "server", server)
	}
	go s.changed(ctx, server, []string{before, after})
}

// reshard follows a change of the shard count (see shardCounter) or of
// the clusters' order (ShardRoundRobin): it stops the caches of the
// clusters this shard no longer owns and refreshes the apps of every
// cluster that moved, which this shard then releases or claims (claiming
// starts the cluster's cache). It does nothing before the shard leads.
func (s *clusterSet) reshard(before Shard) {
	s.mu.Lock()
	ctx := s.runCtx
	s.mu.Unlock()
	if ctx == nil || ctx.Err() != nil {
		return
	}
	for _, c := range s.reg.List() {
		was, is := before.OwnsCluster(c), s.shard.OwnsCluster(c)
		if was == is {
			continue
		}
		if !is {
			s.mu.Lock()
			if cn := s.conns[c.Server]; cn != nil {
				if cn.cancel != nil {
					cn.cancel()
				}
				delete(s.conns, c.Server)
			}
			s.mu.Unlock()
		}
		s.log.Info("cluster moved to another shard", "server", c.Server, "cluster", c.Name, "owned", is, "shards", s.shard.String())
		go s.changed(ctx, c.Server, []string{c.Name})
	}
}

// live returns the cache of the cluster at server, nil when none runs.
func (s *clusterSet) live(server string) *cache.Cluster {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cn := s.conns[secretcodec.NormaliseServer(server)]; cn != nil {
		return cn.cache
	}
	return nil
}

// clusterNames maps every registered server to its cluster name.
func clusterNames(reg *clusters.Registry) map[string]string {
	out := map[string]string{}
	for _, c := range reg.List() {
		out[c.Server] = c.Name
	}
	return out
}
