package inproc

import "github.com/prometheus/client_golang/prometheus"

// Metrics of the repository servers of the process, for the caller to
// register where it serves /metrics.
var (
	rendersRun = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "graphcd_repo_renders_total",
		Help: "Renders run by the repository server (checkout or pull, then the tool), failed ones included; requests answered from the manifest cache or sharing another request's render are not counted.",
	})
	cacheHits = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "graphcd_repo_manifest_cache_hits_total",
		Help: "Manifest requests answered from the manifest cache (a cached render or a cached failure).",
	})
)

// Collectors returns the repository server's metrics.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{rendersRun, cacheHits}
}
