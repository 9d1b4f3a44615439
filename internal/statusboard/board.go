package statusboard

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/graphcd/graphcd/internal/memguard"
)

// Connection statuses of a cluster, Argo CD's.
const (
	Successful = "Successful"
	Failed     = "Failed"
	Unknown    = "Unknown"
)

// Kinds of components.
const (
	KindAPI        = "api"
	KindController = "controller"
)

// Bounds of the board.
const (
	// StaleAfter is how long an entry counts after it was written.
	// Writers write every Interval.
	StaleAfter = 45 * time.Second
	Interval   = 10 * time.Second
	// MaxClusters is the most clusters a shard publishes; MaxComponents
	// the most components the board lists; MaxComponentClusters the most
	// cluster servers a component lists.
	MaxClusters          = 2000
	MaxComponents        = 200
	MaxComponentClusters = 100
	// maxText bounds each free-text field (messages, versions, names).
	maxText = 1024
)

// Cluster is one destination cluster as its shard's controller sees it.
type Cluster struct {
	Server string `json:"server"`
	Name   string `json:"name,omitempty"`
	// ServerVersion is the cluster's Kubernetes version ("v1.35.0").
	ServerVersion string `json:"serverVersion,omitempty"`
	// Status is Successful, Failed or Unknown (no app uses the cluster,
	// or its cache is starting); Message says why it failed or is
	// unknown; AttemptedAt is when the cache last tried to connect.
	Status      string    `json:"status"`
	Message     string    `json:"message,omitempty"`
	AttemptedAt time.Time `json:"attemptedAt,omitzero"`
	// Resources and APIs count the objects and kinds in the cache;
	// LastSync is when the cache last completed a sync.
	Resources int       `json:"resources"`
	APIs      int       `json:"apis"`
	LastSync  time.Time `json:"lastSync,omitzero"`
	// Apps is how many applications the shard reconciles on the cluster.
	Apps int `json:"apps"`
	// Shard is the controller shard that owns the cluster.
	Shard int `json:"shard"`
}

// Component is one running process of graphcd.
type Component struct {
	// Kind is KindAPI or KindController; ID names the
	// replica (its pod or host name, and for a controller its leader
	// election identity).
	Kind string `json:"kind"`
	ID   string `json:"id"`
	// Version is the build's version.
	Version string `json:"version,omitempty"`
	// Shard, Leader and Clusters are a controller's: its shard, whether
	// it holds the shard's lease, and the servers whose caches it runs.
	Shard    int      `json:"shard,omitempty"`
	Leader   bool     `json:"leader,omitempty"`
	Clusters []string `json:"clusters,omitempty"`
	// Memory is the process's memory against its limit, and whether it
	// is under pressure (see internal/memguard).
	Memory memguard.State `json:"memory,omitzero"`
	// Started is when the process started; Seen when it last beat.
	Started time.Time `json:"started,omitzero"`
	Seen    time.Time `json:"seen"`
}

// Board is where status is published and read. Implementations are safe
// for concurrent use.
type Board interface {
	// PutClusters replaces the clusters published for shard.
	PutClusters(ctx context.Context, shard int, clusters []Cluster) error
	// Clusters returns the clusters of every shard that published within
	// StaleAfter, sorted by server.
	Clusters(ctx context.Context) ([]Cluster, error)
	// Beat records c as alive now.
	Beat(ctx context.Context, c Component) error
	// Components returns the components that beat within StaleAfter,
	// sorted by kind, shard and ID.
	Components(ctx context.Context) ([]Component, error)
}

// shardEntry is what a shard publishes.
type shardEntry struct {
	At       time.Time `json:"at"`
	Clusters []Cluster `json:"clusters"`
}

// fresh reports whether t is within StaleAfter of now.
func fresh(t, now time.Time) bool { return now.Sub(t) < StaleAfter }

// bound cuts clusters and texts to the board's limits.
func boundClusters(clusters []Cluster) []Cluster {
	out := slices.Clone(clusters[:min(len(clusters), MaxClusters)])
	for i := range out {
		c := &out[i]
		c.Server, c.Name, c.ServerVersion, c.Message = cut(c.Server), cut(c.Name), cut(c.ServerVersion), cut(c.Message)
	}
	return out
}

func boundComponent(c Component) Component {
	c.Kind, c.ID, c.Version = cut(c.Kind), cut(c.ID), cut(c.Version)
	c.Clusters = slices.Clone(c.Clusters[:min(len(c.Clusters), MaxComponentClusters)])
	for i := range c.Clusters {
		c.Clusters[i] = cut(c.Clusters[i])
	}
	return c
}

func cut(s string) string {
	if len(s) <= maxText {
		return s
	}
	return s[:maxText]
}

func componentKey(c Component) string { return c.Kind + "/" + c.ID }

func shardField(shard int) string { return strconv.Itoa(shard) }

func sortClusters(cs []Cluster) {
	slices.SortFunc(cs, func(a, b Cluster) int { return cmp.Compare(a.Server, b.Server) })
}

func sortComponents(cs []Component) []Component {
	slices.SortFunc(cs, func(a, b Component) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Shard, b.Shard), cmp.Compare(a.ID, b.ID))
	})
	return cs[:min(len(cs), MaxComponents)]
}

// Memory is a Board in process memory, for a single process.
type Memory struct {
	mu         sync.Mutex
	shards     map[int]shardEntry
	components map[string]Component
	now        func() time.Time
}

// NewMemory returns an empty Memory board.
func NewMemory() *Memory {
	return &Memory{shards: map[int]shardEntry{}, components: map[string]Component{}, now: time.Now}
}

// PutClusters implements Board.
func (m *Memory) PutClusters(_ context.Context, shard int, clusters []Cluster) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.shards[shard] = shardEntry{At: m.now(), Clusters: boundClusters(clusters)}
	return nil
}

// Clusters implements Board.
func (m *Memory) Clusters(context.Context) ([]Cluster, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	var out []Cluster
	for shard, e := range m.shards {
		if !fresh(e.At, now) {
			delete(m.shards, shard)
			continue
		}
		out = append(out, e.Clusters...)
	}
	sortClusters(out)
	return out, nil
}

// Beat implements Board.
func (m *Memory) Beat(_ context.Context, c Component) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c = boundComponent(c)
	c.Seen = m.now()
	key := componentKey(c)
	if _, ok := m.components[key]; !ok && len(m.components) >= MaxComponents {
		return nil
	}
	m.components[key] = c
	return nil
}

// Components implements Board.
func (m *Memory) Components(context.Context) ([]Component, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	out := make([]Component, 0, len(m.components))
	for key, c := range m.components {
		if !fresh(c.Seen, now) {
			delete(m.components, key)
			continue
		}
		out = append(out, c)
	}
	return sortComponents(out), nil
}

// NewID names a replica: its host name and a random suffix, so that two
// processes on one host, or a restarted one, are told apart.
func NewID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "graphcd"
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	return host + "_" + hex.EncodeToString(suffix)
}
