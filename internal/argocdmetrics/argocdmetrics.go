// Package argocdmetrics serves graphcd's metric families under Argo CD's
// names too (compatibility mode, --metrics-argocd-names), so that
// dashboards and alerts written for Argo CD work unchanged.
//
// The twins are made where a scrape is gathered, not where it is
// collected: each family graphcd_<x> whose <x> Argo CD also serves is
// gathered once and sent a second time as argocd_<x>, sharing its series.
// Compatibility mode so costs the text encoding of the twins, not a
// second collection, hashing and sort of every series.
package argocdmetrics

import (
	"slices"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Prefixes of graphcd's families and of their Argo CD twins.
const (
	Prefix       = "graphcd_"
	ArgoCDPrefix = "argocd_"
)

// twinned are the families, after the prefix, that Argo CD serves with
// the same labels and meaning as graphcd: only these get a twin.
var twinned = map[string]bool{
	// application controller
	"app_info": true, "app_condition": true, "app_sync_total": true, "app_reconcile": true,
	"app_k8s_request_total": true, "cluster_info": true,
	"cluster_api_resource_objects": true, "cluster_api_resources": true, "cluster_cache_age_seconds": true,
	"cluster_connection_status": true, "cluster_events_total": true,
	// repository server
	"git_request_total": true, "git_request_duration_seconds": true, "git_fetch_fail_total": true,
	"repo_pending_request_total": true,
	// every role with Redis
	"redis_request_total": true, "redis_request_duration": true,
	// API server
	"login_request_total": true,
}

// Twin is the Argo CD name of the graphcd family name, and whether Argo CD
// serves it.
func Twin(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, Prefix)
	if !ok || !twinned[rest] {
		return "", false
	}
	return ArgoCDPrefix + rest, true
}

// Gatherer gathers g's families and, while on reports true, the Argo CD
// twins of those Twin names, sorted by name as a registry's are.
type Gatherer struct {
	prometheus.Gatherer
	On *atomic.Bool
}

// Gather implements prometheus.Gatherer. The twins share the series of
// the families they copy: neither is written to afterwards.
func (g Gatherer) Gather() ([]*dto.MetricFamily, error) {
	fams, err := g.Gatherer.Gather()
	if g.On == nil || !g.On.Load() {
		return fams, err
	}
	n := len(fams)
	for _, f := range fams[:n] {
		if name, ok := Twin(f.GetName()); ok {
			fams = append(fams, &dto.MetricFamily{Name: &name, Help: f.Help, Type: f.Type, Unit: f.Unit, Metric: f.Metric})
		}
	}
	if len(fams) > n {
		slices.SortFunc(fams, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	}
	return fams, err
}

// Registry is a registry whose Gather adds the Argo CD twins while On.
type Registry struct {
	prometheus.Registerer
	Gatherer
}

// Wrap returns reg serving the twins while on reports true.
func Wrap(reg interface {
	prometheus.Registerer
	prometheus.Gatherer
}, on *atomic.Bool) *Registry {
	return &Registry{Registerer: reg, Gatherer: Gatherer{Gatherer: reg, On: on}}
}
