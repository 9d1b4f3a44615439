//go:build integration

package resolvers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// benchApps is how many Applications BenchmarkApplicationsPage10k serves.
const benchApps = 10_000

// benchNamespace holds the benchmark's apps. It is created once per test
// binary and shared by the -count runs, which measure the same data.
const benchNamespace = "bench-applications-10k"

// consoleQuery asks for what an application list in a console shows: the
// app's identity and labels, where it comes from and goes to, and its sync,
// health, last operation, images and deployments. It costs about 22,500 of
// the 50,000 complexity allowed for a 500-app page.
const consoleQuery = `query Apps($first: Int!, $after: String, $filter: ApplicationFilter, $order: ApplicationOrder) {
  applications(first: $first, after: $after, filter: $filter, orderBy: $order) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges {
      cursor
      node {
        id name namespace project createdAt
        labels { key value }
        spec {
          source { repoURL path targetRevision chart }
          destination { server name namespace }
          syncPolicy { automated { prune selfHeal } }
        }
        status {
          sync { status revision }
          health { status message }
          operationState { phase message startedAt finishedAt }
          summary { images externalURLs }
          history { id revision deployedAt }
          reconciledAt
        }
      }
    }
  }
}`

// Shapes of the generated apps. The moduli of component (8), env (3) and
// health (5) are coprime, so filters on them select independent fractions.
var (
	benchComponents = []string{"shop-api", "shop-web", "shop-worker", "pay-api", "pay-web", "pay-worker", "auth-api", "auth-web"}
	benchEnvs       = []string{"prod", "staging", "dev"}
	benchHealth     = []v1alpha1.HealthStatusCode{
		v1alpha1.HealthStatusHealthy, v1alpha1.HealthStatusHealthy, v1alpha1.HealthStatusHealthy,
		v1alpha1.HealthStatusDegraded, v1alpha1.HealthStatusProgressing,
	}
)

// benchFixture is created once per test binary; later -count runs reuse it.
var benchFixture struct {
	once sync.Once
	err  error
}

// BenchmarkApplicationsPage10k measures what issue 7 targets: the server
// time to return a 500-app page with status fields out of 10,000
// Applications in the cluster, through real HTTP POSTs of a console query.
// Each sub-benchmark reports the p50 and p99 of the per-request latency
// (request written to response body read), the process's CPU time and
// allocations per request, and the response size.
//
// Only `go test -bench` runs it; the 10,000 apps are created by the first
// run and shared by the next (-count).
func BenchmarkApplicationsPage10k(b *testing.B) {
	benchFixture.once.Do(func() { benchFixture.err = setUpBenchApps(b) })
	if benchFixture.err != nil {
		b.Fatal(benchFixture.err)
	}
	inNS := map[string]any{"namespaces": []string{benchNamespace}}
	byHealth := map[string]any{"field": "HEALTH"}
	middle := benchCursorAt(b, benchApps/2, inNS, byHealth)
	filtered := map[string]any{
		"namespaces":    []string{benchNamespace},
		"health":        []string{"Degraded"},
		"labelSelector": "env in (prod,staging),team notin (team-00)",
		"search":        "api",
	}

	b.Run("first-by-name", func(b *testing.B) {
		benchPages(b, consoleQuery, map[string]any{"first": 500, "filter": inNS}, 500)
	})
	// The same page with names only: what the index, the transport and
	// one field per app cost, against which the console query's fields
	// can be read.
	b.Run("first-by-name-names-only", func(b *testing.B) {
		benchPages(b, namesQuery, map[string]any{"first": 500, "filter": inNS}, 500)
	})
	b.Run("middle-by-health", func(b *testing.B) {
		benchPages(b, consoleQuery, map[string]any{"first": 500, "after": middle, "filter": inNS, "order": byHealth}, 500)
	})
	b.Run("filtered", func(b *testing.B) {
		// Degraded (1/5), prod or staging (2/3), an *-api component
		// (3/8): 493 apps, on one page. No Degraded app is in team-00
		// (team and health both follow i mod 5), so the notin only adds
		// a set-based requirement to evaluate.
		benchPages(b, consoleQuery, map[string]any{"first": 500, "filter": filtered}, benchFilteredCount())
	})
}

// namesQuery asks for the names of a page of apps only.
const namesQuery = `query Names($first: Int!, $filter: ApplicationFilter) {
  applications(first: $first, filter: $filter) { totalCount pageInfo { hasNextPage endCursor } edges { node { name } } }
}`

// benchPages posts query with vars b.N times and reports the latency
// percentiles and response size. Every response must be a page of want
// apps without errors.
func benchPages(b *testing.B, query string, vars map[string]any, want int) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		b.Fatal(err)
	}
	httpClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer httpClient.CloseIdleConnections()
	var buf bytes.Buffer
	// A first request outside the measurement checks the page and opens
	// the connection the measured ones reuse.
	if err := benchPost(b.Context(), httpClient, body, &buf); err != nil {
		b.Fatal(err)
	}
	if err := checkPage(buf.Bytes(), want, query == consoleQuery); err != nil {
		b.Fatal(err)
	}
	size := buf.Len()

	durations := make([]time.Duration, 0, b.N)
	// Allocations count the whole process, so the server's (the client
	// reuses its buffer and allocates little).
	b.ReportAllocs()
	cpuBefore := processCPU(b)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		err := benchPost(b.Context(), httpClient, body, &buf)
		durations = append(durations, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		if buf.Len() != size {
			b.Fatalf("response of %d bytes, the first was %d", buf.Len(), size)
		}
	}
	b.StopTimer()
	cpu := processCPU(b) - cpuBefore
	slices.Sort(durations)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(percentile(durations, 50)), "p50-ms")
	b.ReportMetric(ms(percentile(durations, 99)), "p99-ms")
	b.ReportMetric(float64(size), "resp-bytes")
	// CPU time of the whole process (server, client, an idle informer)
	// per request: less sensitive than latency to other work on a shared
	// machine.
	b.ReportMetric(ms(cpu)/float64(b.N), "cpu-ms/op")
}

// processCPU returns the user and system CPU time the process used so far.
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// benchPost posts a GraphQL request body and reads the response into buf.
func benchPost(ctx context.Context, c *http.Client, body []byte, buf *bytes.Buffer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, apiURL+"/api/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	buf.Reset()
	if _, err := io.Copy(buf, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %.500s", resp.StatusCode, buf.Bytes())
	}
	return nil
}

// checkPage checks that raw is an error-free page of want apps, each with
// the fields the console query asks for filled in when console is set.
func checkPage(raw []byte, want int, console bool) error {
	var out struct {
		Data struct {
			Applications struct {
				TotalCount int
				Edges      []struct {
					Node struct {
						Name   string
						Spec   struct{ Source struct{ RepoURL string } }
						Status struct {
							Health         struct{ Status string }
							OperationState *struct{ Phase string }
							Summary        struct{ Images []string }
							History        []struct{ ID int }
						}
					}
				}
			}
		}
		Errors []json.RawMessage
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("response is not JSON: %w", err)
	}
	if len(out.Errors) > 0 {
		return fmt.Errorf("query failed: %s", out.Errors[0])
	}
	edges := out.Data.Applications.Edges
	if len(edges) != want {
		return fmt.Errorf("page of %d apps (total %d), want %d", len(edges), out.Data.Applications.TotalCount, want)
	}
	for _, e := range edges {
		n := e.Node
		if n.Name == "" {
			return errors.New("an app without a name")
		}
		if console && (n.Spec.Source.RepoURL == "" || n.Status.Health.Status == "" || n.Status.OperationState == nil || len(n.Status.Summary.Images) == 0 || len(n.Status.History) == 0) {
			return fmt.Errorf("app %s lacks fields: %+v", n.Name, n)
		}
	}
	return nil
}

// percentile returns the p-th percentile (nearest rank) of sorted.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	return sorted[max(rank, 1)-1]
}

// benchCursorAt returns the cursor of the n-th app (1-based) of the list
// filter and order select, paging with first: 500.
func benchCursorAt(b *testing.B, n int, filter, order map[string]any) string {
	b.Helper()
	const q = `query($first: Int!, $after: String, $filter: ApplicationFilter, $order: ApplicationOrder) {
  applications(first: $first, after: $after, filter: $filter, orderBy: $order) { edges { cursor } }
}`
	var cursor any
	for seen := 0; seen < n; {
		var page struct {
			Applications struct{ Edges []struct{ Cursor string } }
		}
		benchData(b, q, map[string]any{"first": min(500, n-seen), "after": cursor, "filter": filter, "order": order}, &page)
		edges := page.Applications.Edges
		if len(edges) == 0 {
			b.Fatalf("the list ends after %d apps, want %d", seen, n)
		}
		seen += len(edges)
		cursor = edges[len(edges)-1].Cursor
	}
	return cursor.(string)
}

// benchData runs a query that must succeed and decodes its data into out
// (main_integration_test.go's data takes a *testing.T).
func benchData(b *testing.B, q string, vars map[string]any, out any) {
	b.Helper()
	body, err := json.Marshal(map[string]any{"query": q, "variables": vars})
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := benchPost(b.Context(), http.DefaultClient, body, &buf); err != nil {
		b.Fatal(err)
	}
	var resp response
	if err := json.Unmarshal(buf.Bytes(), &resp); err != nil {
		b.Fatalf("response is not JSON: %v", err)
	}
	if len(resp.Errors) > 0 {
		b.Fatalf("query failed: %+v", resp.Errors)
	}
	if err := json.Unmarshal(resp.Data, out); err != nil {
		b.Fatalf("decode data: %v", err)
	}
}

// benchFilteredCount counts the generated apps the "filtered" page selects,
// from the generator's own rules rather than from the API.
func benchFilteredCount() int {
	n := 0
	for i := range benchApps {
		l := benchLabels(i)
		if benchHealthOf(i) == v1alpha1.HealthStatusDegraded && l["env"] != "dev" && l["team"] != "team-00" && strings.Contains(benchName(i), "api") {
			n++
		}
	}
	return min(n, 500)
}

// setUpBenchApps creates the benchmark's apps with their status, waits
// until the API lists all of them and logs how long that took and the heap
// the server process gained per app.
func setUpBenchApps(b *testing.B) error {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNamespace}}
	if _, err := cluster.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace: %w", err)
	}
	// No cleanup: the namespace dies with the package's cluster, and the
	// minimal cluster has no namespace controller to empty it anyway.

	cfg := rest.CopyConfig(cluster.Config)
	cfg.QPS, cfg.Burst = 5000, 10000
	scheme := kruntime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}

	heapBefore := heapInUse()
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4 * runtime.GOMAXPROCS(0))
	for i := range benchApps {
		g.Go(func() error { return createBenchApp(gctx, c, i) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	created := time.Since(start)

	count := func() (int, error) {
		body, err := json.Marshal(map[string]any{
			"query":     `query($ns: [String!]) { applications(first: 0, filter: {namespaces: $ns}) { totalCount } }`,
			"variables": map[string]any{"ns": []string{benchNamespace}},
		})
		if err != nil {
			return 0, err
		}
		var buf bytes.Buffer
		if err := benchPost(ctx, http.DefaultClient, body, &buf); err != nil {
			return 0, err
		}
		var out struct {
			Data struct {
				Applications struct{ TotalCount int }
			}
		}
		err = json.Unmarshal(buf.Bytes(), &out)
		return out.Data.Applications.TotalCount, err
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		n, err := count()
		if err != nil {
			return fmt.Errorf("count apps: %w", err)
		}
		if n == benchApps {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the API lists %d apps, want %d", n, benchApps)
		}
		time.Sleep(100 * time.Millisecond)
	}
	listed := time.Since(start)
	heapAfter := heapInUse()
	b.Logf("%d apps created with status in %v (%.0f apps/s), all listed by the API after %v; heap in use grew by %.1f KiB per app (informer cache + index, whole process)",
		benchApps, created.Round(time.Millisecond), benchApps/created.Seconds(), listed.Round(time.Millisecond),
		float64(int64(heapAfter)-int64(heapBefore))/benchApps/1024)
	return nil
}

// heapInUse returns the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// benchLabels returns the labels of app number i.
func benchLabels(i int) map[string]string {
	comp := benchComponents[i%len(benchComponents)]
	return map[string]string{
		"team":                      fmt.Sprintf("team-%02d", i%25),
		"env":                       benchEnvs[i%len(benchEnvs)],
		"app.kubernetes.io/part-of": comp[:strings.IndexByte(comp, '-')],
	}
}

func benchName(i int) string {
	return fmt.Sprintf("%s-%05d", benchComponents[i%len(benchComponents)], i)
}

func benchHealthOf(i int) v1alpha1.HealthStatusCode {
	if i%97 == 0 {
		return v1alpha1.HealthStatusMissing
	}
	return benchHealth[i%len(benchHealth)]
}

// createBenchApp creates app number i, then writes its status through the
// status subresource as the controller would.
func createBenchApp(ctx context.Context, c client.Client, i int) error {
	app := benchApp(i)
	status := app.Status
	if err := c.Create(ctx, app); err != nil {
		return fmt.Errorf("create %s: %w", app.Name, err)
	}
	app.Status = status
	if err := c.Status().Update(ctx, app); err != nil {
		return fmt.Errorf("status of %s: %w", app.Name, err)
	}
	return nil
}

// benchApp returns app number i with a spec and a status roughly the size
// of a real kustomize app's: five resources, five deployments in the
// history, and the last sync's per-resource results.
func benchApp(i int) *v1alpha1.Application {
	comp := benchComponents[i%len(benchComponents)]
	env := benchEnvs[i%len(benchEnvs)]
	team := fmt.Sprintf("team-%02d", i%25)
	name := benchName(i)
	destNS := fmt.Sprintf("%s-%s", comp, env)
	health := benchHealthOf(i)
	syncCode := v1alpha1.SyncStatusCodeSynced
	if health == v1alpha1.HealthStatusDegraded || i%11 == 0 {
		syncCode = v1alpha1.SyncStatusCodeOutOfSync
	}
	rev := func(n int) string { return fmt.Sprintf("%08x%032x", i, n) }
	at := func(minutesAgo int) metav1.Time {
		return metav1.NewTime(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC).Add(-time.Duration(minutesAgo+i%60) * time.Minute))
	}
	source := v1alpha1.ApplicationSource{
		RepoURL:        fmt.Sprintf("https://git.example.com/%s/%s.git", team, comp),
		Path:           "deploy/overlays/" + env,
		TargetRevision: "main",
	}
	if env == "prod" {
		source.TargetRevision = fmt.Sprintf("v1.%d.%d", i%17, i%5)
	}
	dest := v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: destNS}
	healthMsg := ""
	if health == v1alpha1.HealthStatusDegraded {
		healthMsg = fmt.Sprintf("Deployment %q has timed out progressing.", name)
	}

	type res struct{ group, version, kind, name string }
	resources := []res{
		{"", "v1", "ConfigMap", name + "-config"},
		{"", "v1", "Service", name},
		{"", "v1", "ServiceAccount", name},
		{"apps", "v1", "Deployment", name},
		{"networking.k8s.io", "v1", "Ingress", name},
	}
	var statuses []v1alpha1.ResourceStatus
	var results []v1alpha1.ResourceResult
	for _, r := range resources {
		s := v1alpha1.ResourceStatus{Group: r.group, Version: r.version, Kind: r.kind, Namespace: destNS, Name: r.name, Status: v1alpha1.SyncStatusCodeSynced}
		switch r.kind {
		case "Deployment":
			s.Health = &v1alpha1.HealthStatus{Status: health, Message: healthMsg}
			s.Status = syncCode
		case "Service", "Ingress":
			s.Health = &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusHealthy}
		}
		statuses = append(statuses, s)
		results = append(results, v1alpha1.ResourceResult{
			Group: r.group, Version: r.version, Kind: r.kind, Namespace: destNS, Name: r.name,
			Status: v1alpha1.ResultCodeSynced, Message: fmt.Sprintf("%s/%s configured", strings.ToLower(r.kind), r.name),
			SyncPhase: v1alpha1.SyncPhaseSync,
		})
	}
	var history []v1alpha1.RevisionHistory
	for n := 1; n <= 5; n++ {
		started := at((6 - n) * 120)
		history = append(history, v1alpha1.RevisionHistory{
			ID: int64(n), Revision: rev(n), DeployedAt: at((6-n)*120 - 1), DeployStartedAt: &started,
			Source: source, InitiatedBy: v1alpha1.OperationInitiator{Automated: true},
		})
	}
	reconciled, finished, started, transition := at(0), at(119), at(120), at(119)
	phase := v1alpha1.OperationSucceeded
	opMsg := "successfully synced (all tasks run)"
	if health == v1alpha1.HealthStatusDegraded {
		phase, opMsg = v1alpha1.OperationFailed, "one or more synchronization tasks completed unsuccessfully"
	}
	limit := int64(10)

	return &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: benchNamespace,
			Name:      name,
			Labels:    benchLabels(i),
			Annotations: map[string]string{
				"notifications.argoproj.io/subscribe.on-sync-failed.slack": team + "-alerts",
			},
		},
		Spec: v1alpha1.ApplicationSpec{
			Project:     team,
			Source:      &source,
			Destination: dest,
			SyncPolicy: &v1alpha1.SyncPolicy{
				Automated:   &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true},
				SyncOptions: []string{"CreateNamespace=true", "ServerSideApply=true"},
				Retry:       &v1alpha1.RetryStrategy{Limit: 5, Backoff: &v1alpha1.Backoff{Duration: "5s", MaxDuration: "3m"}},
			},
			RevisionHistoryLimit: &limit,
		},
		Status: v1alpha1.ApplicationStatus{
			Resources: statuses,
			Sync: v1alpha1.SyncStatus{
				Status:     syncCode,
				Revision:   rev(5),
				ComparedTo: v1alpha1.ComparedTo{Source: source, Destination: dest},
			},
			Health:  v1alpha1.HealthStatus{Status: health, Message: healthMsg, LastTransitionTime: &transition},
			History: history,
			OperationState: &v1alpha1.OperationState{
				Operation: v1alpha1.Operation{
					Sync:        &v1alpha1.SyncOperation{Revision: rev(5), Prune: true, SyncOptions: []string{"CreateNamespace=true", "ServerSideApply=true"}},
					InitiatedBy: v1alpha1.OperationInitiator{Automated: true},
					Retry:       v1alpha1.RetryStrategy{Limit: 5},
				},
				Phase:      phase,
				Message:    opMsg,
				SyncResult: &v1alpha1.SyncOperationResult{Resources: results, Revision: rev(5), Source: source},
				StartedAt:  started,
				FinishedAt: &finished,
			},
			ReconciledAt: &reconciled,
			ObservedAt:   &reconciled,
			SourceType:   "Kustomize",
			Summary: v1alpha1.ApplicationSummary{
				Images:       []string{fmt.Sprintf("registry.example.com/%s/%s:v1.%d.%d", team, comp, i%17, i%5), "registry.example.com/base/envoy:v1.31.2"},
				ExternalURLs: []string{fmt.Sprintf("https://%s.%s.example.com", comp, env)},
			},
		},
	}
}
