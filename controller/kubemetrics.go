package controller

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// appK8sRequestFamily is Argo CD's argocd_app_k8s_request_total: the
// requests the controller makes to destination clusters, by app (empty
// for the cluster caches' lists and watches, which serve every app),
// cluster, verb, resource and response. docs/metrics.md says what bounds
// each label.
var appK8sRequestFamily = &family{name: "app_k8s_request_total",
	help:   "Requests the controller made to destination clusters' Kubernetes API, by app (empty for the cluster caches), cluster, verb, resource, its namespace, response code and dry run.",
	labels: []string{"namespace", "name", "project", "server", "response_code", "verb", "resource_kind", "resource_namespace", "dry_run"}}

var appK8sRequests = newRequestCounts(metricsPrefix+appK8sRequestFamily.name, appK8sRequestFamily.help, appK8sRequestFamily.labels)

// requestLabels are the labels of one appK8sRequestFamily series, in its
// order.
type requestLabels [9]string

// requestCounts is a counter family kept small: a CounterVec holds each
// series' label pairs and a metric of its own, about 1 KB a series, and an
// app has a handful of series on its shard (6 KB per app in the heap of a
// shard with 5,000 apps). This keeps one map entry per series, grouped by
// app so that forgetting an app drops its group at once, and builds the
// metrics only when scraped.
type requestCounts struct {
	desc   *prometheus.Desc
	mu     sync.Mutex
	counts map[requestAppLabels]map[requestSeries]uint64
}

// requestAppLabels are a series' first two labels, its app's namespace
// and name; requestSeries the other seven.
type (
	requestAppLabels [2]string
	requestSeries    [7]string
)

func newRequestCounts(name, help string, labels []string) *requestCounts {
	return &requestCounts{desc: prometheus.NewDesc(name, help, labels, nil), counts: map[requestAppLabels]map[requestSeries]uint64{}}
}

// inc counts one request of the series l.
func (c *requestCounts) inc(l requestLabels) {
	app, series := requestAppLabels(l[:2]), requestSeries(l[2:])
	c.mu.Lock()
	defer c.mu.Unlock()
	group, ok := c.counts[app]
	if !ok {
		for i := range app { // the values may be parts of a longer string: keep only them
			app[i] = strings.Clone(app[i])
		}
		group = map[requestSeries]uint64{}
		c.counts[app] = group
	}
	n, ok := group[series]
	if !ok {
		for i := range series {
			series[i] = strings.Clone(series[i])
		}
	}
	group[series] = n + 1
}

// forget drops the series of the app namespace/name.
func (c *requestCounts) forget(namespace, name string) {
	c.mu.Lock()
	delete(c.counts, requestAppLabels{namespace, name})
	c.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (c *requestCounts) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *requestCounts) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	var metrics []prometheus.Metric
	for app, group := range c.counts {
		for series, n := range group {
			l := append(app[:len(app):len(app)], series[:]...)
			metrics = append(metrics, prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(n), l...))
		}
	}
	c.mu.Unlock()
	for _, m := range metrics {
		ch <- m
	}
}

// requestApp is the app a reconcile makes requests for; its project is
// known once the app is loaded.
type requestApp struct {
	key     types.NamespacedName
	project string
}

type requestAppKey struct{}

// withRequestApp returns ctx carrying a, whose requests to destination
// clusters count under a's labels.
func withRequestApp(ctx context.Context, a *requestApp) context.Context {
	return context.WithValue(ctx, requestAppKey{}, a)
}

// countK8sRequests makes cfg count its requests to server in
// graphcd_app_k8s_request_total.
func countK8sRequests(cfg *rest.Config, server string) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &k8sRequestCounter{next: rt, server: server}
	})
}

// k8sRequestCounter is a client-go transport counting requests.
type k8sRequestCounter struct {
	next   http.RoundTripper
	server string
}

// RoundTrip implements http.RoundTripper.
func (c *k8sRequestCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	code := "0" // no response: the connection failed
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	var ns, name, project string
	if a, ok := req.Context().Value(requestAppKey{}).(*requestApp); ok {
		ns, name, project = a.key.Namespace, a.key.Name, a.project
	}
	kind, resNS, verb := describeRequest(req)
	dryRun := strconv.FormatBool(req.URL.Query().Has("dryRun"))
	appK8sRequests.inc(requestLabels{ns, name, project, c.server, code, verb, kind, resNS, dryRun})
	return resp, err
}

// describeRequest reads the resource (plural, as in the path: the kinds a
// cluster serves bound it), its namespace and the Kubernetes verb from a
// request to an API path (/api/v1/..., /apis/<group>/<version>/...).
// Discovery and other paths have the resource "" and the verb of their
// method.
func describeRequest(req *http.Request) (resource, namespace, verb string) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		parts = nil
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) != 2 {
		namespace, parts = parts[1], parts[2:]
	}
	named := false
	if len(parts) > 0 {
		resource = parts[0]
		named = len(parts) > 1
	}
	return resource, namespace, kubeVerb(req, named)
}

// kubeVerb is the Kubernetes verb of a request by method, whether it
// names an object and, for a GET, whether it watches.
func kubeVerb(req *http.Request, named bool) string {
	switch req.Method {
	case http.MethodGet:
		switch {
		case req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1":
			return "watch"
		case named:
			return "get"
		}
		return "list"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if named {
			return "delete"
		}
		return "deletecollection"
	}
	return "other"
}
