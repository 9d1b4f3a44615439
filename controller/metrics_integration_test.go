//go:build integration

package controller_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// argoCDLabels are the label sets Argo CD's documentation gives for the
// application controller families graphcd mirrors.
var argoCDLabels = map[string][]string{
	"argocd_app_info":       {"autosync_enabled", "dest_namespace", "dest_server", "health_status", "name", "namespace", "operation", "project", "repo", "sync_status"},
	"argocd_app_condition":  {"condition", "name", "namespace", "project"},
	"argocd_app_sync_total": {"dest_server", "dry_run", "name", "namespace", "phase", "project"},
	"argocd_app_reconcile":  {"dest_server", "namespace"},
	"argocd_cluster_info":   {"k8s_version", "name", "server"},
}

// After a real sync, every Application family reports the app with its
// documented labels and values, under graphcd's names and, in
// compatibility mode, Argo CD's; a deleted app leaves app_info. The
// families are read from controller-runtime's registry and from a
// controller's /metrics endpoint parsed as Prometheus text.
func TestMetricsAfterSync(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	// A controller of its own serves /metrics (the registry is the
	// process's, holding the package controller's apps) with Argo CD's
	// names on.
	stop := runController(t, controller.Config{Namespace: cluster.Namespace(t), MetricsListen: addr, MetricsArgoCDNames: true})
	defer stop()

	name := "metrics-sync"
	dest, app := newApp(t, name, map[string]string{"app/cm.yaml": configMap("DEST", name, "prod")})
	requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	waitStatus(t, name, "synced and healthy", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.Sync.Status == v1alpha1.SyncStatusCodeSynced && s.Health.Status == v1alpha1.HealthStatusHealthy
	})
	ours := map[string]string{"namespace": appNamespace, "name": name}
	// An app whose destination names no cluster has an InvalidSpecError
	// condition.
	lost := "metrics-no-cluster"
	newAppWith(t, lost, map[string]string{"app/cm.yaml": configMap("DEST", lost, "prod")}, func(a *v1alpha1.Application) {
		a.Spec.Destination.Server = "https://nowhere.invalid"
	})
	lostCondition := map[string]string{"namespace": appNamespace, "name": lost, "project": "default", "condition": string(v1alpha1.ApplicationConditionInvalidSpecError)}

	var families map[string]*dto.MetricFamily
	poll(t, "the app's metrics after its sync", func(context.Context) (bool, error) {
		families = gather(t)
		info := seriesOf(families["graphcd_app_info"], ours)
		return len(info) == 1 && labelsOf(info[0])["operation"] == "" && len(seriesOf(families["graphcd_app_condition"], lostCondition)) == 1, nil
	})
	info := labelsOf(seriesOf(families["graphcd_app_info"], ours)[0])
	want := map[string]string{
		"namespace": appNamespace, "name": name, "project": "default", "autosync_enabled": "false",
		"repo": app.Spec.Source.RepoURL, "dest_server": controller.InClusterServer, "dest_namespace": dest,
		"sync_status": "Synced", "health_status": "Healthy", "operation": "",
	}
	if diff := cmp.Diff(info, want); diff != "" {
		t.Errorf("graphcd_app_info labels (-got +want):\n%s", diff)
	}
	syncs := seriesOf(families["graphcd_app_sync_total"], ours)
	if len(syncs) != 1 || syncs[0].GetCounter().GetValue() != 1 {
		t.Fatalf("graphcd_app_sync_total of the app: %v, want one series of 1", syncs)
	}
	if l := labelsOf(syncs[0]); l["phase"] != "Succeeded" || l["dry_run"] != "false" || l["project"] != "default" || l["dest_server"] != controller.InClusterServer {
		t.Errorf("graphcd_app_sync_total labels: %v", l)
	}
	reconciles := seriesOf(families["graphcd_app_reconcile"], map[string]string{"namespace": appNamespace, "dest_server": controller.InClusterServer})
	if len(reconciles) != 1 || reconciles[0].GetHistogram().GetSampleCount() == 0 {
		t.Errorf("graphcd_app_reconcile of the app's namespace and cluster: %v, want one histogram with samples", reconciles)
	}
	clusters := seriesOf(families["graphcd_cluster_info"], map[string]string{"server": controller.InClusterServer})
	if len(clusters) != 1 || labelsOf(clusters[0])["k8s_version"] == "" || labelsOf(clusters[0])["name"] != controller.InClusterName {
		t.Errorf("graphcd_cluster_info of in-cluster: %v, want one series with a name and version", clusters)
	}

	// Compatibility mode: the same series, under Argo CD's names with
	// the label sets its documentation gives.
	for argo, labels := range argoCDLabels {
		ours := "graphcd_" + argo[len("argocd_"):]
		f, g := families[argo], families[ours]
		if f == nil || g == nil {
			t.Errorf("%s: %v, %s: %v; want both", argo, f != nil, ours, g != nil)
			continue
		}
		for _, m := range f.GetMetric() {
			if got := labelNames(m); !slices.Equal(got, labels) {
				t.Errorf("%s labels %v, Argo CD documents %v", argo, got, labels)
				break
			}
		}
		// Series counts are not compared: the two names are collected
		// one after the other, and the package's other tests start and
		// stop controllers and cluster caches meanwhile.
		if f.GetType() != g.GetType() {
			t.Errorf("%s: %s; %s: %s", argo, f.GetType(), ours, g.GetType())
		}
	}
	if len(seriesOf(families["argocd_app_info"], ours)) != 1 || len(seriesOf(families["argocd_app_condition"], lostCondition)) != 1 {
		t.Errorf("argocd_app_info or argocd_app_condition has no series of the apps")
	}

	// The controller's endpoint serves the same, as Prometheus text.
	scraped := scrape(t, "http://"+addr+"/metrics")
	for _, fam := range []string{"graphcd_app_info", "graphcd_app_condition", "graphcd_app_sync_total", "graphcd_app_reconcile", "graphcd_cluster_info", "argocd_app_info", "argocd_app_condition", "argocd_app_sync_total", "argocd_app_reconcile", "argocd_cluster_info"} {
		if scraped[fam] == nil {
			t.Errorf("/metrics serves no %s", fam)
		}
	}
	if s := seriesOf(scraped["argocd_app_info"], ours); len(s) != 1 || labelsOf(s[0])["sync_status"] != "Synced" {
		t.Errorf("/metrics argocd_app_info of the app: %v", s)
	}

	if err := apps.Delete(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	poll(t, "the deleted app gone from app_info and app_sync_total", func(context.Context) (bool, error) {
		families := gather(t)
		return len(seriesOf(families["graphcd_app_info"], ours)) == 0 && len(seriesOf(families["argocd_app_info"], ours)) == 0 &&
			len(seriesOf(families["graphcd_app_sync_total"], ours)) == 0, nil
	})
}

// freeAddr is a local address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := localcluster.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// gather reads controller-runtime's registry, by family name.
func gather(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	list, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]*dto.MetricFamily, len(list))
	for _, f := range list {
		out[f.GetName()] = f
	}
	return out
}

// scrape reads url as Prometheus text, once it answers.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	var out map[string]*dto.MetricFamily
	poll(t, "an answer from "+url, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		req.Header.Set("Accept", "text/plain")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil // not listening yet
		}
		defer func() { _ = resp.Body.Close() }()
		parser := expfmt.NewTextParser(model.UTF8Validation)
		out, err = parser.TextToMetricFamilies(resp.Body)
		return err == nil, err
	})
	return out
}

// seriesOf are the metrics of f whose labels include match.
func seriesOf(f *dto.MetricFamily, match map[string]string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range f.GetMetric() {
		l := labelsOf(m)
		ok := true
		for k, v := range match {
			ok = ok && l[k] == v
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// labelNames are m's label names, sorted.
func labelNames(m *dto.Metric) []string {
	var out []string
	for _, l := range m.GetLabel() {
		out = append(out, l.GetName())
	}
	slices.Sort(out)
	return out
}
