package memguard

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"
)

// guard returns a Guard over a 1,000-byte limit whose live heap the test
// sets.
func guard(live *atomic.Int64) *Guard {
	return New(Options{Limit: 1000, live: live.Load})
}

func TestPressureHasHysteresis(t *testing.T) {
	var live atomic.Int64
	g := guard(&live)
	now := time.Unix(1000, 0)
	for _, step := range []struct {
		live int64
		want bool
	}{
		{500, false},
		{700, false}, // at the high mark, not above it
		{701, true},
		{600, true}, // between the marks: still under pressure
		{549, false},
		{650, false},
	} {
		live.Store(step.live)
		g.check(now)
		if got := g.Pressure(); got != step.want {
			t.Fatalf("live heap %d of 1000: pressure %v, want %v", step.live, got, step.want)
		}
	}
}

func TestAdmitUnderPressureRunsOneAtATime(t *testing.T) {
	var live atomic.Int64
	g := guard(&live)
	ctx := t.Context()
	first, err := g.Admit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Without pressure, work runs side by side.
	second, err := g.Admit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	live.Store(900)
	g.check(time.Now())

	admitted := make(chan func(), 1)
	go func() {
		r, err := g.Admit(ctx)
		if err != nil {
			t.Error(err)
			return
		}
		admitted <- r
	}()
	first()
	first() // releasing twice counts once
	select {
	case <-admitted:
		t.Fatal("admitted under pressure while other work runs")
	case <-time.After(50 * time.Millisecond):
	}
	second()
	third := <-admitted
	if w := g.State().Waits; w != 1 {
		t.Errorf("waits = %d, want 1", w)
	}

	// A waiting admission gives up with its context.
	short, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.Admit(short); !errors.Is(err, context.Canceled) {
		t.Errorf("Admit on an ended context: %v, want context.Canceled", err)
	}

	// The end of the pressure lets waiting work in at once.
	go func() {
		r, err := g.Admit(ctx)
		if err == nil {
			admitted <- r
		}
	}()
	time.Sleep(20 * time.Millisecond)
	live.Store(100)
	g.check(time.Now())
	(<-admitted)()
	third()
}

func TestNoLimitNoPressure(t *testing.T) {
	g := New(Options{Limit: -1, live: func() int64 { return 1 << 40 }})
	if g.State().Limit != 0 {
		t.Skip("the test process runs under a memory limit")
	}
	g.Run(t.Context()) // returns at once without a limit
	if g.Pressure() {
		t.Fatal("pressure without a limit")
	}
	var nilGuard *Guard
	release, err := nilGuard.Admit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	release()
}

func TestLiveHeapReads(t *testing.T) {
	runtime.GC() // the live heap is known from the first collection on
	if liveHeap() <= 0 {
		t.Fatal("live heap reads 0")
	}
}

func TestLimitFromContainer(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	write := func(name, content string) string {
		root := t.TempDir()
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return root
	}
	t.Setenv("GOMEMLIMIT", "")
	if got := LimitFromContainer(write("memory.max", "1000000\n"), 0.9); got != 0 {
		t.Errorf("with GOMEMLIMIT set: limit %d, want none", got)
	}
	os.Unsetenv("GOMEMLIMIT") //nolint:errcheck // t.Setenv restores it
	for _, c := range []struct {
		name, file, content string
		want                int64
	}{
		{"cgroup v2", "memory.max", "1000000\n", 900000},
		{"cgroup v2 without a limit", "memory.max", "max\n", 0},
		{"cgroup v1", "memory/memory.limit_in_bytes", "2000000\n", 1800000},
		{"cgroup v1 without a limit", "memory/memory.limit_in_bytes", "9223372036854771712\n", 0},
		{"garbage", "memory.max", "lots", 0},
		{"no cgroup", "other", "", 0},
	} {
		debug.SetMemoryLimit(math.MaxInt64)
		if got := LimitFromContainer(write(c.file, c.content), 0.9); got != c.want {
			t.Errorf("%s: limit %d, want %d", c.name, got, c.want)
		}
		if want := c.want; want > 0 {
			if l := debug.SetMemoryLimit(-1); l != want {
				t.Errorf("%s: runtime limit %d, want %d", c.name, l, want)
			}
		}
	}
}
