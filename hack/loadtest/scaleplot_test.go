package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Rows appended by runs draw one picture per figure against the apps
// (for the runs over the most common cluster count) and against the
// clusters (for the most common app count).
func TestScaleCSVAndPlot(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "scale.csv")
	for _, run := range []struct{ apps, clusters int }{{1000, 10}, {3000, 10}, {10000, 10}, {1000, 1}, {1000, 4}} {
		r := &scaleResult{o: scaleOptions{apps: run.apps, clusters: run.clusters, shards: 2, apiReplicas: 2, repoServers: 2},
			all: time.Duration(run.apps) * 30 * time.Millisecond,
			roles: []roleFigures{
				{name: "controller-0-0", cpu: 10, peakRSS: 300 << 20}, {name: "controller-1-0", cpu: 12, peakRSS: 400 << 20},
				{name: "server-0", cpu: 2, peakRSS: 200 << 20}, {name: "repo-server-0", cpu: 3, peakRSS: 150 << 20},
			},
			listLatencies: []time.Duration{time.Millisecond, 2 * time.Millisecond},
			pushes:        []pushFigures{{latencies: []time.Duration{time.Second, 2 * time.Second}}},
		}
		if err := r.appendCSV(path); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 6 || lines[0] != strings.Join(scaleCSVHeader, ",") {
		t.Fatalf("the CSV has %d lines, header %q", len(lines), lines[0])
	}
	if want := "10000,10,2,2,2,300.00,27.00,0.00,0.00,0.00,0.00,400,200,150,2.00,1.00,2.00"; lines[3] != want {
		t.Errorf("row of the 10,000-app run:\n got %s\nwant %s", lines[3], want)
	}
	out := filepath.Join(dir, "pictures")
	if err := plotScale(path, out); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"scale-time-by-apps.svg", "scale-shard-rss-by-apps.svg", "scale-time-by-clusters.svg", "scale-push-p99-by-clusters.svg"} {
		svg, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(svg), "<polyline") || !strings.Contains(string(svg), "3 runs with") {
			t.Errorf("%s is no curve of 3 runs:\n%.400s", name, svg)
		}
	}
}

func TestTopRequests(t *testing.T) {
	const mgmt = `# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="events",scope="resource",subresource="",verb="POST",version="v1"} 30
apiserver_request_total{code="200",component="apiserver",dry_run="",group="argoproj.io",resource="applications",scope="resource",subresource="status",verb="PATCH",version="v1alpha1"} 25
apiserver_request_total{code="409",component="apiserver",dry_run="",group="argoproj.io",resource="applications",scope="resource",subresource="status",verb="PATCH",version="v1alpha1"} 5
apiserver_request_total_other{verb="GET"} 1000
`
	const dest = `apiserver_request_total{code="200",resource="configmaps",subresource="",verb="GET"} 12
`
	before, after := map[string]float64{}, map[string]float64{}
	if err := countRequests(`apiserver_request_total{resource="events",subresource="",verb="POST"} 10`, "", before); err != nil {
		t.Fatal(err)
	}
	if err := countRequests(mgmt, "", after); err != nil {
		t.Fatal(err)
	}
	if err := countRequests(dest, "dest: ", after); err != nil {
		t.Fatal(err)
	}
	top, total := topRequests(before, after, 10, 2)
	want := []requestCount{{"PATCH applications/status", 3}, {"POST events", 2}}
	if !slices.Equal(top, want) || total != 6.2 {
		t.Fatalf("top %v, total %v; want %v and 6.2", top, total, want)
	}
	if err := countRequests("apiserver_request_total{verb=\"GET\"} x\n", "", after); err == nil {
		t.Fatal("a value that is not a number: no error")
	}
}

func TestLeaseLatency(t *testing.T) {
	// Two series of Lease PUTs (codes 200 and 409), a POST, and what must
	// not count: a GET of leases and a PUT of something else.
	const text = `# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1",le="0.1"} 90
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1",le="1"} 96
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1",le="5"} 97
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1",le="+Inf"} 97
apiserver_request_duration_seconds_bucket{component="apiserver",group="coordination.k8s.io",resource="leases",verb="POST",version="v1",le="0.1"} 1
apiserver_request_duration_seconds_bucket{component="apiserver",group="coordination.k8s.io",resource="leases",verb="POST",version="v1",le="1"} 1
apiserver_request_duration_seconds_bucket{component="apiserver",group="coordination.k8s.io",resource="leases",verb="POST",version="v1",le="5"} 2
apiserver_request_duration_seconds_bucket{component="apiserver",group="coordination.k8s.io",resource="leases",verb="POST",version="v1",le="+Inf"} 3
apiserver_request_duration_seconds_bucket{group="coordination.k8s.io",resource="leases",verb="GET",le="+Inf"} 500
apiserver_request_duration_seconds_bucket{group="",resource="configmaps",verb="PUT",le="+Inf"} 500
apiserver_request_duration_seconds_count{group="coordination.k8s.io",resource="leases",verb="PUT"} 97
`
	l, err := leaseLatency(text)
	if err != nil {
		t.Fatal(err)
	}
	if l.count != 100 || l.quantile(0.5) != 0.1 || l.quantile(0.97) != 1 || l.quantile(0.99) != 5 || !math.IsInf(l.quantile(1), 1) || l.over(1) != 3 {
		t.Fatalf("count %v, p50 %v, p97 %v, p99 %v, p100 %v, over 1 s %v; want 100, 0.1, 1, 5, +Inf, 3",
			l.count, l.quantile(0.5), l.quantile(0.97), l.quantile(0.99), l.quantile(1), l.over(1))
	}
	if _, err := leaseLatency(`apiserver_request_duration_seconds_bucket{resource="leases",verb="PUT",le="x"} 1`); err == nil {
		t.Fatal("a bound that is not a number: no error")
	}
}
