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

	shared, err := wc.acquire(ctx, "a")
	if err != nil || shared {
		t.Fatalf("first acquire shared=%v err=%v, want exclusive", shared, err)
	}
	// Same-commit callers wait for the preparation, then share.
	var wg sync.WaitGroup
	results := make(chan bool, 5)
	for range 5 {
		wg.Go(func() {
			s, err := wc.acquire(ctx, "a")
			if err != nil {
				t.Error(err)
			}
			results <- s
		})
	}
	wc.finishExclusive("a", true)
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
		s, err := wc.acquire(ctx, "b")
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
	wc.finishExclusive("b", true)
	wc.releaser()()
}

func TestWorkingCopyAcquireHonoursContext(t *testing.T) {
	c := New(Options{WorkDir: t.TempDir()})
	wc := c.workingCopy("https://h/r")
	if _, err := wc.acquire(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := wc.acquire(ctx, "b"); err == nil {
		t.Fatal("acquire succeeded on a cancelled context while the copy was busy")
	}
	wc.finishExclusiveKeep()
}
