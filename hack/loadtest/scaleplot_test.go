package main

import (
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
