package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// scaleCSVHeader names the columns of a scale run's row (--scale-csv).
var scaleCSVHeader = []string{
	"apps", "clusters", "shards", "api_replicas", "repo_servers",
	"all_synced_seconds", "graphcd_cpu_seconds", "clusters_cpu_seconds", "api_requests_per_app",
	"steady_graphcd_mcpu", "steady_clusters_mcpu", "shard_peak_rss_mib", "api_peak_rss_mib", "repo_peak_rss_mib",
	"list_p99_ms", "push_p50_seconds", "push_p99_seconds",
}

// csvRow is the run's row under scaleCSVHeader; the push figures are the
// medians over the pushes.
func (r *scaleResult) csvRow() []string {
	var cpu float64
	peaks := map[string]int64{}
	for _, f := range r.roles {
		cpu += f.cpu
		kind, _, _ := strings.Cut(f.name, "-") // controller, server, repo
		peaks[kind] = max(peaks[kind], f.peakRSS)
	}
	var p50s, p99s []time.Duration
	for _, p := range r.pushes {
		p50s = append(p50s, percentile(p.latencies, 50))
		p99s = append(p99s, percentile(p.latencies, 99))
	}
	o := r.o
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	return []string{
		strconv.Itoa(o.apps), strconv.Itoa(o.clusters), strconv.Itoa(o.shards), strconv.Itoa(o.apiReplicas), strconv.Itoa(o.repoServers),
		f(r.all.Seconds()), f(cpu), f(r.clustersCPU), f(r.apiRequests),
		f(r.steadyGraphcd), f(r.steadyClusters), strconv.FormatInt(peaks["controller"]>>20, 10), strconv.FormatInt(peaks["server"]>>20, 10), strconv.FormatInt(peaks["repo"]>>20, 10),
		f(float64(percentile(r.listLatencies, 99)) / float64(time.Millisecond)), f(percentile(p50s, 50).Seconds()), f(percentile(p99s, 50).Seconds()),
	}
}

// appendCSV adds the run's row to the file at path, with the header when
// the file is new.
func (r *scaleResult) appendCSV(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644) //nolint:gosec // figures for the person who ran the harness
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if st, err := f.Stat(); err == nil && st.Size() == 0 {
		_ = w.Write(scaleCSVHeader)
	}
	_ = w.Write(r.csvRow())
	w.Flush()
	return errors.Join(w.Error(), f.Close())
}

// plotScale draws the rows of a --scale-csv file as pictures in dir: each
// figure against the apps, for the runs over the most common cluster
// count, and against the clusters, for the runs of the most common app
// count.
func plotScale(path, dir string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil || len(rows) < 2 {
		return fmt.Errorf("%s: no runs: %w", path, err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	num := func(row []string, name string) float64 {
		i, ok := col[name]
		if !ok || i >= len(row) {
			return 0
		}
		v, _ := strconv.ParseFloat(row[i], 64)
		return v
	}
	runs := rows[1:]
	mostCommon := func(name string) float64 {
		counts := map[float64]int{}
		for _, r := range runs {
			counts[num(r, name)]++
		}
		best, n := 0.0, 0
		for v, c := range counts {
			if c > n || (c == n && v > best) {
				best, n = v, c
			}
		}
		return best
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	figures := []struct{ file, column, title, unit string }{
		{"time", "all_synced_seconds", "time to all apps Synced and Healthy", "seconds"},
		{"cpu", "graphcd_cpu_seconds", "CPU of every graphcd role until then", "CPU-seconds"},
		{"shard-rss", "shard_peak_rss_mib", "peak RSS of the busiest controller shard", "MiB"},
		{"api-requests", "api_requests_per_app", "kube-apiserver requests per app", "requests"},
		{"push-p99", "push_p99_seconds", "push to OutOfSync, p99", "seconds"},
	}
	for _, by := range []struct{ x, fixed, xunit string }{{"apps", "clusters", "apps"}, {"clusters", "apps", "destination clusters"}} {
		fixed := mostCommon(by.fixed)
		var sel [][]string
		for _, r := range runs {
			if num(r, by.fixed) == fixed {
				sel = append(sel, r)
			}
		}
		slices.SortFunc(sel, func(a, b []string) int { return int(num(a, by.x) - num(b, by.x)) })
		if len(sel) < 2 {
			continue // one point draws no curve
		}
		for _, fig := range figures {
			c := lineChart{title: fig.title, unit: fig.unit, xunit: by.xunit,
				note: fmt.Sprintf("%d runs with %s %.0f; dashed: least-squares line", len(sel), by.fixed, fixed)}
			for _, r := range sel {
				c.xs = append(c.xs, num(r, by.x))
				c.ys = append(c.ys, num(r, fig.column))
			}
			c.line = leastSquares(c.xs, c.ys)
			if err := writeChart(filepath.Join(dir, "scale-"+fig.file+"-by-"+by.x+".svg"), c); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeChart(path string, c lineChart) error {
	f, err := os.Create(path) //nolint:gosec // a picture for the person who ran the harness
	if err != nil {
		return err
	}
	err = c.svg(f)
	return errors.Join(err, f.Close())
}

// report is the run's figures as Markdown tables.
func (r *scaleResult) report() string {
	var b strings.Builder
	o := r.o
	var graphcdCPU float64
	var controllerPeak int64
	for _, f := range r.roles {
		graphcdCPU += f.cpu
		if strings.HasPrefix(f.name, "controller-") {
			controllerPeak = max(controllerPeak, f.peakRSS)
		}
	}
	fmt.Fprintf(&b, "| apps | clusters | shards | API replicas | repository servers | first | all Synced+Healthy | graphcd CPU | clusters CPU | API requests per app | steady graphcd | steady clusters | peak RSS of a shard |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | %.1f s | %.1f s | %.1f CPU-s | %.1f CPU-s | %.1f | %.0f mCPU | %.0f mCPU | %d MiB |\n\n",
		o.apps, o.clusters, o.shards, o.apiReplicas, o.repoServers, r.first.Seconds(), r.all.Seconds(), graphcdCPU, r.clustersCPU, r.apiRequests,
		r.steadyGraphcd, r.steadyClusters, controllerPeak>>20)
	fmt.Fprintf(&b, "| role | CPU until all reconciled | peak RSS |\n|---|---|---|\n")
	for _, f := range r.roles {
		note := ""
		if f.killed {
			note = " (killed; until then)"
		}
		fmt.Fprintf(&b, "| %s%s | %.1f CPU-s | %d MiB |\n", f.name, note, f.cpu, f.peakRSS>>20)
	}
	if len(r.topRequests) > 0 {
		var top []string
		for _, c := range r.topRequests {
			top = append(top, fmt.Sprintf("%s %.2f", c.what, c.perApp))
		}
		fmt.Fprintf(&b, "\nAPI requests per app, the most frequent (management cluster unless \"dest\"): %s.\n", strings.Join(top, ", "))
	}
	if r.killedRole != "" {
		fmt.Fprintf(&b, "\n%s killed with %d apps reconciled; its standby took the Lease after %.1f s.\n", r.killedRole, r.killedAt, r.takeover.Seconds())
	}
	var clusters []string
	for name, n := range r.clusterApps {
		clusters = append(clusters, fmt.Sprintf("%s %d", name, n))
	}
	slices.Sort(clusters)
	var shards []string
	for s, n := range r.shardsOfClusters {
		shards = append(shards, fmt.Sprintf("shard %d: %d", s, n))
	}
	slices.Sort(shards)
	fmt.Fprintf(&b, "\nApps per cluster: %s. Clusters per shard (%s): %s.\n", strings.Join(clusters, ", "), o.shardMethodOrDefault(), strings.Join(shards, ", "))
	if len(r.listLatencies) > 0 {
		l := slices.Clone(r.listLatencies)
		slices.Sort(l)
		slowest := slices.Index(r.listLatencies, l[len(l)-1]) + 1
		fmt.Fprintf(&b, "\nList page (500 apps, console row fields) of %d, %d requests through an API replica: p50 %v, p99 %v, max %v (request %d).\n",
			r.listTotal, len(l), percentile(l, 50).Round(100*time.Microsecond), percentile(l, 99).Round(100*time.Microsecond), l[len(l)-1].Round(100*time.Microsecond), slowest)
	}
	if len(r.pushes) > 0 {
		fmt.Fprintf(&b, "\n| push | first OutOfSync | p50 | p99 | max | missing | all synced again |\n|---|---|---|---|---|---|---|\n")
		for i, p := range r.pushes {
			if len(p.latencies) == 0 {
				fmt.Fprintf(&b, "| %d | – | – | – | – | %d | %.1f s |\n", i+1, p.missing, p.synced.Seconds())
				continue
			}
			fmt.Fprintf(&b, "| %d | %.2f s | %.2f s | %.2f s | %.2f s | %d | %.1f s |\n", i+1, p.latencies[0].Seconds(),
				percentile(p.latencies, 50).Seconds(), percentile(p.latencies, 99).Seconds(), p.latencies[len(p.latencies)-1].Seconds(), p.missing, p.synced.Seconds())
		}
	}
	if rb := r.rebalance; rb != nil {
		p := rb.push
		fmt.Fprintf(&b, "\nShard %d added: it won %d clusters (%s); every other shard's leader counted it %.1f s after it led, without a restart. The push after it: OutOfSync p50 %.2f s, p99 %.2f s, %d missing, all synced again %.1f s; the new shard reconciled %.0f times.\n",
			rb.shard, len(rb.moved), strings.Join(rb.moved, ", "), rb.counted.Seconds(),
			percentile(p.latencies, 50).Seconds(), percentile(p.latencies, 99).Seconds(), p.missing, p.synced.Seconds(), rb.reconciles)
	}
	if l := r.leases; l.count > 0 {
		fmt.Fprintf(&b, "\nLease writes (the shards' renewals and acquisitions) on the management API server, whole run: %.0f, p50 ≤ %g s, p99 ≤ %g s, %.0f over 1 s.\n",
			l.count, l.quantile(0.5), l.quantile(0.99), l.over(1))
	}
	for _, f := range r.failures {
		fmt.Fprintf(&b, "\nFAILED: %s", f)
	}
	return b.String()
}
