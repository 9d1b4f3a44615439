package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/Khan/genqlient/graphql"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/testenv/roles"
)

// metricOf sums the series of name (any labels) at a /metrics URL, and
// reports whether there was one.
func metricOf(ctx context.Context, url, name string) (sum float64, found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, false, err
	}
	sum, found, err = sumSeries(string(b), name)
	if err != nil {
		err = fmt.Errorf("%s: %w", url, err)
	}
	return sum, found, err
}

// sumSeries sums the samples of the series of name (any labels) in a
// Prometheus text exposition, and reports whether there was one.
func sumSeries(text, name string) (sum float64, found bool, err error) {
	for line := range strings.Lines(text) {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return 0, false, fmt.Errorf("%q: %w", line, err)
		}
		sum, found = sum+v, true
	}
	return sum, found, nil
}

// sleepCtx sleeps d, or returns ctx's error when it ends first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// proc is a process whose CPU and memory a run reports: a role, Redis.
type proc struct {
	name string
	pid  int
}

// graphcdProcs are the running roles of in and its Redis.
func graphcdProcs(in *roles.Installation) []proc {
	var ps []proc
	for _, role := range in.All() {
		if role.Running() {
			ps = append(ps, proc{role.Name, role.PID()})
		}
	}
	return append(ps, proc{"redis", in.Redis.PID()})
}

// costs is what the clusters and the processes had spent at a moment.
type costs struct {
	requests map[string]float64 // kube-apiserver requests, see apiRequests
	clusters float64            // CPU-seconds of every cluster
	cpu      map[string]float64 // CPU-seconds by process name
}

func costsNow(ctx context.Context, clusters []*localcluster.Cluster, ps []proc) (c costs, err error) {
	if c.requests, err = apiRequests(ctx, clusters); err != nil {
		return c, err
	}
	if c.clusters, err = clustersCPU(clusters); err != nil {
		return c, err
	}
	c.cpu = map[string]float64{}
	for _, p := range ps {
		if c.cpu[p.name], err = cpuSeconds(p.pid); err != nil {
			return c, err
		}
	}
	return c, nil
}

// measured records what the processes ps (and those killed on the way,
// measured when killed) and the clusters spent from before to after.
func (r *scaleResult) measured(before, after costs, ps []proc, killed map[string]roleFigures) error {
	for _, p := range ps {
		peak, err := peakRSS(p.pid)
		if err != nil {
			return err
		}
		r.roles = append(r.roles, roleFigures{name: p.name, cpu: after.cpu[p.name] - before.cpu[p.name], peakRSS: peak})
	}
	for _, f := range killed {
		r.roles = append(r.roles, f)
	}
	r.clustersCPU = after.clusters - before.clusters
	r.topRequests, r.apiRequests = topRequests(before.requests, after.requests, r.o.apps, 8)
	return nil
}

// figuresOf is what p spent since it had spent cpuBefore, and its peak
// RSS.
func figuresOf(p proc, cpuBefore float64) (roleFigures, error) {
	cpu, err := cpuSeconds(p.pid)
	if err != nil {
		return roleFigures{}, err
	}
	peak, err := peakRSS(p.pid)
	return roleFigures{name: p.name, cpu: cpu - cpuBefore, peakRSS: peak}, err
}

// measureSteady measures the CPU the processes (those procs returns) and
// every cluster take over the steady period, with every app reconciled
// and nothing changing: periodic refreshes only.
func (r *scaleResult) measureSteady(procs func() []proc, all []*localcluster.Cluster) error {
	r.o.log.Info("measuring steady state", "for", r.o.steady)
	running := func() (float64, error) {
		var sum float64
		for _, p := range procs() {
			s, err := cpuSeconds(p.pid)
			if err != nil {
				return 0, err
			}
			sum += s
		}
		return sum, nil
	}
	g0, err := running()
	if err != nil {
		return err
	}
	c0, err := clustersCPU(all)
	if err != nil {
		return err
	}
	time.Sleep(r.o.steady)
	g1, err := running()
	if err != nil {
		return err
	}
	c1, err := clustersCPU(all)
	if err != nil {
		return err
	}
	r.steadyGraphcd = (g1 - g0) / r.o.steady.Seconds() * 1000
	r.steadyClusters = (c1 - c0) / r.o.steady.Seconds() * 1000
	return nil
}

// listQuery is the console's applications page at the size of issue 7's
// target: 500 apps with the fields of a row.
const listQuery = `query ScaleList($after: String) {
  applications(first: 500, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes {
      name namespace project
      spec { destination { name server namespace } sources { repoURL path targetRevision } }
      status {
        sync { status revision }
        health { status message }
        operationState { phase message startedAt finishedAt }
        reconciledAt
      }
    }
  }
}`

// measureList times listRequests requests of the pages of every app in
// turn, one at a time over one connection, from writing the request to
// reading the response's last byte.
func (r *scaleResult) measureList(ctx context.Context, c *client.Client) error {
	var after *string
	for range r.o.listRequests {
		body, err := json.Marshal(map[string]any{"query": listQuery, "variables": map[string]any{"after": after}})
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Server+client.GraphQLPath, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		t0 := time.Now()
		resp, err := c.HTTP.Do(req)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		r.listLatencies = append(r.listLatencies, time.Since(t0))
		if err != nil {
			return err
		}
		var page struct {
			Data struct {
				Applications struct {
					TotalCount int
					PageInfo   struct {
						HasNextPage bool
						EndCursor   string
					}
					Nodes []json.RawMessage
				}
			}
			Errors []json.RawMessage
		}
		if err := json.Unmarshal(b, &page); err != nil || len(page.Errors) > 0 || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("list page: %s: %.500s", resp.Status, b)
		}
		apps := page.Data.Applications
		r.listTotal = apps.TotalCount
		if want := min(500, r.o.apps); after == nil && len(apps.Nodes) != want {
			r.failures = append(r.failures, fmt.Sprintf("the first list page has %d apps, want %d", len(apps.Nodes), want))
		}
		after = &apps.PageInfo.EndCursor
		if !apps.PageInfo.HasNextPage {
			after = nil
		}
	}
	if r.o.listRequests > 0 && r.listTotal != r.o.apps {
		r.failures = append(r.failures, fmt.Sprintf("the list counts %d apps, want %d", r.listTotal, r.o.apps))
	}
	return nil
}

// scaleEvents is the subscription of the push measurement.
const scaleEvents = `subscription ScaleEvents {
  applicationEvents(filter: {types: [SyncStatusChanged]}) { lagged name syncStatus revision }
}`

type scaleEvent struct {
	ApplicationEvents struct {
		Lagged     bool    `json:"lagged"`
		Name       *string `json:"name"`
		SyncStatus *string `json:"syncStatus"`
		Revision   *string `json:"revision"`
	} `json:"applicationEvents"`
}

// measurePush changes every app's ConfigMap in one commit, pushes it,
// tells an API replica by its webhook and times each app's OutOfSync
// event at the new revision, then waits until all synced it.
func (r *scaleResult) measurePush(ctx context.Context, mgmt *localcluster.Cluster, in *roles.Installation, c *client.Client, repoURL string, n int) (pushFigures, error) {
	sub, err := client.Subscribe[scaleEvent](ctx, c, &graphql.Request{OpName: "ScaleEvents", Query: scaleEvents})
	if err != nil {
		return pushFigures{}, err
	}
	defer sub.Close()
	sha, _, err := soakPush(r.o.dir, n, r.o.apps, r.o.apps)
	if err != nil {
		return pushFigures{}, err
	}
	server := strings.TrimPrefix(in.ServerURLs[n%len(in.ServerURLs)], "http://")
	t0 := time.Now()
	if err := postPush(ctx, server, repoURL, sha); err != nil {
		return pushFigures{}, err
	}
	seen := map[string]time.Duration{}
	wait := time.Minute + time.Duration(r.o.apps)*10*time.Millisecond
	timeout := time.AfterFunc(wait, sub.Close)
	defer timeout.Stop()
	lagged := false
	for len(seen) < r.o.apps {
		ev, err := sub.Next()
		if err != nil {
			break // the timeout: the apps not seen are missing
		}
		e := ev.ApplicationEvents
		switch {
		case e.Lagged:
			lagged = true
		case e.Name != nil && deref(e.SyncStatus) == "OutOfSync" && deref(e.Revision) == sha:
			if _, ok := seen[*e.Name]; !ok {
				seen[*e.Name] = time.Since(t0)
			}
		}
	}
	f := pushFigures{missing: r.o.apps - len(seen)}
	for _, d := range seen {
		f.latencies = append(f.latencies, d)
	}
	slices.Sort(f.latencies)
	if f.missing > 0 {
		r.failures = append(r.failures, fmt.Sprintf("push %d: %d of %d apps' OutOfSync events did not arrive within %v of the webhook (lagged: %v)", n, f.missing, r.o.apps, wait, lagged))
	}
	if err := waitRevision(ctx, mgmt, r.o.namespace, r.o.apps, sha); err != nil {
		return f, err
	}
	f.synced = time.Since(t0)
	r.o.log.Info("push measured", "push", n, "p50", percentile(f.latencies, 50), "p99", percentile(f.latencies, 99), "all synced", f.synced.Round(time.Millisecond))
	return f, nil
}

// apiRequests counts the kube-apiserver requests of each cluster
// (apiserver_request_total) by "verb resource[/subresource]", the
// management cluster's (the first) apart from the destinations' under a
// "dest: " prefix.
func apiRequests(ctx context.Context, clusters []*localcluster.Cluster) (map[string]float64, error) {
	out := map[string]float64{}
	for i, c := range clusters {
		b, err := c.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			return nil, fmt.Errorf("kube-apiserver metrics: %w", err)
		}
		prefix := ""
		if i > 0 {
			prefix = "dest: "
		}
		if err := countRequests(string(b), prefix, out); err != nil {
			return nil, fmt.Errorf("kube-apiserver metrics: %w", err)
		}
	}
	return out, nil
}

// countRequests adds text's apiserver_request_total series to out by
// prefix, verb, resource and subresource.
func countRequests(text, prefix string, out map[string]float64) error {
	const name = "apiserver_request_total{"
	for line := range strings.Lines(text) {
		if !strings.HasPrefix(line, name) {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		if end < 0 {
			return fmt.Errorf("%q: no end of labels", line)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			return fmt.Errorf("%q: %w", line, err)
		}
		labels := map[string]string{}
		for pair := range strings.SplitSeq(line[len(name):end], ",") {
			if k, val, ok := strings.Cut(pair, "="); ok {
				labels[k] = strings.Trim(val, `"`)
			}
		}
		key := prefix + labels["verb"] + " " + labels["resource"]
		if sub := labels["subresource"]; sub != "" {
			key += "/" + sub
		}
		out[key] += v
	}
	return nil
}

// topRequests is the n largest counts of after less before, per app,
// largest first, and the sum of all.
func topRequests(before, after map[string]float64, apps, n int) (top []requestCount, total float64) {
	for k, v := range after {
		d := (v - before[k]) / float64(apps)
		total += d
		if d > 0 {
			top = append(top, requestCount{what: k, perApp: d})
		}
	}
	slices.SortFunc(top, func(a, b requestCount) int { return cmp.Compare(b.perApp, a.perApp) })
	return top[:min(n, len(top))], total
}

// requestCount is the kube-apiserver requests of one kind, per app.
type requestCount struct {
	what   string
	perApp float64
}

// clustersCPU sums clusterCPU over the clusters.
func clustersCPU(clusters []*localcluster.Cluster) (float64, error) {
	var sum float64
	for _, c := range clusters {
		s, err := clusterCPU(c)
		if err != nil {
			return 0, err
		}
		sum += s
	}
	return sum, nil
}

// leaseWrites is the management kube-apiserver's latency histogram of Lease
// writes (PUT and POST of leases: the shards' renewals and acquisitions)
// over a run.
type leaseWrites struct {
	count float64
	// buckets are the cumulative counts by upper bound in seconds,
	// ascending.
	buckets []bucket
}

type bucket struct{ le, count float64 }

// quantile is the upper bound of the bucket that holds quantile q (0-1).
func (l leaseWrites) quantile(q float64) float64 {
	for _, b := range l.buckets {
		if b.count >= q*l.count {
			return b.le
		}
	}
	return math.Inf(1)
}

// over is how many writes took longer than the bucket bound le.
func (l leaseWrites) over(le float64) float64 {
	for _, b := range l.buckets {
		if b.le == le {
			return l.count - b.count
		}
	}
	return 0
}

// leaseLatency reads leaseWrites from the text of a kube-apiserver's
// /metrics (apiserver_request_duration_seconds, summed over its other
// labels).
func leaseLatency(text string) (leaseWrites, error) {
	const name = "apiserver_request_duration_seconds_bucket{"
	byLE := map[float64]float64{}
	for line := range strings.Lines(text) {
		if !strings.HasPrefix(line, name) || !strings.Contains(line, `resource="leases"`) ||
			(!strings.Contains(line, `verb="PUT"`) && !strings.Contains(line, `verb="POST"`)) {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		if end < 0 {
			return leaseWrites{}, fmt.Errorf("%q: no end of labels", line)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			return leaseWrites{}, fmt.Errorf("%q: %w", line, err)
		}
		_, rest, ok := strings.Cut(line[:end], `le="`)
		if !ok {
			return leaseWrites{}, fmt.Errorf("%q: no le label", line)
		}
		bound, _, _ := strings.Cut(rest, `"`)
		le, err := strconv.ParseFloat(bound, 64) // "+Inf" parses too
		if err != nil {
			return leaseWrites{}, fmt.Errorf("%q: %w", line, err)
		}
		byLE[le] += v
	}
	var l leaseWrites
	for _, le := range slices.Sorted(maps.Keys(byLE)) {
		l.buckets = append(l.buckets, bucket{le, byLE[le]})
	}
	if n := len(l.buckets); n > 0 {
		l.count = l.buckets[n-1].count // +Inf
	}
	return l, nil
}

// measureLeases records the management API server's Lease writes so far.
func (r *scaleResult) measureLeases(ctx context.Context, mgmt *localcluster.Cluster) error {
	b, err := mgmt.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("kube-apiserver metrics: %w", err)
	}
	r.leases, err = leaseLatency(string(b))
	return err
}
