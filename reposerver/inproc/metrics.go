package inproc

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/graphcd/graphcd/reposerver/git"
)

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
	// Argo CD has no render histogram; its dashboards time renders with
	// the gRPC server's. failed is "true" or "false".
	renderSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "graphcd_repo_render_duration_seconds",
		Help:    "How long the renders the repository server ran took (checkout or pull, then the tool), in seconds, by whether they failed.",
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120},
	}, []string{"failed"})
)

// Collectors returns the repository server's metrics, its Git client's
// included.
func Collectors() []prometheus.Collector {
	return append([]prometheus.Collector{rendersRun, cacheHits, renderSeconds}, git.Collectors()...)
}
