package git

import (
	"context"
	"sync"
	"testing"
)

func TestWorkingCopySharing(t *testing.T) {
	c := New(Options{WorkDir: t.TempDir()})
	wc := c.workingCopy("https://h/r")
	ctx := t.Context()

	shared, err := wc.acquire(ctx, "a", false)
	if err != nil || shared {
		t.Fatalf("first acquire shared=%v err=%v, want exclusive", shared, err)
	}
	// Same-commit callers wait for the preparation, then share.
	var wg sync.WaitGroup
	results := make(chan bool, 5)
	for range 5 {
		wg.Go(func() {
			s, err := wc.acquire(ctx, "a", false)
			if err != nil {
				t.Error(err)
			}
			results <- s
		})
	}
	wc.finishExclusive("a", false, true)
	wg.Wait()
	close(results)
	for s := range results {
		if !s {
			t.Error("same-commit caller did not share")
		}
	}
	if wc.holders != 6 {
		t.Fatalf("holders = %d, want 6", wc.holders)
	}

	// A different commit waits until everyone released.
	got := make(chan bool, 1)
	go func() {
		s, err := wc.acquire(ctx, "b", false)
		if err != nil {
			t.Error(err)
		}
		got <- s
	}()
	release := wc.releaser()
	release()
	release() // idempotent
	for range 5 {
		select {
		case <-got:
			t.Fatal("other commit acquired while holders remain")
		default:
		}
		wc.releaser()()
	}
	if s := <-got; s {
		t.Error("other commit shared instead of taking exclusive use")
	}
	wc.finishExclusive("b", false, true)
	wc.releaser()()
}

func TestWorkingCopyAcquireHonoursContext(t *testing.T) {
	c := New(Options{WorkDir: t.TempDir()})
	wc := c.workingCopy("https://h/r")
	if _, err := wc.acquire(t.Context(), "a", false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := wc.acquire(ctx, "b", false); err == nil {
		t.Fatal("acquire succeeded on a cancelled context while the copy was busy")
	}
	wc.finishExclusiveKeep()
}

// A commit checked out before is shared again once every holder has gone,
// without a new checkout, unless the caller needs submodules the earlier
// checkout skipped.
func TestWorkingCopyReusedWhenIdle(t *testing.T) {
	c := New(Options{WorkDir: t.TempDir()})
	wc := c.workingCopy("https://h/r")
	ctx := t.Context()
	if shared, err := wc.acquire(ctx, "a", false); err != nil || shared {
		t.Fatalf("first acquire shared=%v err=%v, want exclusive", shared, err)
	}
	wc.finishExclusive("a", false, true)
	wc.releaser()()

	if shared, err := wc.acquire(ctx, "a", false); err != nil || !shared {
		t.Fatalf("idle acquire of the same commit shared=%v err=%v, want shared", shared, err)
	}
	wc.releaser()()
	if shared, err := wc.acquire(ctx, "a", true); err != nil || shared {
		t.Fatalf("acquire with submodules shared=%v err=%v, want exclusive (they were not checked out)", shared, err)
	}
	wc.finishExclusive("a", true, true)
	wc.releaser()()
	if shared, err := wc.acquire(ctx, "a", false); err != nil || !shared {
		t.Fatalf("acquire without submodules after one with them shared=%v err=%v, want shared", shared, err)
	}
	wc.releaser()()
	// A failed preparation leaves the copy unknown: the next caller prepares.
	if shared, _ := wc.acquire(ctx, "b", false); shared {
		t.Fatal("different commit shared")
	}
	wc.finishExclusive("b", false, false)
	if shared, err := wc.acquire(ctx, "b", false); err != nil || shared {
		t.Fatalf("acquire after a failed checkout shared=%v err=%v, want exclusive", shared, err)
	}
	wc.finishExclusiveKeep()
}
