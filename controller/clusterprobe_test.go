package controller

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A cluster is reported unreachable only after failing for
// unreachableAfter, with a message that stays the same while it is down,
// and its first answer clears that; each turn calls back once.
func TestClusterProbe(t *testing.T) {
	turns := 0
	p := &clusterProbe{turned: func() { turns++ }}
	start := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	refused := errors.New("connect: connection refused")

	p.record(nil, start)
	p.record(refused, start)
	p.record(refused, start.Add(unreachableAfter-time.Second))
	if err := p.unreachable(); err != nil || turns != 0 {
		t.Fatalf("unreachable after failing %v: %v", unreachableAfter-time.Second, err)
	}
	p.record(refused, start.Add(unreachableAfter))
	first := p.unreachable()
	if first == nil || !errors.Is(first, refused) || !strings.Contains(first.Error(), "cluster unreachable since 2026-12-06T12:00:00Z") {
		t.Fatalf("unreachable = %v, want the cause and since when", first)
	}
	p.record(errors.New("i/o timeout"), start.Add(3*unreachableAfter))
	if got := p.unreachable(); got.Error() != first.Error() {
		t.Errorf("the message changed while the cluster stayed down: %q, then %q", first, got)
	}
	if turns != 1 {
		t.Fatalf("turned called %d times while the cluster went down, want 1", turns)
	}
	p.record(nil, start.Add(4*unreachableAfter))
	p.record(nil, start.Add(5*unreachableAfter))
	if err := p.unreachable(); err != nil || turns != 2 || p.failing() {
		t.Fatalf("after an answer: unreachable %v, turned called %d times in all, failing %v; want nil, 2, false", err, turns, p.failing())
	}
	// A short failure after that starts counting anew.
	p.record(refused, start.Add(6*unreachableAfter))
	if err := p.unreachable(); err != nil {
		t.Errorf("unreachable at the first failure after a recovery: %v", err)
	}
}
