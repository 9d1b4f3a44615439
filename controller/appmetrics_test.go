package controller

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/argocdmetrics"
)

// appsSource reports apps from a slice, through the reconciler's filter;
// each scrape copies the slice as the cache's List does.
type appsSource struct {
	r    *Reconciler
	apps []v1alpha1.Application
}

func (s *appsSource) eachApp(_ context.Context, fn func(*v1alpha1.Application)) {
	s.r.reportApps(slices.Clone(s.apps), fn)
}

func (s *appsSource) eachCluster(fn func(server, name, version string)) {
	fn(InClusterServer, InClusterName, "v1.35.0")
}

// benchApps are n synced, healthy apps in 20 projects claimed by r; one
// in ten has a condition.
func benchApps(b *testing.B, r *Reconciler, n int) []v1alpha1.Application {
	b.Helper()
	out := make([]v1alpha1.Application, n)
	for i := range out {
		a := &out[i]
		a.Namespace, a.Name = "graphcd", fmt.Sprintf("app-%05d", i)
		a.Spec = v1alpha1.ApplicationSpec{
			Project:     fmt.Sprintf("team-%02d", i%20),
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: a.Name},
			Destination: v1alpha1.ApplicationDestination{Server: InClusterServer, Namespace: a.Name},
		}
		a.Status.Sync.Status, a.Status.Health.Status = v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy
		if i%10 == 0 {
			a.Status.Conditions = []v1alpha1.ApplicationCondition{{Type: v1alpha1.ApplicationConditionSyncError, Message: "x", LastTransitionTime: &metav1.Time{}}}
		}
		r.memory.claim(types.NamespacedName{Namespace: a.Namespace, Name: a.Name}, InClusterServer)
	}
	return out
}

// One scrape of the Application families at 10,000 apps: the registry's
// gather and the text encoding a /metrics request does, graphcd's names
// alone and with Argo CD's too.
func BenchmarkAppMetricsScrape10000(b *testing.B) {
	for _, argoCDNames := range []bool{false, true} {
		b.Run(fmt.Sprintf("argocd-names=%t", argoCDNames), func(b *testing.B) {
			r, err := NewReconciler(nil, Options{})
			if err != nil {
				b.Fatal(err)
			}
			source := &appsSource{r: r, apps: benchApps(b, r, 10000)}
			collector := newAppCollector(metricsPrefix)
			defer collector.add(source)()
			reg := prometheus.NewRegistry()
			reg.MustRegister(collector)
			on := &atomic.Bool{}
			on.Store(argoCDNames)
			gatherer := argocdmetrics.Gatherer{Gatherer: reg, On: on}
			b.ReportAllocs()
			for b.Loop() {
				families, err := gatherer.Gather()
				if err != nil {
					b.Fatal(err)
				}
				enc := expfmt.NewEncoder(io.Discard, expfmt.NewFormat(expfmt.TypeTextPlain))
				for _, f := range families {
					if err := enc.Encode(f); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
