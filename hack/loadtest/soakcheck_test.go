package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestEventCheckerFindsEachViolation(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	ev := func(typ, name, sync, rev string, at time.Time) *soakEvent {
		return &soakEvent{Type: &typ, Name: &name, SyncStatus: &sync, Revision: &rev, Time: &at}
	}
	c := newEventChecker(2)
	c.pushed("r0", 0)
	c.pushed("r1", 1)
	c.pushed("r2", 2)
	// Subscriber 0 sees a clean stream of app a.
	c.observe(0, ev("SyncStatusChanged", "a", "OutOfSync", "r1", t0))
	c.observe(0, ev("OperationPhaseChanged", "a", "OutOfSync", "r1", t0.Add(time.Second)))
	c.observe(0, ev("SyncStatusChanged", "a", "Synced", "r1", t0.Add(2*time.Second)))
	c.observe(0, ev("ReconcileCompleted", "a", "Synced", "r2", t0.Add(3*time.Second)))
	if c.timeBack+c.revBack+c.duplicates+c.unknownRev+c.lagged != 0 {
		t.Fatalf("a clean stream: %+v", c.examples)
	}
	// Subscriber 1: each violation once.
	c.observe(1, ev("SyncStatusChanged", "a", "Synced", "r2", t0.Add(time.Second)))
	c.observe(1, ev("ReconcileCompleted", "a", "Synced", "r2", t0))                    // back in time
	c.observe(1, ev("ReconcileCompleted", "a", "Synced", "r1", t0.Add(2*time.Second))) // back to an older push
	c.observe(1, ev("SyncStatusChanged", "a", "Synced", "r2", t0.Add(3*time.Second)))  // the same status again
	c.observe(1, ev("ReconcileCompleted", "a", "Synced", "rX", t0.Add(4*time.Second))) // no push made it
	c.observe(1, &soakEvent{Lagged: true})
	if c.timeBack != 1 || c.revBack != 1 || c.duplicates != 1 || c.unknownRev != 1 || c.lagged != 1 {
		t.Errorf("time %d, revision %d, duplicates %d, unknown %d, lagged %d; want 1 each\n%s",
			c.timeBack, c.revBack, c.duplicates, c.unknownRev, c.lagged, strings.Join(c.examples, "\n"))
	}
	// Subscriber 0 saw a Synced at push 2; subscriber 1 too (its older
	// event does not lower it). An app changed by push 3 is missing.
	watch := func(int) []string { return []string{"a", "b"} }
	if m := c.missing(watch, map[string]int{"a": 2}); len(m) != 0 {
		t.Errorf("missing %v, want none", m)
	}
	if m := c.missing(watch, map[string]int{"a": 3, "b": 1}); len(m) != 4 {
		t.Errorf("missing %v, want both subscribers for both apps", m)
	}
}

func TestLeastSquares(t *testing.T) {
	f := leastSquares([]float64{0, 1, 2, 3}, []float64{1, 3, 5, 7})
	if math.Abs(f.a-1) > 1e-9 || math.Abs(f.b-2) > 1e-9 {
		t.Errorf("fit %+v, want a=1 b=2", f)
	}
	if f := leastSquares([]float64{2, 2}, []float64{4, 6}); f.b != 0 || f.a != 5 {
		t.Errorf("one x: %+v, want the mean and no slope", f)
	}
}

func TestSoakWatchPairsSubscribers(t *testing.T) {
	watch := soakWatch(10, 4)
	seen := map[string]int{}
	for sub := range 4 {
		for _, app := range watch(sub) {
			seen[app]++
		}
	}
	if len(seen) != 10 {
		t.Fatalf("%d apps followed, want 10", len(seen))
	}
	for app, n := range seen {
		if n != 2 {
			t.Errorf("%s has %d subscribers, want 2", app, n)
		}
	}
}

func TestChartSVG(t *testing.T) {
	var b strings.Builder
	c := lineChart{title: "RSS <MiB>", unit: "MiB", xs: []float64{0, 1, 2}, ys: []float64{100, 110, 105}, warmup: 0.5, line: fit{a: 100, b: 2}}
	if err := c.svg(&b); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{"<svg ", "RSS &lt;MiB&gt;", "<polyline", "stroke-dasharray", "warm-up", "</svg>"} {
		if !strings.Contains(s, want) {
			t.Errorf("the picture has no %q", want)
		}
	}
}
