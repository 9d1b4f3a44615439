package apiserver

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/graphcd/graphcd/internal/argocdmetrics"
)

// NewRegistry returns a Prometheus registry with the Go runtime and process
// collectors, the base every graphcd component adds its metrics to.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return reg
}

// metrics counts and times HTTP requests by route name. Route names, not
// paths, keep the label set bounded whatever clients request.
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "graphcd_http_requests_total",
			Help: "HTTP requests served, by route, method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "graphcd_http_request_duration_seconds",
			Help:    "Time to serve an HTTP request, by route and status code.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "code"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register HTTP metrics: %w", err)
		}
	}
	return m, nil
}

func (m *metrics) instrument(route string, h http.Handler) http.Handler {
	label := prometheus.Labels{"route": route}
	return promhttp.InstrumentHandlerCounter(m.requests.MustCurryWith(label),
		promhttp.InstrumentHandlerDuration(m.duration.MustCurryWith(label), h))
}

func metricsHandler(reg *prometheus.Registry, argoCDNames bool, log *slog.Logger) http.Handler {
	on := &atomic.Bool{}
	on.Store(argoCDNames)
	return promhttp.HandlerFor(argocdmetrics.Gatherer{Gatherer: reg, On: on}, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      reg,
	})
}
