package argocdmetrics

import (
	"slices"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Off, the gatherer adds nothing; on, each family Argo CD also has gets
// its argocd_ twin with the same series, and the families stay sorted.
func TestGathererAddsTwins(t *testing.T) {
	reg := prometheus.NewRegistry()
	syncs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "graphcd_app_sync_total", Help: "h"}, []string{"phase"})
	own := prometheus.NewCounter(prometheus.CounterOpts{Name: "graphcd_graphql_requests_total", Help: "h"})
	reg.MustRegister(syncs, own)
	syncs.WithLabelValues("Succeeded").Add(2)

	on := &atomic.Bool{}
	g := Gatherer{Gatherer: reg, On: on}
	names := func() ([]string, map[string]*dto.MetricFamily) {
		fams, err := g.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		byName := map[string]*dto.MetricFamily{}
		for _, f := range fams {
			out = append(out, f.GetName())
			byName[f.GetName()] = f
		}
		return out, byName
	}
	if got, _ := names(); !slices.Equal(got, []string{"graphcd_app_sync_total", "graphcd_graphql_requests_total"}) {
		t.Errorf("off: %v", got)
	}
	on.Store(true)
	got, byName := names()
	if !slices.Equal(got, []string{"argocd_app_sync_total", "graphcd_app_sync_total", "graphcd_graphql_requests_total"}) {
		t.Errorf("on: %v", got)
	}
	twin := byName["argocd_app_sync_total"]
	if twin.GetType() != dto.MetricType_COUNTER || len(twin.GetMetric()) != 1 || twin.GetMetric()[0].GetCounter().GetValue() != 2 ||
		twin.GetMetric()[0].GetLabel()[0].GetValue() != "Succeeded" {
		t.Errorf("twin %v", twin)
	}
}

func TestTwin(t *testing.T) {
	for name, want := range map[string]string{
		"graphcd_app_info": "argocd_app_info", "graphcd_redis_request_duration": "argocd_redis_request_duration",
		"graphcd_graphql_requests_total": "", "argocd_app_info": "", "app_info": "",
	} {
		if got, _ := Twin(name); got != want {
			t.Errorf("Twin(%q) = %q, want %q", name, got, want)
		}
	}
}
