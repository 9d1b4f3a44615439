package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/Khan/genqlient/graphql"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/config/crd"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// soakOptions configure a soak run (--soak): apps auto-synced
// Applications, a push every pushEvery changing a twentieth of them,
// subscribers GraphQL subscribers of their events and a login every
// loginEvery, for duration, against one `graphcd server` process.
type soakOptions struct {
	graphcd     string
	apps        int
	subscribers int
	duration    time.Duration
	// warmup is left out of the slopes and the growth.
	warmup      time.Duration
	pushEvery   time.Duration
	loginEvery  time.Duration
	sampleEvery time.Duration
	// out is where the CSV and the pictures go; none when empty.
	out    string
	log    *slog.Logger
	stderr io.Writer
}

// soakResult is what a soak run measured, and the targets it missed.
type soakResult struct {
	o       soakOptions
	samples []sample
	// baseline is the server's goroutines before the load, after is
	// the same once the load has ended and the subscribers are gone.
	baseline, after float64
	rssFit, grFit   fit // after the warm-up: MiB and goroutines per minute
	rssGrowth       float64
	grGrowth        float64
	pushes, logins  int
	loginLatency    []time.Duration
	clientErrors    map[string]int
	errorExamples   []string
	checker         *eventChecker
	missing         []string
	reconciled      time.Duration
	// failures are the correctness targets missed (errors, order,
	// duplicates, lost events, goroutines not back to their baseline);
	// figureFailures the RSS and goroutine growth ones.
	failures, figureFailures []string
}

// soakEvents is the subscription each subscriber holds: the events of its
// apps, all types.
const soakEvents = `subscription SoakEvents($names: [String!]) {
  applicationEvents(filter: {names: $names}) {
    lagged type time name syncStatus health revision operationPhase
  }
}`

type soakEventsResponse struct {
	ApplicationEvents soakEvent `json:"applicationEvents"`
}

// soakWatch returns the apps subscriber sub follows: the subscribers go
// in pairs, and each pair follows every (subscribers/2)-th app, so that
// every app has two subscribers.
func soakWatch(apps, subscribers int) func(sub int) []string {
	groups := max(1, subscribers/2)
	return func(sub int) []string {
		var names []string
		for i := sub % groups; i < apps; i += groups {
			names = append(names, fmt.Sprintf("app-%04d", i))
		}
		return names
	}
}

// clientErrors counts the harness's failed requests by kind.
type clientErrors struct {
	mu       sync.Mutex
	counts   map[string]int
	examples []string
}

func (e *clientErrors) add(kind string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts == nil {
		e.counts = map[string]int{}
	}
	e.counts[kind]++
	if len(e.examples) < 10 {
		e.examples = append(e.examples, kind+": "+err.Error())
	}
}

// runSoak runs a soak on cluster. Its error is the harness's own (the
// setup failed); the targets missed are in the result.
func runSoak(ctx context.Context, cluster *localcluster.Cluster, o soakOptions) (*soakResult, error) {
	log := o.log
	if err := crd.Install(ctx, apiextensionsclientset.NewForConfigOrDie(cluster.Config)); err != nil {
		return nil, err
	}
	lo := options{apps: o.apps, resources: 1, sync: true}
	repoURL, stopGit, err := serveRepo(cluster.Dir, lo)
	if err != nil {
		return nil, err
	}
	defer stopGit()
	if err := createWorkload(ctx, cluster, repoURL, lo); err != nil {
		return nil, err
	}
	checker := newEventChecker(o.subscribers)
	first, err := headCommit(cluster.Dir)
	if err != nil {
		return nil, err
	}
	checker.pushed(first, 0)

	listen, err := localcluster.FreeAddr()
	if err != nil {
		return nil, err
	}
	profiles, err := localcluster.FreeAddr()
	if err != nil {
		return nil, err
	}
	srv := exec.Command(o.graphcd, "server", "--insecure", "--listen", listen, "--profile-listen", profiles, //nolint:noctx,gosec // stopped with SIGTERM; the harness's own binary
		"--kubeconfig", cluster.Kubeconfig, "--namespace", "graphcd", "--log-level", "warn")
	srv.Stderr, srv.Stdout = o.stderr, o.stderr
	srv.Env = serverEnv()
	srv.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := srv.Start(); err != nil {
		return nil, err
	}
	defer func() { _ = srv.Process.Signal(syscall.SIGTERM); _ = srv.Wait() }()
	pid := srv.Process.Pid
	base := "http://" + listen
	if err := waitReady(ctx, base+"/readyz"); err != nil {
		return nil, err
	}
	time.Sleep(2 * time.Second) // the controller's caches fill after readiness
	log.Info("creating applications", "apps", o.apps)
	start := time.Now()
	if err := createApps(ctx, cluster, repoURL, lo); err != nil {
		return nil, err
	}
	if _, _, err := waitReconciled(ctx, cluster, appsGVR, "graphcd", start, o.apps, nil); err != nil {
		return nil, err
	}
	r := &soakResult{o: o, checker: checker, reconciled: time.Since(start)}
	log.Info("all apps synced and healthy", "took", r.reconciled.Round(time.Millisecond))

	password, err := adminPassword(ctx, cluster)
	if err != nil {
		return nil, err
	}
	api := client.New(base, "")
	session, err := api.Login(ctx, "admin", password)
	if err != nil {
		return nil, fmt.Errorf("log in as admin: %w", err)
	}
	// The baseline: the quietest of a few samples once the syncs are done.
	time.Sleep(5 * time.Second)
	r.baseline = math.Inf(1)
	for range 5 {
		g, err := metricValue(ctx, listen, "go_goroutines")
		if err != nil {
			return nil, err
		}
		r.baseline = math.Min(r.baseline, g)
		time.Sleep(time.Second)
	}

	var errs clientErrors
	watch := soakWatch(o.apps, o.subscribers)
	subCtx, stopSubs := context.WithCancel(ctx)
	defer stopSubs()
	var subs sync.WaitGroup
	var subscribed sync.WaitGroup
	subscribed.Add(o.subscribers)
	subscriber := client.New(base, session.Token)
	for i := range o.subscribers {
		subs.Go(func() { soakSubscriber(subCtx, subscriber, i, watch(i), checker, &errs, subscribed.Done) })
	}
	subscribed.Wait()
	time.Sleep(2 * time.Second) // the server registers the last subscriptions
	log.Info("subscribed", "subscribers", o.subscribers)

	loadCtx, stopLoad := context.WithTimeout(ctx, o.duration)
	defer stopLoad()
	loadStart := time.Now()
	var pushes, logins atomic.Int64
	lastChange := map[string]int{}
	var load sync.WaitGroup
	load.Go(func() {
		tick := time.NewTicker(o.pushEvery)
		defer tick.Stop()
		per := max(1, o.apps/20)
		for n := 1; ; n++ {
			select {
			case <-loadCtx.Done():
				return
			case <-tick.C:
			}
			sha, changed, err := soakPush(cluster.Dir, n, per, o.apps)
			if err != nil {
				errs.add("push", err)
				continue
			}
			checker.pushed(sha, n)
			for _, app := range changed {
				lastChange[app] = n
			}
			pushes.Add(1)
			if err := postPush(ctx, listen, repoURL, sha); err != nil {
				errs.add("webhook", err)
			}
		}
	})
	var loginLatency []time.Duration
	load.Go(func() {
		tick := time.NewTicker(o.loginEvery)
		defer tick.Stop()
		for {
			select {
			case <-loadCtx.Done():
				return
			case <-tick.C:
			}
			began := time.Now()
			s, err := api.Login(loadCtx, "admin", password)
			if loadCtx.Err() != nil {
				return
			}
			if err == nil && s.Token == "" {
				err = errors.New("a session without a token")
			}
			if err != nil {
				errs.add("login", err)
				continue
			}
			loginLatency = append(loginLatency, time.Since(began))
			logins.Add(1)
		}
	})
	load.Go(func() {
		warmedUp := false
		tick := time.NewTicker(o.sampleEvery)
		defer tick.Stop()
		for {
			s := sample{at: time.Since(loadStart), pushes: int(pushes.Load()), logins: int(logins.Load())}
			var err error
			if s.rss, err = procStatus(pid, "VmRSS:"); err == nil {
				s.cpu, err = cpuSeconds(pid)
			}
			if err == nil {
				s.workers = childrenRSS(pid)
			}
			if err == nil {
				s.goroutines, err = metricValue(ctx, listen, "go_goroutines")
			}
			if err == nil && !warmedUp && s.at >= o.warmup {
				warmedUp = true
				err = saveHeap(ctx, profiles, o.out, "heap-warmup.pb.gz")
			}
			if err != nil {
				errs.add("sample", err)
			} else {
				checker.mu.Lock()
				s.events = checker.events
				checker.mu.Unlock()
				r.samples = append(r.samples, s)
				if len(r.samples)%max(1, int(time.Minute/o.sampleEvery)) == 0 {
					log.Info("soak", "at", s.at.Round(time.Second), "rssMiB", s.rss>>20, "goroutines", s.goroutines, "events", s.events, "pushes", s.pushes, "logins", s.logins)
				}
			}
			select {
			case <-loadCtx.Done():
				return
			case <-tick.C:
			}
		}
	})
	load.Wait()
	if err := saveHeap(ctx, profiles, o.out, "heap-end.pb.gz"); err != nil {
		errs.add("sample", err)
	}
	r.pushes, r.logins, r.loginLatency = int(pushes.Load()), int(logins.Load()), loginLatency
	log.Info("load ended; waiting for the last pushes to reach the subscribers")

	// Every subscriber must see each of its apps Synced at (or after) the
	// push that changed it last.
	settle := time.Now().Add(3 * time.Minute)
	for {
		r.missing = checker.missing(watch, lastChange)
		if len(r.missing) == 0 || time.Now().After(settle) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Second)
	}
	stopSubs()
	subs.Wait()
	api.HTTP.CloseIdleConnections()
	// Goroutines back to the baseline once the subscribers are gone.
	back := time.Now().Add(time.Minute)
	for {
		g, err := metricValue(ctx, listen, "go_goroutines")
		if err != nil {
			return nil, err
		}
		r.after = g
		if g <= r.baseline+goroutineSlack(r.baseline) || time.Now().After(back) {
			break
		}
		time.Sleep(time.Second)
	}
	errs.mu.Lock()
	r.clientErrors, r.errorExamples = errs.counts, errs.examples
	errs.mu.Unlock()
	r.judge()
	if o.out != "" {
		if err := r.write(o.out); err != nil {
			return r, err
		}
	}
	return r, nil
}

// goroutineSlack is how far above the baseline the server's goroutines
// may end: requests in flight and idle connections come and go.
func goroutineSlack(baseline float64) float64 { return math.Max(10, 0.02*baseline) }

// soakSubscriber holds subscriber i's subscription to names until ctx
// ends, checking each event; a broken subscription is an error, and it
// subscribes again. ready is called once, after the first subscription.
func soakSubscriber(ctx context.Context, c *client.Client, i int, names []string, checker *eventChecker, errs *clientErrors, ready func()) {
	var once sync.Once
	defer once.Do(ready)
	req := &graphql.Request{OpName: "SoakEvents", Query: soakEvents, Variables: map[string]any{"names": names}}
	for ctx.Err() == nil {
		sub, err := client.Subscribe[soakEventsResponse](ctx, c, req)
		if err != nil {
			if ctx.Err() == nil {
				errs.add("subscribe", err)
				time.Sleep(time.Second)
			}
			continue
		}
		once.Do(ready)
		for {
			r, err := sub.Next()
			if err != nil {
				if ctx.Err() == nil {
					errs.add("subscription", err)
				}
				break
			}
			checker.observe(i, &r.ApplicationEvents)
		}
		sub.Close()
	}
}

// soakPush changes the ConfigMaps of per apps (the n-th run of them, going
// round), pushes, and returns the commit and the apps changed.
func soakPush(base string, n, per, apps int) (string, []string, error) {
	var changed []string
	for j := range per {
		i := ((n-1)*per + j) % apps
		name := fmt.Sprintf("app-%04d", i)
		content := configMapYAML(i, "") + fmt.Sprintf("  push: %q\n", strconv.Itoa(n))
		if err := os.WriteFile(filepath.Join(base, "repo-work", "apps", name, "cm.yaml"), []byte(content), 0o600); err != nil {
			return "", nil, err
		}
		changed = append(changed, name)
	}
	sha, err := commitAndPush(base, fmt.Sprintf("push %d", n))
	return sha, changed, err
}

// headCommit returns the working copy's HEAD.
func headCommit(base string) (string, error) {
	cmd := exec.Command("git", "rev-parse", "HEAD") //nolint:noctx // short-lived
	cmd.Dir = filepath.Join(base, "repo-work")
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// adminPassword waits for the initial admin password graphcd generates.
func adminPassword(ctx context.Context, cluster *localcluster.Cluster) (string, error) {
	for {
		s, err := cluster.Client.CoreV1().Secrets("graphcd").Get(ctx, "graphcd-initial-admin-secret", metav1.GetOptions{})
		if err == nil && len(s.Data["password"]) > 0 {
			return string(s.Data["password"]), nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no initial admin password: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// serverEnv is the harness's environment without GRAPHCD_* (settings of
// graphcd, and GRAPHCD_SOAK of make soak) or Kubernetes settings.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GRAPHCD_") || name == "KUBECONFIG" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// procStatus reads a kB field of /proc/<pid>/status, in bytes.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// childrenRSS sums the RSS of pid's children (graphcd server's render
// workers); a child that ends meanwhile counts 0.
func childrenRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return 0
	}
	var sum int64
	for _, f := range strings.Fields(string(b)) {
		child, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		if rss, err := procStatus(child, "VmRSS:"); err == nil {
			sum += rss
		}
	}
	return sum
}

// judge fits the curves after the warm-up and lists the targets missed.
func (r *soakResult) judge() {
	var xs, rss, gr []float64
	for _, s := range r.samples {
		if s.at >= r.o.warmup {
			xs = append(xs, s.at.Minutes())
			rss = append(rss, float64(s.rss)/(1<<20))
			gr = append(gr, s.goroutines)
		}
	}
	r.rssFit, r.grFit = leastSquares(xs, rss), leastSquares(xs, gr)
	if len(xs) >= 2 {
		x0, x1 := xs[0], xs[len(xs)-1]
		r.rssGrowth = (r.rssFit.at(x1) - r.rssFit.at(x0)) / r.rssFit.at(x0) * 100
		r.grGrowth = r.grFit.at(x1) - r.grFit.at(x0)
	}
	fail := func(format string, args ...any) { r.failures = append(r.failures, fmt.Sprintf(format, args...)) }
	c := r.checker
	for kind, n := range r.clientErrors {
		fail("%d client errors (%s)", n, kind)
	}
	if c.lagged > 0 {
		fail("%d lagged markers: the server dropped events", c.lagged)
	}
	if c.timeBack > 0 || c.revBack > 0 {
		fail("events out of order: %d went back in time, %d back to an older push", c.timeBack, c.revBack)
	}
	if c.duplicates > 0 {
		fail("%d duplicate SyncStatusChanged", c.duplicates)
	}
	if c.unknownRev > 0 || c.unnamed > 0 {
		fail("%d events about a revision no push made, %d without a name or time", c.unknownRev, c.unnamed)
	}
	if len(r.missing) > 0 {
		fail("%d (subscriber, app) pairs never saw their app's last push Synced", len(r.missing))
	}
	if r.pushes == 0 || r.logins == 0 || c.events == 0 {
		fail("no load: %d pushes, %d logins, %d events", r.pushes, r.logins, c.events)
	}
	if r.after > r.baseline+goroutineSlack(r.baseline) {
		fail("goroutines not back to the baseline after the load: %.0f, baseline %.0f", r.after, r.baseline)
	}
	if len(xs) < 2 {
		r.figureFailures = append(r.figureFailures, "too few samples after the warm-up to fit a slope")
		return
	}
	if r.rssGrowth > 5 {
		r.figureFailures = append(r.figureFailures, fmt.Sprintf("RSS grew %.1f%% after the warm-up (target ≤ 5%%)", r.rssGrowth))
	}
	if mean := meanOf(gr); r.grGrowth > math.Max(5, 0.01*mean) {
		r.figureFailures = append(r.figureFailures, fmt.Sprintf("goroutines grew by %.0f after the warm-up (%.2f a minute; mean %.0f)", r.grGrowth, r.grFit.b, mean))
	}
}

func meanOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// report returns the run's figures and verdict, for printing.
func (r *soakResult) report() string {
	var b strings.Builder
	w := &b
	c := r.checker
	c.mu.Lock()
	defer c.mu.Unlock()
	o := r.o
	fmt.Fprintf(w, "soak: %d apps, %d subscribers, a push every %s (%d apps each), a login every %s, for %s (warm-up %s)\n",
		o.apps, o.subscribers, o.pushEvery, max(1, o.apps/20), o.loginEvery, o.duration, o.warmup)
	fmt.Fprintf(w, "  apps synced and healthy after     %s\n", r.reconciled.Round(100*time.Millisecond))
	fmt.Fprintf(w, "  pushes                            %d\n", r.pushes)
	fmt.Fprintf(w, "  logins                            %d (p50 %s, p99 %s, max %s)\n", r.logins,
		percentile(r.loginLatency, 50).Round(time.Millisecond), percentile(r.loginLatency, 99).Round(time.Millisecond), percentile(r.loginLatency, 100).Round(time.Millisecond))
	fmt.Fprintf(w, "  events received                   %d (%s)\n", c.events, byTypeString(c.byType))
	fmt.Fprintf(w, "  lagged markers                    %d\n", c.lagged)
	fmt.Fprintf(w, "  out of order (time, revision)     %d, %d\n", c.timeBack, c.revBack)
	fmt.Fprintf(w, "  duplicate SyncStatusChanged       %d\n", c.duplicates)
	fmt.Fprintf(w, "  last pushes not seen Synced       %d\n", len(r.missing))
	fmt.Fprintf(w, "  client errors                     %v\n", r.clientErrors)
	if n := len(r.samples); n > 0 {
		first, last := r.samples[0], r.samples[n-1]
		fmt.Fprintf(w, "  samples                           %d every %s\n", n, o.sampleEvery)
		fmt.Fprintf(w, "  RSS                               %d MiB at the start, %d MiB at the end, %d MiB peak\n", first.rss>>20, last.rss>>20, peakOf(r.samples)>>20)
		fmt.Fprintf(w, "  render workers' RSS               %d MiB at the start, %d MiB at the end\n", first.workers>>20, last.workers>>20)
		fmt.Fprintf(w, "  RSS after the warm-up             slope %+.3f MiB/min, growth %+.2f%% (least squares)\n", r.rssFit.b, r.rssGrowth)
		fmt.Fprintf(w, "  goroutines                        baseline %.0f, %.0f at the start, %.0f at the end, %.0f after the load\n", r.baseline, first.goroutines, last.goroutines, r.after)
		fmt.Fprintf(w, "  goroutines after the warm-up      slope %+.3f /min, growth %+.1f (least squares)\n", r.grFit.b, r.grGrowth)
		fmt.Fprintf(w, "  server CPU                        %.1f CPU-s over the load (%.0f mCPU)\n", last.cpu-first.cpu, (last.cpu-first.cpu)/(last.at-first.at).Seconds()*1000)
	}
	for _, e := range r.errorExamples {
		fmt.Fprintf(w, "  error: %s\n", e)
	}
	for _, e := range c.examples {
		fmt.Fprintf(w, "  event: %s\n", e)
	}
	for i, m := range r.missing {
		if i == 10 {
			fmt.Fprintf(w, "  missing: %d more\n", len(r.missing)-i)
			break
		}
		fmt.Fprintf(w, "  missing: %s\n", m)
	}
	if len(r.failures)+len(r.figureFailures) == 0 {
		fmt.Fprintln(w, "soak: every target met")
		return b.String()
	}
	for _, f := range append(append([]string{}, r.failures...), r.figureFailures...) {
		fmt.Fprintf(w, "soak: MISSED: %s\n", f)
	}
	return b.String()
}

func byTypeString(m map[string]int) string {
	var parts []string
	for _, t := range []string{"SyncStatusChanged", "HealthChanged", "OperationPhaseChanged", "ResourceChanged", "ReconcileCompleted"} {
		if m[t] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", t, m[t]))
		}
	}
	return strings.Join(parts, ", ")
}

func peakOf(samples []sample) int64 {
	var p int64
	for _, s := range samples {
		p = max(p, s.rss)
	}
	return p
}

// write puts soak.csv, soak-rss.svg and soak-goroutines.svg into dir.
func (r *soakResult) write(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "soak.csv"))
	if err != nil {
		return err
	}
	if err := writeCSV(f, r.samples, r.o.warmup); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	var xs, rss, gr []float64
	for _, s := range r.samples {
		xs = append(xs, s.at.Minutes())
		rss = append(rss, float64(s.rss)/(1<<20))
		gr = append(gr, s.goroutines)
	}
	desc := fmt.Sprintf("%d apps, %d subscribers, a push every %s, a login every %s", r.o.apps, r.o.subscribers, r.o.pushEvery, r.o.loginEvery)
	for name, c := range map[string]lineChart{
		"soak-rss.svg": {title: "graphcd server RSS", unit: "MiB", xs: xs, ys: rss, warmup: r.o.warmup.Minutes(), line: r.rssFit,
			note: fmt.Sprintf("%s; after warm-up %+.3f MiB/min, %+.2f%%", desc, r.rssFit.b, r.rssGrowth)},
		"soak-goroutines.svg": {title: "graphcd server goroutines", unit: "goroutines", xs: xs, ys: gr, warmup: r.o.warmup.Minutes(), line: r.grFit,
			note: fmt.Sprintf("%s; after warm-up %+.3f/min", desc, r.grFit.b)},
	} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := c.svg(f); err != nil {
			_ = f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// soakMain runs --soak on a cluster of its own; setup may take up to
// timeout besides the load and its settling.
func soakMain(o soakOptions, timeout time.Duration) error {
	if o.apps < 1 || o.subscribers < 1 || o.duration <= o.warmup || o.sampleEvery <= 0 {
		return fmt.Errorf("--soak needs --apps and --subscribers of at least 1, --duration longer than --warmup and a positive --sample-every")
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.duration+timeout)
	defer cancel()
	cluster, err := localcluster.Start(ctx, localcluster.Options{Mode: localcluster.Minimal, Logger: o.log})
	if err != nil {
		return err
	}
	defer func() { _ = cluster.Stop() }()
	r, err := runSoak(ctx, cluster, o)
	if err != nil {
		return err
	}
	fmt.Print(r.report())
	if o.out != "" {
		fmt.Printf("soak: samples in %s, pictures %s and %s\n", filepath.Join(o.out, "soak.csv"), filepath.Join(o.out, "soak-rss.svg"), filepath.Join(o.out, "soak-goroutines.svg"))
	}
	if n := len(r.failures) + len(r.figureFailures); n > 0 {
		return fmt.Errorf("%d targets missed", n)
	}
	return nil
}
