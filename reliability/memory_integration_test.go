//go:build integration

package reliability

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Memory limits of the roles, as a manifest sets GOMEMLIMIT from the
// container's limit, and the caps the watchdog enforces as a cgroup
// would: a role whose memory (its process group's, render workers
// included) passes its cap is killed.
const (
	roleMemoryLimit = 256 << 20
	roleMemoryCap   = 1 << 30
)

// memoryEnv is the environment of every role: its memory limit.
func memoryEnv() []string { return []string{"GOMEMLIMIT=" + strconv.Itoa(roleMemoryLimit)} }

// The sizes of the memory case: a render of bigManifests ConfigMaps of
// bigData bytes each (50 MB in one file), and a crowd of crowdObjects
// ConfigMaps in the management cluster, which the controllers' caches
// hold.
const (
	bigManifests = 500
	bigData      = 100 << 10
	crowdObjects = 10_000
	bigApp       = "big"
)

// Memory pressure: while the roles run under their memory limits, a
// namespace of crowdObjects ConfigMaps arrives in the cluster the
// controllers watch, then an app whose render is a 50 MB manifest. No role
// may pass its cap or crash; the app must be compared (OutOfSync, all its
// resources listed) and the pressure reported on /metrics (and in the
// role's log and component status); the background apps must keep
// syncing. Recovery: from the big app compared until the background apps
// synced the head again.
func memoryPressure(t *testing.T, in *installation, l *load) []outcome {
	dog := watchMemory(t, in)
	pressured := watchPressure(t, in)

	start := time.Now()
	crowd := cluster.Namespace(t)
	createCrowd(t, crowd)
	crowded := time.Since(start)

	if _, err := in.git.commit(t.Context(), "a 50 MB manifest", map[string][]byte{bigApp + "/manifest.yaml": bigManifest()}); err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	in.newApp(t, bigApp, bigApp, nil)
	waitFor(t, 10*time.Minute, "the big app to be compared", func() (bool, string) {
		if dead := dog.killed(); dead != "" {
			t.Fatal(dead)
		}
		a, err := in.app(t.Context(), bigApp)
		if err != nil {
			return false, err.Error()
		}
		s := a.Status
		return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync && len(s.Resources) == bigManifests,
			fmt.Sprintf("sync %q, %d resources, conditions %v", s.Sync.Status, len(s.Resources), s.Conditions)
	})
	compared := time.Now()
	settled := l.settle(t)
	dog.stop()
	if dead := dog.killed(); dead != "" {
		t.Fatal(dead)
	}
	for _, r := range in.All() {
		if !r.Running() {
			t.Errorf("%s is not running after the memory case", r.Name)
		}
	}
	reported := pressured.reported()
	if len(reported) == 0 {
		t.Errorf("no role reported memory pressure (graphcd_memory_pressure 1 on /metrics); peaks: %s", dog.peaks())
	}
	for _, name := range reported {
		if !strings.Contains(in.Role(name).Log(), "memory pressure") {
			t.Errorf("%s reported memory pressure on /metrics but not in its log", name)
		}
	}
	in.checkMemoryStatus(t, l.session(t, in.ServerURLs[0]))
	return []outcome{{
		fault:    fmt.Sprintf("memory pressure: roles under GOMEMLIMIT=%d MiB, capped at %d MiB; %d ConfigMaps arrive in the cluster, then a 50 MB manifest", roleMemoryLimit>>20, roleMemoryCap>>20, crowdObjects),
		recovery: settled.Sub(compared),
		note: fmt.Sprintf("crowd created in %.0f s; the 50 MB app compared %.0f s after it was created; pressure reported by %s; peak RSS %s; peak live heap %s; no role killed or restarted",
			crowded.Seconds(), compared.Sub(created).Seconds(), strings.Join(reported, ", "), dog.peaks(), pressured.peakLive()),
	}}
}

// bigManifest is bigManifests ConfigMaps of bigData bytes of hex each,
// one YAML stream.
func bigManifest() []byte {
	rng := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // test data
	var b strings.Builder
	b.Grow(bigManifests * (bigData + 200))
	line := make([]byte, bigData/2)
	for i := range bigManifests {
		for j := range line {
			line[j] = byte(rng.UintN(256))
		}
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big-%d\ndata:\n  blob: %x\n", i, line)
	}
	return []byte(b.String())
}

// createCrowd creates crowdObjects small ConfigMaps in ns, a few at a
// time.
func createCrowd(t *testing.T, ns string) {
	cfg := *cluster.Config
	cfg.QPS, cfg.Burst = 500, 500
	c, err := kubernetes.NewForConfig(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	names := make(chan int)
	var wg sync.WaitGroup
	var failed sync.Once
	for range 8 {
		wg.Go(func() {
			for i := range names {
				cm := &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("crowd-%05d", i), Namespace: ns, Labels: map[string]string{"crowd": "true"}},
					Data:       map[string]string{"n": strconv.Itoa(i)},
				}
				if _, err := c.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
					failed.Do(func() { t.Errorf("create the crowd: %v", err) })
				}
			}
		})
	}
	for i := range crowdObjects {
		names <- i
	}
	close(names)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}

// memoryDog samples every role's memory and kills one that passes its
// cap, as the kernel would kill a container past its cgroup limit.
type memoryDog struct {
	*poller
	mu   sync.Mutex
	peak map[string]int64
	dead string
}

func watchMemory(t *testing.T, in *installation) *memoryDog {
	d := &memoryDog{peak: map[string]int64{}}
	d.poller = poll(t, 100*time.Millisecond, func() {
		for _, r := range in.All() {
			rss := groupRSS(r.PID())
			d.mu.Lock()
			d.peak[r.Name] = max(d.peak[r.Name], rss)
			if rss > roleMemoryCap && d.dead == "" {
				_ = r.Signal(syscall.SIGKILL)
				d.dead = fmt.Sprintf("%s passed its cap: %d MiB of %d MiB; killed", r.Name, rss>>20, roleMemoryCap>>20)
			}
			d.mu.Unlock()
		}
	})
	return d
}

// poller runs a function every period until stopped (or the test ends).
type poller struct {
	done chan struct{}
	wg   sync.WaitGroup
}

func poll(t *testing.T, period time.Duration, fn func()) *poller {
	p := &poller{done: make(chan struct{})}
	p.wg.Go(func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			fn()
			select {
			case <-p.done:
				return
			case <-tick.C:
			}
		}
	})
	t.Cleanup(p.stop)
	return p
}

// stop ends the polling and waits for the last round.
func (p *poller) stop() {
	select {
	case <-p.done:
	default:
		close(p.done)
	}
	p.wg.Wait()
}

func (d *memoryDog) killed() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dead
}

// peaks lists the peak memory of the roles by kind.
func (d *memoryDog) peaks() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return byKind(d.peak)
}

// byKind lists the largest of the roles' figures of each kind, in MiB.
func byKind(figures map[string]int64) string {
	kinds := map[string]int64{}
	for name, n := range figures {
		kind := strings.TrimRight(name, "-0123456789")
		kinds[kind] = max(kinds[kind], n)
	}
	var parts []string
	for _, kind := range []string{"controller", "repo-server", "server"} {
		parts = append(parts, fmt.Sprintf("%s %d MiB", kind, kinds[kind]>>20))
	}
	return strings.Join(parts, ", ")
}

// groupRSS is the resident memory of the processes of group pgid.
func groupRSS(pgid int) int64 {
	if pgid <= 0 {
		return 0
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var total int64
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces.
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 3 || fields[2] != strconv.Itoa(pgid) {
			continue
		}
		statm, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "statm"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(statm))
		if len(f) < 2 {
			continue
		}
		pages, _ := strconv.ParseInt(f[1], 10, 64)
		total += pages * int64(os.Getpagesize())
	}
	return total
}

// pressureWatch polls the roles' /metrics for graphcd_memory_pressure 1,
// and for their peak live heap.
type pressureWatch struct {
	*poller
	mu   sync.Mutex
	seen []string
	live map[string]int64 // peak graphcd_memory_live_heap_bytes by role
}

func watchPressure(t *testing.T, in *installation) *pressureWatch {
	w := &pressureWatch{live: map[string]int64{}}
	metricsOf := map[string]string{} // name: its /metrics
	for _, r := range in.All() {
		if strings.HasSuffix(r.Health, "/healthz") {
			metricsOf[r.Name] = strings.TrimSuffix(r.Health, "/healthz") + "/metrics"
		} else {
			metricsOf[r.Name] = strings.TrimSuffix(r.Health, "/readyz") + "/metrics"
		}
	}
	w.poller = poll(t, 200*time.Millisecond, func() {
		for name, url := range metricsOf {
			pressure, live := readMemory(url)
			w.mu.Lock()
			if pressure && !slices.Contains(w.seen, name) {
				w.seen = append(w.seen, name)
			}
			w.live[name] = max(w.live[name], live)
			w.mu.Unlock()
		}
	})
	return w
}

// reported ends the polling and returns the roles that reported pressure.
func (w *pressureWatch) reported() []string {
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen
}

// peakLive lists the peak live heap of the roles by kind.
func (w *pressureWatch) peakLive() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return byKind(w.live)
}

// readMemory reads a role's /metrics: whether it is under pressure, and
// its live heap.
func readMemory(url string) (pressure bool, live int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, 0
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, 0
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "graphcd_memory_pressure 1" {
			pressure = true
		}
		if v, ok := strings.CutPrefix(line, "graphcd_memory_live_heap_bytes "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			live = int64(f)
		}
	}
	return pressure, live
}

// checkMemoryStatus fails the test unless componentStatus shows every API
// and controller replica's memory limit.
func (in *installation) checkMemoryStatus(t *testing.T, token string) {
	t.Helper()
	const q = `{"query":"{ componentStatus { apiReplicas { id memory { limitBytes } } controllers { id memory { limitBytes pressure waits } } } }"}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, in.ServerURLs[0]+"/api/graphql", strings.NewReader(q))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	type replica struct {
		ID     string
		Memory struct {
			LimitBytes float64
			Pressure   bool
			Waits      float64
		}
	}
	var answer struct {
		Data struct {
			ComponentStatus struct{ APIReplicas, Controllers []replica }
		}
		Errors []struct{ Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatalf("componentStatus: HTTP %d: %v", resp.StatusCode, err)
	}
	if len(answer.Errors) > 0 {
		t.Fatalf("componentStatus: %s", answer.Errors[0].Message)
	}
	cs := answer.Data.ComponentStatus
	// A replica killed by an earlier case is listed until it is stale.
	if len(cs.APIReplicas) < len(in.Servers) || len(cs.Controllers) < 2*shards {
		t.Fatalf("componentStatus lists %d API and %d controller replicas, want %d and %d", len(cs.APIReplicas), len(cs.Controllers), len(in.Servers), 2*shards)
	}
	for _, r := range append(cs.APIReplicas, cs.Controllers...) {
		if r.Memory.LimitBytes != roleMemoryLimit {
			t.Errorf("componentStatus: %s's memory limit %v, want %d", r.ID, r.Memory.LimitBytes, roleMemoryLimit)
		}
	}
	for _, r := range cs.Controllers {
		t.Logf("componentStatus: controller %s: pressure %v, %v waits", r.ID, r.Memory.Pressure, r.Memory.Waits)
	}
}
