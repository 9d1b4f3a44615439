// Package statusview answers the API's questions about how graphcd is
// doing: the state of each destination cluster, as the controller
// shards publish it on the status board (internal/statusboard), and the
// status of graphcd's components — the replicas that beat on the board,
// and the parts the API server reaches itself (the repository server,
// Redis, Dex), probed when asked.
//
// The API replica beats on the board too (Run), so that every replica
// is listed.
package statusview

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/graphcd/graphcd/internal/memguard"
	"github.com/graphcd/graphcd/internal/statusboard"
)

// probeTimeout bounds each probe of a component.
const probeTimeout = 3 * time.Second

// clustersFresh is how long one read of the board's clusters serves, so
// that a page of clusters reads the board once.
const clustersFresh = 2 * time.Second

// View reads the board and probes the parts the API reaches.
type View struct {
	// Board is where controllers and replicas publish.
	Board statusboard.Board
	// ID and Version name this API replica in its heartbeats.
	ID, Version string
	// Redis is the shared Redis; nil when there is none.
	Redis redis.UniversalClient
	// RepoServer names the repository server the API renders with
	// ("in process" or its address); CheckRepoServer checks it, nil
	// counts as reachable (in process).
	RepoServer      string
	CheckRepoServer func(ctx context.Context) error
	// Dex is the embedded Dex's handler, nil when SSO does not use it.
	Dex http.Handler
	// Memory is this replica's memory guard, shown in its heartbeats;
	// nil shows none.
	Memory *memguard.Guard
	// Logger receives the failures of heartbeats.
	Logger *slog.Logger

	started time.Time

	mu       sync.Mutex
	read     time.Time
	clusters map[string]statusboard.Cluster
}

// Run beats for this replica every statusboard.Interval until ctx ends.
func (v *View) Run(ctx context.Context) {
	v.started = time.Now()
	t := time.NewTicker(statusboard.Interval)
	defer t.Stop()
	for {
		err := v.Board.Beat(ctx, statusboard.Component{
			Kind: statusboard.KindAPI, ID: v.ID, Version: v.Version, Started: v.started, Memory: v.Memory.State(),
		})
		if err != nil && ctx.Err() == nil && v.Logger != nil {
			v.Logger.Debug("publish the API replica's heartbeat", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Cluster returns the state the owning shard published of the cluster
// at server; false when none did (no controller runs, or it has not
// published yet).
func (v *View) Cluster(ctx context.Context, server string) (statusboard.Cluster, bool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.clusters == nil || time.Since(v.read) > clustersFresh {
		all, err := v.Board.Clusters(ctx)
		if err != nil {
			return statusboard.Cluster{}, false, err
		}
		v.clusters = make(map[string]statusboard.Cluster, len(all))
		for _, c := range all {
			v.clusters[c.Server] = c
		}
		v.read = time.Now()
	}
	c, ok := v.clusters[server]
	return c, ok, nil
}

// Probe is the outcome of reaching one part.
type Probe struct {
	// Name says what was reached (an address, "in process").
	Name string
	// Err is why it could not be reached; nil when it could.
	Err error
}

// RedisStatus is Redis as the API sees it.
type RedisStatus struct {
	Probe
	statusboard.Server
}

// Report is the status of graphcd's components.
type Report struct {
	// Components are the replicas that beat on the board.
	Components []statusboard.Component
	// RepoServer is the repository server this replica renders with.
	RepoServer Probe
	// Redis is nil without Redis; Dex nil without the embedded Dex.
	Redis *RedisStatus
	Dex   *Probe
}

// Report reads the board and probes the parts the API reaches, each
// within probeTimeout.
func (v *View) Report(ctx context.Context) (*Report, error) {
	comps, err := v.Board.Components(ctx)
	if err != nil {
		return nil, err
	}
	r := &Report{Components: comps, RepoServer: Probe{Name: v.RepoServer}}
	if v.CheckRepoServer != nil {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		r.RepoServer.Err = v.CheckRepoServer(pctx)
		cancel()
	}
	if v.Redis != nil {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		r.Redis = &RedisStatus{Probe: Probe{Name: redisAddr(v.Redis)}}
		r.Redis.Server, r.Redis.Err = statusboard.Ping(pctx, v.Redis)
		cancel()
	}
	if v.Dex != nil {
		r.Dex = &Probe{Name: "embedded", Err: probeDex(ctx, v.Dex)}
	}
	return r, nil
}

// probeDex asks the embedded Dex for its discovery document, in process.
func probeDex(ctx context.Context, dex http.Handler) error {
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/api/dex/.well-known/openid-configuration", nil)
	rec := httptest.NewRecorder()
	dex.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return &dexError{code: rec.Code}
	}
	return nil
}

type dexError struct{ code int }

func (e *dexError) Error() string {
	return "Dex answered its discovery request with HTTP " + http.StatusText(e.code)
}

func redisAddr(c redis.UniversalClient) string {
	if cl, ok := c.(*redis.Client); ok {
		return cl.Options().Addr
	}
	return "redis"
}
