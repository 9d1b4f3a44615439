package deploy_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestChartMonitoringIsComponent wants the chart's monitoring.enabled to
// install what deploy/install does with the component monitoring
// (testdata/install-monitoring).
func TestChartMonitoringIsComponent(t *testing.T) {
	t.Parallel()
	values := map[string]any{"monitoring": map[string]any{"enabled": true}, "crds": map[string]any{"install": false}}
	for _, d := range diffWithKustomization(t, "testdata/install-monitoring", values) {
		// The CRDs are left out of the render to save time.
		if !strings.HasPrefix(d, "CustomResourceDefinition.") {
			t.Error(d)
		}
	}
}

// Off by default; without monitoring.prometheusOperator the dashboard
// alone, no object of the Prometheus Operator's CRDs.
func TestChartMonitoringSwitches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		values map[string]any
		want   []string
	}{
		{nil, nil},
		{map[string]any{"enabled": true, "prometheusOperator": false}, []string{"ConfigMap/graphcd-dashboard"}},
		{map[string]any{"enabled": true}, []string{"ConfigMap/graphcd-dashboard", "PrometheusRule/graphcd", "ServiceMonitor/graphcd-controller", "ServiceMonitor/graphcd-repo-server", "ServiceMonitor/graphcd-server"}},
	} {
		values := map[string]any{"crds": map[string]any{"install": false}}
		if tc.values != nil {
			values["monitoring"] = tc.values
		}
		var got []string
		for _, o := range renderChart(t, releaseNamespace, values) {
			if o.GetName() == "graphcd-dashboard" || strings.HasPrefix(o.GetAPIVersion(), "monitoring.coreos.com/") {
				got = append(got, o.GetKind()+"/"+o.GetName())
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("monitoring %v renders %v, want %v", tc.values, got, tc.want)
		}
	}
}

// metricName finds the graphcd and argocd metric names in a PromQL
// expression.
var metricName = regexp.MustCompile(`\b(?:graphcd|argocd)_[a-zA-Z0-9_]+`)

// pendingFamilies are queried here and documented by work not merged yet.
var pendingFamilies = []string{"graphcd_cluster_connection_status"}

// The dashboard and the alerts parse, and every metric they query is a
// family docs/metrics.md documents (a histogram's _bucket, _sum and
// _count series by its family's name).
func TestDashboardAndAlertsQueryDocumentedFamilies(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := func(name string) bool {
		if slices.Contains(pendingFamilies, name) {
			return true
		}
		for _, n := range []string{name, strings.TrimSuffix(name, "_bucket"), strings.TrimSuffix(name, "_sum"), strings.TrimSuffix(name, "_count")} {
			if strings.Contains(string(doc), "`"+n+"`") {
				return true
			}
		}
		return false
	}
	checkExpr := func(where, expr string) {
		t.Helper()
		names := metricName.FindAllString(expr, -1)
		if len(names) == 0 || strings.Count(expr, "(") != strings.Count(expr, ")") {
			t.Errorf("%s: expression %q queries no graphcd metric or is unbalanced", where, expr)
		}
		for _, n := range names {
			if !documented(n) {
				t.Errorf("%s: %s is not a family of docs/metrics.md", where, n)
			}
		}
	}

	raw, err := os.ReadFile("components/monitoring/graphcd-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	if dash.UID == "" || len(dash.Panels) < 10 {
		t.Errorf("dashboard uid %q with %d panels", dash.UID, len(dash.Panels))
	}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			checkExpr("panel "+p.Title, q.Expr)
		}
	}

	raw, err = os.ReadFile("components/monitoring/prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rule struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Metadata   map[string]any `json:"metadata"`
		Spec       struct {
			Groups []struct {
				Name  string `json:"name"`
				Rules []struct {
					Alert       string            `json:"alert"`
					Expr        string            `json:"expr"`
					For         string            `json:"for"`
					Labels      map[string]string `json:"labels"`
					Annotations map[string]string `json:"annotations"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.UnmarshalStrict(raw, &rule); err != nil {
		t.Fatalf("PrometheusRule: %v", err)
	}
	var alerts []string
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			if r.Alert == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("rule %+v lacks its name, severity or summary", r)
			}
			checkExpr("alert "+r.Alert, r.Expr)
		}
	}
	for _, want := range []string{"GraphcdAppOutOfSync", "GraphcdAppDegraded", "GraphcdSyncFailing", "GraphcdReconcileSlow", "GraphcdGitFetchFailing", "GraphcdClusterConnectionFailed", "GraphcdRedisErrors"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("no alert %s among %v", want, alerts)
		}
	}
}
