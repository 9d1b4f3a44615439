//go:build integration

package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cgi" //nolint:gosec // G504: Go 1.26 is not affected; serves git http-backend on loopback
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appindex"
	"github.com/graphcd/graphcd/apiserver/appops"
	"github.com/graphcd/graphcd/auth/accounts"
	graphcdclient "github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/internal/testenv/graphcdbin"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// BenchmarkWebhookToOutOfSync measures, with GRAPHCD_WEBHOOK_APPS
// Applications (default 1,000) sharing one monorepo served over smart
// HTTP, the time from a GitHub push delivery to POST /api/webhook of the
// real `graphcd server` (API and controller) until a subscriber of
// applicationEvents sees each app's SyncStatusChanged to OutOfSync.
// Every app deploys apps/app-NNNN, one ConfigMap, with automated sync;
// each iteration commits a change to every ConfigMap, pushes, posts the
// delivery, collects the events, then waits (timer stopped) until the
// apps are synced again. With GRAPHCD_WEBHOOK_AUTOSYNC=off, automated
// sync is turned off for the measurement (on only to sync between
// iterations), so that no sync competes with the comparisons. It reports p50, p99 and max in ms over all
// iterations' apps, the first event, how many of the apps' events
// arrived, and how long the webhook took to answer (it answers once it
// has set the refresh annotation of every app it matched).
func BenchmarkWebhookToOutOfSync(b *testing.B) {
	n := 1000
	if v := os.Getenv("GRAPHCD_WEBHOOK_APPS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("GRAPHCD_WEBHOOK_APPS=%q: want a positive count", v)
		}
	}
	autoSync := os.Getenv("GRAPHCD_WEBHOOK_AUTOSYNC") != "off"
	repo := newMonorepo(b, n)
	srv := startGraphcdServer(b)
	dest := cluster.Namespace(b)
	createBenchApps(b, srv.ns, dest, repo.url, n)
	api := srv.login(b)
	setup := time.Now()
	waitSynced(b, srv.ns, repo.head, n)
	b.Logf("%d apps synced %s after creation", n, time.Since(setup).Round(time.Second))
	if !autoSync {
		setAutoSync(b, srv.ns, n, false)
	}

	var all []time.Duration
	var posting time.Duration
	arrived, expected := 0, 0
	value := 0
	for b.Loop() {
		value++
		events := subscribeSyncEvents(b, api)
		repo.commitAll(b, n, value)
		t0 := time.Now()
		if code := postPush(b, srv.base+"/api/webhook", repo, n); code != http.StatusOK {
			b.Fatalf("webhook: status %d, want 200", code)
		}
		posting += time.Since(t0)
		got := events.collect(b, n, t0)
		events.stop()
		b.StopTimer()
		slices.Sort(got)
		b.Logf("push %d: %d of %d apps, p50 %v, p99 %v, max %v", value, len(got), n,
			percentile(got, 0.50).Round(time.Millisecond), percentile(got, 0.99).Round(time.Millisecond), percentile(got, 1).Round(time.Millisecond))
		arrived += len(got)
		expected += n
		all = append(all, got...)
		if !autoSync {
			// The controller announces a comparison before its status
			// write lands: how far the stored statuses trail the events.
			b.Logf("push %d: all statuses OutOfSync in the API %v after the webhook",
				value, waitOutOfSync(b, srv.ns, n, t0).Round(100*time.Millisecond))
			setAutoSync(b, srv.ns, n, true)
		}
		waitSynced(b, srv.ns, repo.head, n)
		if !autoSync {
			setAutoSync(b, srv.ns, n, false)
		}
		b.StartTimer()
	}
	slices.Sort(all)
	b.ReportMetric(ms(posting)/float64(b.N), "ms-webhook-response")
	b.ReportMetric(ms(percentile(all, 0)), "ms-first")
	b.ReportMetric(ms(percentile(all, 0.50)), "ms-p50")
	b.ReportMetric(ms(percentile(all, 0.99)), "ms-p99")
	b.ReportMetric(ms(percentile(all, 1)), "ms-max")
	b.ReportMetric(float64(arrived)/float64(max(expected, 1)), "arrived-fraction")
	b.ReportMetric(float64(n), "apps")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile returns the q-quantile (nearest rank) of sorted, zero when
// it is empty.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted)) + 0.5)
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}

// monorepo is a working copy with one directory per app, pushed to a
// bare repository served by git http-backend.
type monorepo struct {
	dir, bare, url, head string
}

// appConfigMap is app i's only manifest, holding value.
func appConfigMap(i, value int) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-%04d\ndata:\n  value: %q\n", i, strconv.Itoa(value))
}

func appPath(i int) string { return fmt.Sprintf("apps/app-%04d", i) }

func newMonorepo(b testing.TB, n int) *monorepo {
	b.Helper()
	files := make(map[string]string, n)
	for i := range n {
		files[appPath(i)+"/configmap.yaml"] = appConfigMap(i, 0)
	}
	dir, sha := reposervertest.CommitFiles(b, files)
	gitBin, err := exec.LookPath("git")
	if err != nil {
		b.Fatal(err)
	}
	root := b.TempDir()
	r := &monorepo{dir: dir, bare: filepath.Join(root, "apps.git"), head: sha}
	r.git(b, "clone", "-q", "--bare", dir, r.bare)
	s := httptest.NewServer(&cgi.Handler{Path: gitBin, Args: []string{"http-backend"}, Env: []string{
		"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull,
	}})
	b.Cleanup(s.Close)
	r.url = s.URL + "/apps.git"
	return r
}

// commitAll sets every app's ConfigMap to value, commits and pushes to
// the served repository.
func (r *monorepo) commitAll(b testing.TB, n, value int) {
	b.Helper()
	files := make(map[string]string, n)
	for i := range n {
		files[appPath(i)+"/configmap.yaml"] = appConfigMap(i, value)
	}
	r.head = reposervertest.CommitMore(b, r.dir, files)
	r.git(b, "push", "-q", r.bare, "HEAD:main")
}

func (r *monorepo) git(b testing.TB, args ...string) {
	b.Helper()
	cmd := exec.CommandContext(b.Context(), "git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// postPush delivers a GitHub push of r's head to main, listing every
// app's file as modified, without a signature (no secret configured).
func postPush(b testing.TB, url string, r *monorepo, n int) int {
	b.Helper()
	modified := make([]string, n)
	for i := range n {
		modified[i] = appPath(i) + "/configmap.yaml"
	}
	payload := map[string]any{
		"ref":   "refs/heads/main",
		"after": r.head,
		"commits": []map[string]any{{
			"id": r.head, "distinct": true, "message": "change every app",
			"added": []string{}, "removed": []string{}, "modified": modified,
		}},
		"repository": map[string]any{
			"name": "apps", "full_name": "team/apps", "html_url": r.url, "url": r.url,
			"clone_url": r.url, "default_branch": "main",
		},
	}
	body, err := json.Marshal(payload)
	if err != nil {
		b.Fatal(err)
	}
	req, err := http.NewRequestWithContext(b.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-GitHub-Delivery", strconv.FormatInt(time.Now().UnixNano(), 10))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}

// benchServer is a `graphcd server` with its controller, in a namespace
// of its own.
type benchServer struct {
	base, ns string
	logs     *lockedBuffer
}

func startGraphcdServer(b testing.TB) *benchServer {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "graphcd")
	if err := graphcdbin.Build(b.Context(), bin); err != nil {
		b.Fatal(err)
	}
	ns := cluster.Namespace(b)
	port, err := localcluster.FreePort()
	if err != nil {
		b.Fatal(err)
	}
	logs := &lockedBuffer{}
	s := &benchServer{base: "http://127.0.0.1:" + strconv.Itoa(port), ns: ns, logs: logs}
	args := []string{"server", "--insecure", "--kubeconfig", cluster.Kubeconfig, "--namespace", ns, "--listen", "127.0.0.1:" + strconv.Itoa(port), "--log-format", "text"}
	if p := os.Getenv("GRAPHCD_WEBHOOK_PROCESSORS"); p != "" {
		args = append(args, "--status-processors", p)
	}
	cmd := exec.CommandContext(context.WithoutCancel(b.Context()), bin, args...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "GRAPHCD_") || strings.HasPrefix(kv, "KUBECONFIG=") || strings.HasPrefix(kv, "KUBERNETES_SERVICE_HOST=")
	})
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if b.Failed() {
			b.Logf("graphcd server log (tail):\n%s", logs.tail(8000))
		}
	})
	for {
		resp, err := http.Get(s.base + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-b.Context().Done():
			b.Fatalf("graphcd server never ready: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// login logs in as admin with the initial password and returns a client.
func (s *benchServer) login(b testing.TB) *graphcdclient.Client {
	b.Helper()
	var secret *corev1.Secret
	for {
		var err error
		secret, err = cluster.Client.CoreV1().Secrets(s.ns).Get(b.Context(), "graphcd-initial-admin-secret", metav1.GetOptions{})
		if err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The initial password's Secret appears before its hash is written
	// to graphcd-secret and before the server's accounts watch holds it:
	// wait for the hash, and allow the watch a retry or two (each failure
	// counts against the login limit of 5 per account and client).
	for {
		sec, err := cluster.Client.CoreV1().Secrets(s.ns).Get(b.Context(), accounts.SecretName, metav1.GetOptions{})
		if err == nil && len(sec.Data["admin.password"]) > 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for attempt := 1; ; attempt++ {
		session, err := graphcdclient.New(s.base, "").Login(b.Context(), "admin", string(secret.Data["password"]))
		if err == nil {
			return graphcdclient.New(s.base, session.Token)
		}
		if attempt == 3 {
			b.Fatal(err)
		}
		time.Sleep(time.Second)
	}
}

// setAutoSync turns automated sync of the n apps of ns on or off, eight
// apps at a time.
func setAutoSync(b testing.TB, ns string, n int, on bool) {
	b.Helper()
	policy := `{"spec":{"syncPolicy":null}}`
	if on {
		policy = `{"spec":{"syncPolicy":{"automated":{}}}}`
	}
	forEachApp(b, n, func(i int) error {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%04d", i), Namespace: ns}}
		return kube.Patch(context.Background(), app, client.RawPatch(types.MergePatchType, []byte(policy)))
	})
}

// forEachApp calls do for 0 ... n-1, eight at a time, and fails b on
// the first error.
func forEachApp(b testing.TB, n int, do func(i int) error) {
	b.Helper()
	next := make(chan int)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := do(i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

// createBenchApps creates n auto-synced apps in ns, app-NNNN deploying
// apps/app-NNNN of repo to dest, eight at a time.
func createBenchApps(b testing.TB, ns, dest, repo string, n int) {
	b.Helper()
	forEachApp(b, n, func(i int) error {
		return kube.Create(context.Background(), &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%04d", i), Namespace: ns},
			Spec: v1alpha1.ApplicationSpec{
				Project:     "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: repo, Path: appPath(i), TargetRevision: "main"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: dest},
				SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
			},
		})
	})
}

// waitSynced polls until all n apps of ns are Synced at revision.
func waitSynced(b testing.TB, ns, revision string, n int) {
	b.Helper()
	waitApps(b, ns, n, time.Second, "synced at "+revision, func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeSynced && s.Sync.Revision == revision
	})
}

// waitOutOfSync waits until the n apps of ns are OutOfSync in the API and
// returns how long after t0 that was (to within the polling interval).
func waitOutOfSync(b testing.TB, ns string, n int, t0 time.Time) time.Duration {
	b.Helper()
	waitApps(b, ns, n, 250*time.Millisecond, "OutOfSync", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})
	return time.Since(t0)
}

// waitApps lists the apps of ns every interval until n of them have a
// status for which ok is true; what names that state in the failure.
func waitApps(b testing.TB, ns string, n int, interval time.Duration, what string, ok func(*v1alpha1.ApplicationStatus) bool) {
	b.Helper()
	for {
		list := &v1alpha1.ApplicationList{}
		if err := kube.List(b.Context(), list, client.InNamespace(ns)); err != nil {
			b.Fatal(err)
		}
		done := 0
		for i := range list.Items {
			if ok(&list.Items[i].Status) {
				done++
			}
		}
		if done == n {
			return
		}
		select {
		case <-b.Context().Done():
			b.Fatalf("benchmark ended with %d of %d apps %s", done, n, what)
		case <-time.After(interval):
		}
	}
}

// syncEvent is the part of applicationEvents the benchmark reads.
type syncEvent struct {
	ApplicationEvents struct {
		Lagged     bool
		Name       string
		SyncStatus string
	}
}

// syncEvents receives one subscription's events with their arrival time.
type syncEvents struct {
	sub  *graphcdclient.Subscription[syncEvent]
	mu   sync.Mutex
	at   map[string]time.Time
	lags int
	done chan struct{}
}

const syncEventsQuery = `subscription { applicationEvents(filter: {types: [SyncStatusChanged]}) { lagged name syncStatus } }`

func subscribeSyncEvents(b testing.TB, api *graphcdclient.Client) *syncEvents {
	b.Helper()
	sub, err := graphcdclient.Subscribe[syncEvent](b.Context(), api, &graphql.Request{Query: syncEventsQuery})
	if err != nil {
		b.Fatal(err)
	}
	e := &syncEvents{sub: sub, at: map[string]time.Time{}, done: make(chan struct{})}
	go func() {
		defer close(e.done)
		for {
			ev, err := sub.Next()
			if err != nil {
				return
			}
			now := time.Now()
			e.mu.Lock()
			switch {
			case ev.ApplicationEvents.Lagged:
				e.lags++
			case ev.ApplicationEvents.SyncStatus == string(v1alpha1.SyncStatusCodeOutOfSync):
				if _, seen := e.at[ev.ApplicationEvents.Name]; !seen {
					e.at[ev.ApplicationEvents.Name] = now
				}
			}
			e.mu.Unlock()
		}
	}()
	return e
}

// collect waits until n apps have gone OutOfSync, or until none has for
// a minute, and returns each one's latency from t0.
func (e *syncEvents) collect(b testing.TB, n int, t0 time.Time) []time.Duration {
	b.Helper()
	last, seen := time.Now(), 0
	for {
		e.mu.Lock()
		got := len(e.at)
		e.mu.Unlock()
		if got > seen {
			last, seen = time.Now(), got
		}
		if got >= n || time.Since(last) > time.Minute {
			break
		}
		select {
		case <-b.Context().Done():
			b.Fatal("benchmark ended while collecting events")
		case <-e.done:
			b.Fatal("the subscription ended")
		case <-time.After(5 * time.Millisecond):
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lags > 0 {
		b.Logf("the subscription lagged %d times", e.lags)
	}
	out := make([]time.Duration, 0, len(e.at))
	for _, at := range e.at {
		out = append(out, at.Sub(t0))
	}
	if len(out) < n {
		b.Logf("%d of %d apps went OutOfSync", len(out), n)
	}
	return out
}

func (e *syncEvents) stop() {
	e.sub.Close()
	<-e.done
}

// lockedBuffer collects the server's output from its two streams.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *lockedBuffer) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.buf.String()
	return s[max(0, len(s)-n):]
}

// BenchmarkWebhookRefreshWrites measures the webhook's own part alone:
// the handler in process, with GRAPHCD_WEBHOOK_APPS apps (default 1,000)
// of one repository and no controller, from the POST of a push until it
// answers, having set every app's refresh annotation. It reports ms per
// delivery and apps refreshed per second. GRAPHCD_WEBHOOK_PARALLELISM
// sets Options.Parallelism (DefaultParallelism when unset).
func BenchmarkWebhookRefreshWrites(b *testing.B) {
	n := 1000
	if v := os.Getenv("GRAPHCD_WEBHOOK_APPS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("GRAPHCD_WEBHOOK_APPS=%q: want a positive count", v)
		}
	}
	ns := cluster.Namespace(b)
	repo := &monorepo{url: "https://git.example.com/team/apps.git", head: strings.Repeat("a", 40)}
	createBenchApps(b, ns, "default", repo.url, n)
	for {
		page, err := objects.Apps.Page(appindex.Query{Filter: appindex.Filter{Namespaces: []string{ns}}})
		if err != nil {
			b.Fatal(err)
		}
		if page.TotalCount >= n {
			break
		}
		select {
		case <-b.Context().Done():
			b.Fatal("benchmark ended before the index held the apps")
		case <-time.After(50 * time.Millisecond):
		}
	}
	parallelism := 0 // DefaultParallelism
	if v := os.Getenv("GRAPHCD_WEBHOOK_PARALLELISM"); v != "" {
		var err error
		if parallelism, err = strconv.Atoi(v); err != nil || parallelism < 1 {
			b.Fatalf("GRAPHCD_WEBHOOK_PARALLELISM=%q: want a positive count", v)
		}
	}
	// The client limits of graphcd server (--kube-qps 500, --kube-burst
	// 1000), not the fixtures' 200; GRAPHCD_WEBHOOK_KUBE_QPS changes the
	// rate (burst twice it, a negative rate is unlimited).
	cfg := rest.CopyConfig(cluster.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	if v := os.Getenv("GRAPHCD_WEBHOOK_KUBE_QPS"); v != "" {
		qps, err := strconv.Atoi(v)
		if err != nil {
			b.Fatalf("GRAPHCD_WEBHOOK_KUBE_QPS=%q: %v", v, err)
		}
		cfg.QPS, cfg.Burst = float32(qps), max(2*qps, 1)
	}
	writer, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	h := New(Options{Apps: objects.Apps, Refresher: appops.Service{Client: writer}, Secrets: StaticSecrets{}, Parallelism: parallelism})
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	var total time.Duration
	for b.Loop() {
		t0 := time.Now()
		if code := postPush(b, srv.URL, repo, n); code != http.StatusOK {
			b.Fatalf("webhook: status %d, want 200", code)
		}
		total += time.Since(t0)
	}
	b.ReportMetric(ms(total)/float64(b.N), "ms/delivery")
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "apps/s")
}
