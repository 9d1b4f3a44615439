//go:build integration

package controller_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/statusboard"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// A controller publishes its clusters on the status board: in-cluster
// Successful with its version, cache figures and apps once an app has
// synced there; a registered cluster nothing listens at Failed with the
// error once an app targets it; and itself as the shard's leader. Its
// /metrics serves the cluster cache families, under Argo CD's names too.
func TestClusterStatusPublished(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	board := statusboard.NewMemory()
	addr := freeAddr(t)
	stop := runController(t, controller.Config{Namespace: ns, Status: board, MetricsListen: addr, MetricsArgoCDNames: true})
	defer stop()

	// A cluster whose server refuses connections: a port just closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "https://" + l.Addr().String()
	_ = l.Close()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "down", Labels: map[string]string{wellknown.SecretTypeLabel: secretcodec.TypeCluster}},
		StringData: map[string]string{"name": "down", "server": down, "config": `{"tlsClientConfig":{"insecure":true},"bearerToken":"not-a-real-token"}`},
	}
	if _, err := cluster.Client.CoreV1().Secrets(ns).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	auto := func(a *v1alpha1.Application) {
		a.Namespace = ns
		a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}
	}
	newAppWith(t, "status-up", map[string]string{"app/cm.yaml": configMap("DEST", "status-up", "prod")}, auto)
	newAppWith(t, "status-down", map[string]string{"app/cm.yaml": configMap("DEST", "status-down", "prod")}, func(a *v1alpha1.Application) {
		auto(a)
		a.Spec.Destination.Server = down
	})

	var up, failed statusboard.Cluster
	poll(t, "in-cluster Successful with a synced app, and the down cluster Failed", func(ctx context.Context) (bool, error) {
		var app v1alpha1.Application
		if err := apps.Get(ctx, types.NamespacedName{Namespace: ns, Name: "status-up"}, &app); err != nil {
			return false, err
		}
		if app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
			return false, nil
		}
		all, err := board.Clusters(ctx)
		if err != nil {
			return false, err
		}
		for _, c := range all {
			switch c.Server {
			case controller.InClusterServer:
				up = c
			case down:
				failed = c
			}
		}
		return up.Status == statusboard.Successful && up.Apps == 1 && failed.Status == statusboard.Failed, nil
	})
	if up.Name != controller.InClusterName || !strings.HasPrefix(up.ServerVersion, "v1.") || up.Resources == 0 || up.APIs == 0 || up.LastSync.IsZero() || up.AttemptedAt.IsZero() {
		t.Errorf("in-cluster: %+v, want its name, version, cache figures and times", up)
	}
	if failed.Name != "down" || failed.Apps != 1 || !strings.Contains(failed.Message, "connection refused") || failed.Resources != 0 {
		t.Errorf("the down cluster: %+v, want Failed with the connection error and its app", failed)
	}
	if strings.Contains(failed.Message, "not-a-real-token") {
		t.Errorf("the down cluster's message shows its token: %s", failed.Message)
	}

	comps, err := board.Components(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(comps) != 1 || comps[0].Kind != statusboard.KindController || !comps[0].Leader || !slices.Contains(comps[0].Clusters, controller.InClusterServer) {
		t.Errorf("components: %+v, want the controller, leading, with in-cluster's cache", comps)
	}

	scraped := scrape(t, "http://"+addr+"/metrics")
	value := func(fam string, labels map[string]string) (float64, bool) {
		s := seriesOf(scraped[fam], labels)
		if len(s) != 1 {
			return 0, false
		}
		return metricValue(s[0]), true
	}
	for _, prefix := range []string{"graphcd_", "argocd_"} {
		inCluster := map[string]string{"server": controller.InClusterServer}
		if v, ok := value(prefix+"cluster_connection_status", inCluster); !ok || v != 1 {
			t.Errorf("%scluster_connection_status of in-cluster: %v %v, want 1", prefix, v, ok)
		}
		if v, ok := value(prefix+"cluster_connection_status", map[string]string{"server": down, "name": "down"}); !ok || v != 0 {
			t.Errorf("%scluster_connection_status of the down cluster: %v %v, want 0", prefix, v, ok)
		}
		for _, fam := range []string{"cluster_api_resource_objects", "cluster_api_resources"} {
			if v, ok := value(prefix+fam, inCluster); !ok || v <= 0 {
				t.Errorf("%s%s of in-cluster: %v %v, want above 0", prefix, fam, v, ok)
			}
		}
		if v, ok := value(prefix+"cluster_cache_age_seconds", inCluster); !ok || v < 0 {
			t.Errorf("%scluster_cache_age_seconds of in-cluster: %v %v, want 0 or more", prefix, v, ok)
		}
		cms := seriesOf(scraped[prefix+"cluster_events_total"], map[string]string{"server": controller.InClusterServer, "group": "", "kind": "ConfigMap"})
		if len(cms) != 1 || cms[0].GetCounter().GetValue() == 0 {
			t.Errorf("%scluster_events_total of in-cluster's ConfigMaps: %v, want one counter above 0", prefix, cms)
		}
	}
	for fam, labels := range map[string][]string{
		"argocd_cluster_api_resource_objects": {"name", "server"},
		"argocd_cluster_api_resources":        {"name", "server"},
		"argocd_cluster_cache_age_seconds":    {"name", "server"},
		"argocd_cluster_connection_status":    {"k8s_version", "name", "server"},
		"argocd_cluster_events_total":         {"group", "kind", "name", "server"},
	} {
		for _, m := range scraped[fam].GetMetric() {
			if got := labelNames(m); !slices.Equal(got, labels) {
				t.Errorf("%s labels %v, want %v", fam, got, labels)
				break
			}
		}
	}
}

// metricValue is a gauge's or counter's value.
func metricValue(m *dto.Metric) float64 {
	if m.GetCounter() != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}
