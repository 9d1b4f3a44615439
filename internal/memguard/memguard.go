// Package memguard is a role's back-pressure on memory. Under a memory
// limit (GOMEMLIMIT, which a Kubernetes manifest sets from the
// container's limit) a Go process collects more often as its heap nears
// the limit, and past it spends its time collecting until the kernel
// kills it. A Guard watches the heap that survives each collection
// against the limit; while that live heap is above a high mark the
// process is under pressure, and work admitted through the Guard runs
// one piece at a time — new comparisons and renders wait for the one in
// flight rather than each adding its own memory. The pressure ends when
// the live heap falls under a low mark. Each change is logged and shown
// by the graphcd_memory_* metrics and the role's component status.
//
//	g := memguard.New(memguard.Options{Logger: log})
//	go g.Run(ctx)
//	release, err := g.Admit(ctx) // waits while under pressure and other work runs
//	defer release()
//
// Without a limit a Guard is never under pressure. A nil *Guard admits
// everything. A role without GOMEMLIMIT takes 90% of its container's
// memory limit (LimitFromContainer).
package memguard

import (
	"context"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Marks, as fractions of the memory limit: pressure begins when the live
// heap passes High and ends when it falls under Low.
const (
	DefaultHigh = 0.70
	DefaultLow  = 0.55
)

// DefaultInterval is how often the heap is read.
const DefaultInterval = 500 * time.Millisecond

// Options configure a Guard.
type Options struct {
	// Limit is the memory limit in bytes; zero reads the process's
	// (GOMEMLIMIT, or debug.SetMemoryLimit). No limit means no pressure.
	Limit int64
	// High and Low are the marks (DefaultHigh, DefaultLow when zero).
	High, Low float64
	// Interval is how often the heap is read (DefaultInterval when zero).
	Interval time.Duration
	// Logger receives the changes of pressure; nil discards.
	Logger *slog.Logger
	// live reads the live heap; tests set it.
	live func() int64
}

// State is what a Guard last saw.
type State struct {
	// Limit is the memory limit in bytes, zero when there is none.
	Limit int64 `json:"limit,omitempty"`
	// Live is the heap that survived the last collection, in bytes.
	Live int64 `json:"live,omitempty"`
	// Pressure is whether the live heap is above the high mark (and has
	// not fallen under the low one since); Since is when that began.
	Pressure bool      `json:"pressure,omitempty"`
	Since    time.Time `json:"since,omitzero"`
	// Waits counts the admissions that waited for want of memory.
	Waits int64 `json:"waits,omitempty"`
}

// Guard watches the process's memory; make it with New and Run it.
type Guard struct {
	opts Options
	mu   sync.Mutex
	st   State
	// inflight counts the admitted work that has not ended; wake is
	// closed (and replaced) when it falls or the pressure ends.
	inflight int
	wake     chan struct{}
}

// New returns a Guard reading the memory limit once.
func New(opts Options) *Guard {
	if opts.Limit <= 0 {
		if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
			opts.Limit = l
		}
	}
	if opts.High <= 0 {
		opts.High = DefaultHigh
	}
	if opts.Low <= 0 || opts.Low > opts.High {
		opts.Low = min(DefaultLow, opts.High)
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.live == nil {
		opts.live = liveHeap
	}
	g := &Guard{opts: opts, wake: make(chan struct{})}
	g.st.Limit = max(opts.Limit, 0)
	limitBytes.Set(float64(g.st.Limit))
	return g
}

// Run reads the heap every Interval until ctx ends. Without a limit it
// returns at once.
func (g *Guard) Run(ctx context.Context) {
	if g == nil || g.opts.Limit <= 0 {
		return
	}
	tick := time.NewTicker(g.opts.Interval)
	defer tick.Stop()
	for {
		g.check(time.Now())
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// check reads the live heap and moves in or out of pressure.
func (g *Guard) check(now time.Time) {
	live := g.opts.live()
	liveBytes.Set(float64(live))
	g.mu.Lock()
	defer g.mu.Unlock()
	g.st.Live = live
	high := int64(float64(g.opts.Limit) * g.opts.High)
	low := int64(float64(g.opts.Limit) * g.opts.Low)
	switch {
	case !g.st.Pressure && live > high:
		g.st.Pressure, g.st.Since = true, now
		pressure.Set(1)
		g.opts.Logger.Warn("memory pressure: new work waits for the work in flight",
			"liveHeapMiB", live>>20, "limitMiB", g.opts.Limit>>20, "highMark", g.opts.High)
	case g.st.Pressure && live < low:
		g.opts.Logger.Info("memory pressure over", "liveHeapMiB", live>>20, "limitMiB", g.opts.Limit>>20,
			"lasted", now.Sub(g.st.Since).Round(time.Second).String())
		g.st.Pressure, g.st.Since = false, time.Time{}
		pressure.Set(0)
		g.broadcast()
	}
}

// broadcast wakes the admissions waiting; g.mu is held.
func (g *Guard) broadcast() {
	close(g.wake)
	g.wake = make(chan struct{})
}

// State returns what the Guard last saw. A nil Guard has seen nothing.
func (g *Guard) State() State {
	if g == nil {
		return State{}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.st
}

// Pressure reports whether the process is under memory pressure.
func (g *Guard) Pressure() bool { return g.State().Pressure }

// Admit admits one piece of work: at once, unless the process is under
// pressure and other admitted work runs, in which case it waits until
// that work ends or the pressure does, or ctx ends (its error is
// returned). The work calls release once it ends.
func (g *Guard) Admit(ctx context.Context) (release func(), err error) {
	if g == nil {
		return func() {}, nil
	}
	waited := false
	for {
		g.mu.Lock()
		if !g.st.Pressure || g.inflight == 0 {
			g.inflight++
			g.mu.Unlock()
			return sync.OnceFunc(g.release), nil
		}
		if !waited {
			waited = true
			g.st.Waits++
			waits.Inc()
		}
		wake := g.wake
		g.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

func (g *Guard) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inflight--
	g.broadcast()
}

// liveHeap reads the heap that survived the last collection.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(min(s[0].Value.Uint64(), math.MaxInt64)) //nolint:gosec // G115: bounded above
}

var (
	limitBytes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "graphcd_memory_limit_bytes",
		Help: "The process's memory limit (GOMEMLIMIT) in bytes; 0 when it has none.",
	})
	liveBytes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "graphcd_memory_live_heap_bytes",
		Help: "The heap that survived the last garbage collection, in bytes (read only under a memory limit).",
	})
	pressure = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "graphcd_memory_pressure",
		Help: "1 while the live heap is above the high mark of the memory limit and new work waits for the work in flight.",
	})
	waits = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "graphcd_memory_waits_total",
		Help: "Comparisons and renders that waited for memory.",
	})
)

// Collectors returns the memory families.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{limitBytes, liveBytes, pressure, waits}
}

// DefaultContainerShare is the share of its container's memory limit a
// process takes as its own limit when GOMEMLIMIT is not set: the rest is
// for what the Go runtime does not count (stacks of threads in cgo, the
// kernel's page cache charged to the container).
const DefaultContainerShare = 0.9

// unlimited is the least value a cgroup v1 limit takes when it sets none.
const unlimited = 1 << 62

// LimitFromContainer sets the process's memory limit to share of its
// container's (read under root, the cgroup file system's mount, as a
// container sees its own cgroup: memory.max of cgroup v2, or
// memory/memory.limit_in_bytes of v1) unless GOMEMLIMIT is set or the
// container has no limit. It returns the limit set, 0 when it set none.
func LimitFromContainer(root string, share float64) int64 {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set || share <= 0 || share > 1 {
		return 0
	}
	for _, name := range []string{"memory.max", "memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= unlimited { // "max", or none
			return 0
		}
		limit := int64(float64(n) * share)
		debug.SetMemoryLimit(limit)
		return limit
	}
	return 0
}
