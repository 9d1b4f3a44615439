package controller

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/clusters"
)

// InClusterName is the destination name of the cluster graphcd runs in, as
// in Argo CD.
const InClusterName = "in-cluster"

// ShardMethod is how the shards split the destination clusters.
type ShardMethod string

const (
	// ShardByHash gives each cluster the shard ShardOf picks from its
	// server URL alone: no shard needs the others' view of the clusters,
	// and a change of the count moves only the clusters it must, but a
	// few clusters spread unevenly (10 clusters over 2 shards split 5/5
	// only one time in four).
	ShardByHash ShardMethod = "hash"
	// ShardRoundRobin deals the registered clusters, sorted by server URL,
	// to the shards in turn, as Argo CD's round-robin sharding does: the
	// shards own as many clusters as can be (one more at most), but
	// registering a cluster, or a change of the count, moves the clusters
	// after it in that order.
	ShardRoundRobin ShardMethod = "round-robin"
)

// Shard is the part of the destination clusters one controller replica
// (or one group of replicas under leader election) reconciles: the
// clusters Method gives to Index out of Count. The zero Shard owns every
// cluster.
type Shard struct {
	// Index is this shard's number, from 0 to Count-1.
	Index int
	// Count is how many shards there are; 0 counts as 1.
	Count int
	// Dynamic counts the shards from their Leases instead (see
	// shardCounter): Count is then the fewest there are, and Index may be
	// past it, for a shard that joins.
	Dynamic bool
	// Method splits the clusters; "" is ShardByHash.
	Method ShardMethod
	// live is the count a Dynamic shard found; every copy of the Shard
	// shares it.
	live *atomic.Int64
	// order is where each registered cluster comes in the order
	// ShardRoundRobin deals them (see arrange); every copy of the Shard
	// shares it.
	order *atomic.Pointer[clusterOrder]
}

// clusterOrder maps the server URL of every registered cluster to its
// place among them, sorted by server URL.
type clusterOrder map[string]int

// count is Count with the zero value meaning one shard, or the live count
// of a Dynamic shard.
func (s Shard) count() int {
	if s.live != nil {
		return int(s.live.Load())
	}
	return max(s.Count, 1)
}

// withCount is s at count shards as the clusters are now, for comparing
// owners before and after a change of the count or of the clusters.
func (s Shard) withCount(count int) Shard {
	f := Shard{Index: s.Index, Count: count, Method: s.Method}
	if s.order != nil {
		f.order = new(atomic.Pointer[clusterOrder])
		f.order.Store(s.order.Load())
	}
	return f
}

// frozen is s as it is now: its count and its clusters' order no longer
// follow changes.
func (s Shard) frozen() Shard { return s.withCount(s.count()) }

// followOrder makes s (and every copy made after) keep the registered
// clusters' order, which ShardRoundRobin needs, as arrange sets it.
func (s *Shard) followOrder() {
	if s.Method == ShardRoundRobin && s.order == nil {
		s.order = new(atomic.Pointer[clusterOrder])
	}
}

// arrange records the registered clusters' order for ShardRoundRobin: it
// sorts list by server URL. It does nothing for another method.
func (s Shard) arrange(list []*clusters.Cluster) {
	if s.order == nil {
		return
	}
	servers := make([]string, len(list))
	for i, c := range list {
		servers[i] = c.Server
	}
	o := newClusterOrder(servers)
	s.order.Store(&o)
}

func newClusterOrder(servers []string) clusterOrder {
	servers = slices.Clone(servers)
	slices.Sort(servers)
	servers = slices.Compact(servers)
	o := make(clusterOrder, len(servers))
	for i, server := range servers {
		o[server] = i
	}
	return o
}

// Assign returns the shard, 0 to shards-1, of each cluster whose server
// URL is in servers (the registered clusters, their Secrets pinning
// none), split by method as the controllers split them.
func Assign(method ShardMethod, servers []string, shards int) (map[string]int, error) {
	s := Shard{Count: shards, Method: method}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	s.followOrder()
	if s.order != nil {
		o := newClusterOrder(servers)
		s.order.Store(&o)
	}
	out := make(map[string]int, len(servers))
	for _, server := range servers {
		n, err := s.owner(server)
		if err != nil {
			return nil, err
		}
		out[server] = n
	}
	return out, nil
}

// Validate reports a Shard that cannot own anything: a negative Count, or
// an Index outside 0..Count-1 (a Dynamic shard: a negative Index).
func (s Shard) Validate() error {
	if s.Method != "" && s.Method != ShardByHash && s.Method != ShardRoundRobin {
		return fmt.Errorf("unknown sharding method %q: use %s or %s", s.Method, ShardByHash, ShardRoundRobin)
	}
	if s.Count < 0 {
		return fmt.Errorf("shard count must be at least 1, got %d", s.Count)
	}
	if s.Dynamic && s.Index >= 0 {
		return nil
	}
	if s.Index < 0 || s.Index >= s.count() {
		return fmt.Errorf("shard %d is out of range: with %d shards they are numbered 0 to %d", s.Index, s.count(), s.count()-1)
	}
	return nil
}

// String formats the shard as "1/3" (index/count).
func (s Shard) String() string { return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.count()) }

// Owns reports whether the cluster with API server URL server belongs to
// this shard. With ShardRoundRobin, a server not (yet) registered belongs
// to shard 0.
func (s Shard) Owns(server string) bool {
	if s.count() == 1 {
		return true
	}
	n, err := s.owner(server)
	if err != nil {
		return s.Index == 0
	}
	return n == s.Index
}

// owner is the shard that owns server by s's method and count.
func (s Shard) owner(server string) (int, error) {
	if s.Method != ShardRoundRobin {
		return ShardOf(server, s.count())
	}
	var order clusterOrder
	if s.order != nil {
		if o := s.order.Load(); o != nil {
			order = *o
		}
	}
	place, ok := order[server]
	if !ok {
		return 0, fmt.Errorf("cluster %s is not registered", server)
	}
	return place % s.count(), nil
}

// OwnsDestination reports whether an app with destination dest belongs to
// this shard, without a cluster registry (see DestinationServer). A
// destination that names no known cluster belongs to shard 0, so that
// exactly one shard reports it as invalid.
func (s Shard) OwnsDestination(dest v1alpha1.ApplicationDestination) bool {
	server, ok := DestinationServer(dest)
	if !ok {
		return s.Index == 0
	}
	return s.Owns(server)
}

// DestinationServer resolves an app's destination to the API server URL
// of its cluster: spec.destination.server when set, else the server of the
// cluster spec.destination.name names. It reports false for a name that
// names no known cluster. It knows only in-cluster: the controller
// resolves destinations through its cluster registry instead.
func DestinationServer(dest v1alpha1.ApplicationDestination) (string, bool) {
	switch {
	case dest.Server != "":
		return dest.Server, true
	case dest.Name == InClusterName:
		return InClusterServer, true
	default:
		return "", false
	}
}

// errNoServer is ShardOf's answer for an empty server URL.
var errNoServer = errors.New("empty cluster server URL")

// ShardOf returns the shard, 0 to shards-1, that owns the cluster whose API
// server URL is server.
//
// It is rendezvous (highest random weight) hashing: every shard i scores
// the cluster with the first 8 bytes, read big-endian, of
// SHA-256(server + "#" + decimal(i)), and the highest score wins (the lower
// index on a tie). Every replica computes the same answer without talking
// to the others, clusters spread evenly, and going from M to M+1 shards
// moves only the clusters the new shard wins, about 1/(M+1) of them; every
// other cluster keeps its shard. The URL is hashed exactly as written in
// the Application (no normalisation), as Argo CD compares it.
func ShardOf(server string, shards int) (int, error) {
	if shards < 1 {
		return 0, fmt.Errorf("shard count must be at least 1, got %d", shards)
	}
	if server == "" {
		return 0, errNoServer
	}
	best, bestScore := 0, uint64(0)
	buf := make([]byte, 0, len(server)+1+20)
	for i := range shards {
		buf = strconv.AppendInt(append(append(buf[:0], server...), '#'), int64(i), 10)
		sum := sha256.Sum256(buf)
		if score := binary.BigEndian.Uint64(sum[:8]); i == 0 || score > bestScore {
			best, bestScore = i, score
		}
	}
	return best, nil
}

// OwnsCluster reports whether cluster c belongs to this shard: the shard
// its Secret pins it to (a pin outside 0..Count-1 counts as no pin), else
// the one Method gives it. A pinned cluster keeps its place in the round
// robin: the shard it is dealt to just does not get it.
func (s Shard) OwnsCluster(c *clusters.Cluster) bool {
	if c.Shard != nil && *c.Shard < s.count() {
		return *c.Shard == s.Index
	}
	return s.Owns(c.Server)
}

// claim reports whether this reconciler may reconcile app: whether its
// shard owns the app's destination cluster. An app it does not own is
// left alone (no status write, no event) and its in-memory state dropped.
// A destination that names no usable cluster belongs to shard 0, which
// reports it. For an app it owns, claim starts the cluster's cache when it
// is not running and waits until it holds the cluster's initial state,
// then counts the reconcile.
func (r *Reconciler) claim(ctx context.Context, app *v1alpha1.Application) (*target, bool) {
	key := types.NamespacedName{Namespace: app.Namespace, Name: app.Name}
	select {
	case <-r.dests.loaded():
	case <-ctx.Done():
		return nil, false
	}
	t := &target{}
	t.cluster, t.resolveErr = r.dests.Resolve(app.Spec.Destination)
	owned := r.opts.Shard.Index == 0
	if t.resolveErr == nil {
		owned = r.opts.Shard.OwnsCluster(t.cluster)
		t.resolveErr = resolveTarget(app, t.cluster)
	}
	if !owned {
		r.memory.release(key)
		return nil, false
	}
	server := ""
	if t.resolveErr == nil {
		server = t.cluster.Server
		t.dest, t.connErr = r.dests.Connect(t.cluster)
		if t.connErr == nil {
			if err := t.dest.wait(ctx); ctx.Err() != nil {
				return nil, false
			} else if err != nil {
				t.dest, t.connErr = nil, err
			}
		}
	}
	r.memory.claim(key, server)
	appReconciles.WithLabelValues(strconv.Itoa(r.opts.Shard.Index)).Inc()
	return t, true
}

// shardOwns reports whether this controller's shard owns app: the
// notifier and the insights recorder act on the apps it reconciles.
func (r *Reconciler) shardOwns(ctx context.Context, app *v1alpha1.Application) bool {
	if !r.opts.AppNamespaces.Allowed(app.Namespace) {
		return false
	}
	select {
	case <-r.dests.loaded():
	case <-ctx.Done():
		return false
	}
	cl, err := r.dests.Resolve(app.Spec.Destination)
	if err != nil {
		return r.opts.Shard.Index == 0
	}
	return r.opts.Shard.OwnsCluster(cl)
}
