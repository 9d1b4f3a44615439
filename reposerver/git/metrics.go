package git

import (
	"strings"
	"time"

	"github.com/go-git/go-git/v5/config"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/graphcd/graphcd/internal/repourl"
)

// Request types of graphcd_git_request_total, Argo CD's.
const (
	requestLsRemote = "ls-remote"
	requestFetch    = "fetch"
)

// The git families are Argo CD's repository server's, under graphcd_ (and
// argocd_ in compatibility mode): the same labels, the same buckets. The
// repo label is the repository URL without credentials, so its values are
// bounded by the repositories the apps use.
var (
	gitRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "graphcd_git_request_total",
		Help: "Requests to Git servers, by repository and request type (ls-remote, fetch), failed ones included.",
	}, []string{"repo", "request_type"})
	gitRequestSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "graphcd_git_request_duration_seconds",
		Help:    "How long requests to Git servers took, in seconds, by repository and request type.",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 4, 10, 20},
	}, []string{"repo", "request_type"})
	// revision is what the fetch asked for: a commit SHA, or a ref pattern
	// (refs/heads/*) when the server cannot fetch by SHA; its values are
	// bounded by the revisions that failed to fetch since the start.
	gitFetchFails = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "graphcd_git_fetch_fail_total",
		Help: "Fetches from Git servers that failed, by repository and revision.",
	}, []string{"repo", "revision"})
	repoPending = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "graphcd_repo_pending_request_total",
		Help: "Checkouts waiting for a repository's working copy, which another checkout of another commit holds, by repository.",
	}, []string{"repo"})
)

// Collectors returns the Git client's metrics, for the process to register
// where it serves /metrics.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{gitRequests, gitRequestSeconds, gitFetchFails, repoPending}
}

// countRequest counts a request of type typ to ep that started at start.
func countRequest(ep *endpoint, typ string, start time.Time) {
	repo := repourl.Redact(ep.fetchURL)
	gitRequests.WithLabelValues(repo, typ).Inc()
	gitRequestSeconds.WithLabelValues(repo, typ).Observe(time.Since(start).Seconds())
}

// waiting counts a checkout of ep waiting for its working copy until the
// returned function is called.
func waiting(ep *endpoint) (done func()) {
	g := repoPending.WithLabelValues(repourl.Redact(ep.fetchURL))
	g.Inc()
	return g.Dec
}

// countFetchFailure counts a failed fetch of specs from ep.
func countFetchFailure(ep *endpoint, specs []config.RefSpec) {
	revision := ""
	if len(specs) > 0 {
		revision = strings.TrimPrefix(specs[0].Src(), "+")
	}
	gitFetchFails.WithLabelValues(repourl.Redact(ep.fetchURL), revision).Inc()
}
