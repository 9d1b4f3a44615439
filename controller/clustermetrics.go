package controller

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/graphcd/graphcd/internal/statusboard"
)

// The cluster cache families of Argo CD's application controller; see
// appmetrics.go for how families and their argocd_ twins are served.
var (
	clusterObjectsFamily = &family{name: "cluster_api_resource_objects",
		help:   "Objects in the cluster cache of each destination cluster this controller runs a cache for.",
		labels: []string{"server", "name"}}
	clusterAPIsFamily = &family{name: "cluster_api_resources",
		help:   "Kubernetes API resources (kinds) the cluster cache watches, per destination cluster.",
		labels: []string{"server", "name"}}
	clusterAgeFamily = &family{name: "cluster_cache_age_seconds",
		help:   "Seconds since the cluster cache last completed a sync (its initial lists or a discovery round); -1 before the first.",
		labels: []string{"server", "name"}}
	clusterConnectionFamily = &family{name: "cluster_connection_status",
		help:   "Whether the controller reaches the destination cluster: 1 when its cache runs, 0 when it failed to start or is starting.",
		labels: []string{"server", "name", "k8s_version"}}
	clusterEventsFamily = &family{name: "cluster_events_total",
		help:   "Watch events the cluster cache processed, by destination cluster and kind.",
		labels: []string{"server", "name", "group", "kind"}}
)

var clusterFamilies = []*family{clusterObjectsFamily, clusterAPIsFamily, clusterAgeFamily, clusterConnectionFamily, clusterEventsFamily}

var clusterMetrics = newClusterCollector(metricsPrefix)

// clusterSource is a controller whose clusters the collector reports.
type clusterSource interface {
	clusterStates() []clusterState
}

// clusterCollector computes the cluster cache families at scrape time
// from its sources' cluster sets, so that a cluster whose cache stops
// leaves no series behind.
type clusterCollector struct {
	descs map[*family]*prometheus.Desc

	mu      sync.Mutex
	sources map[clusterSource]struct{}
}

func newClusterCollector(prefix string) *clusterCollector {
	c := &clusterCollector{descs: map[*family]*prometheus.Desc{}, sources: map[clusterSource]struct{}{}}
	for _, f := range clusterFamilies {
		c.descs[f] = f.desc(prefix)
	}
	return c
}

// add makes s reported until the returned function is called.
func (c *clusterCollector) add(s clusterSource) (remove func()) {
	c.mu.Lock()
	c.sources[s] = struct{}{}
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.sources, s)
		c.mu.Unlock()
	}
}

// Describe implements prometheus.Collector.
func (c *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range clusterFamilies {
		ch <- c.descs[f]
	}
}

// Collect implements prometheus.Collector: one series of each gauge per
// cluster whose cache was started, and one events series per kind it
// saw. A cluster two sources run (parallel tests in one process) is
// reported once, from the source that reaches it best, so that one
// controller's starting cache does not hide another's running one.
func (c *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	sources := make([]clusterSource, 0, len(c.sources))
	for s := range c.sources {
		sources = append(sources, s)
	}
	c.mu.Unlock()
	best := map[string]clusterState{}
	for _, s := range sources {
		for _, st := range s.clusterStates() {
			if st.attempted.IsZero() {
				continue
			}
			if prev, ok := best[st.server]; !ok || better(st, prev) {
				best[st.server] = st
			}
		}
	}
	now := time.Now()
	gauge := func(f *family, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(c.descs[f], prometheus.GaugeValue, v, labels...)
	}
	for _, st := range best {
		version, connected := "", 0.0
		if st.cache != nil {
			version, _ = st.cache.Capabilities()
		}
		if st.status == statusboard.Successful {
			connected = 1
		}
		gauge(clusterConnectionFamily, connected, st.server, st.name, version)
		if st.cache == nil {
			continue
		}
		stats := st.cache.Stats()
		gauge(clusterObjectsFamily, float64(stats.Resources), st.server, st.name)
		gauge(clusterAPIsFamily, float64(stats.APIs), st.server, st.name)
		age := -1.0
		if !stats.LastSync.IsZero() {
			age = now.Sub(stats.LastSync).Seconds()
		}
		gauge(clusterAgeFamily, age, st.server, st.name)
		for gk, n := range stats.Events {
			ch <- prometheus.MustNewConstMetric(c.descs[clusterEventsFamily], prometheus.CounterValue, float64(n), st.server, st.name, gk.Group, gk.Kind)
		}
	}
}

// better reports whether Collect reports a over b for the same server:
// a Successful state over one with a cache over one without, and of two
// alike the one attempted first, whose cache has seen the most.
func better(a, b clusterState) bool {
	if ra, rb := reach(a), reach(b); ra != rb {
		return ra > rb
	}
	return a.attempted.Before(b.attempted)
}

func reach(st clusterState) int {
	switch {
	case st.status == statusboard.Successful:
		return 2
	case st.cache != nil:
		return 1
	}
	return 0
}

// clusterStates implements clusterSource.
func (c *Controller) clusterStates() []clusterState { return c.clusters.states() }
