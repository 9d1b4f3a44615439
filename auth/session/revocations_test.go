package session

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// collect subscribes to r and returns a channel of the IDs fn gets.
func collect(ctx context.Context, r Revocations) <-chan string {
	ch := make(chan string, 100)
	r.Subscribe(ctx, func(id string) { ch <- id })
	return ch
}

// receive waits for the next ID from ch.
func receive(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case id := <-ch:
		return id
	case <-t.Context().Done():
		t.Fatal("test ended waiting for a revocation")
		return ""
	}
}

// revocationsConformance is the behaviour every Revocations shares; now is
// the clock the list runs on.
func revocationsConformance(t *testing.T, newList func(t *testing.T) Revocations, now func() time.Time) {
	t.Run("revoke", func(t *testing.T) {
		r := newList(t)
		if got, err := r.Revoked(t.Context(), "a"); err != nil || got {
			t.Fatalf("Revoked before Revoke = %v, %v", got, err)
		}
		if err := r.Revoke(t.Context(), "a", now().Add(time.Hour)); err != nil {
			t.Fatalf("Revoke: %v", err)
		}
		if got, err := r.Revoked(t.Context(), "a"); err != nil || !got {
			t.Errorf("Revoked(a) = %v, %v, want true", got, err)
		}
		if got, err := r.Revoked(t.Context(), "b"); err != nil || got {
			t.Errorf("Revoked(b) = %v, %v, want false", got, err)
		}
		if err := r.Revoke(t.Context(), "", now().Add(time.Hour)); err == nil {
			t.Error("Revoke of an empty id succeeded")
		}
	})
	t.Run("until in the past", func(t *testing.T) {
		r := newList(t)
		if err := r.Revoke(t.Context(), "old", now().Add(-time.Second)); err != nil {
			t.Fatalf("Revoke: %v", err)
		}
		if got, err := r.Revoked(t.Context(), "old"); err != nil || got {
			t.Errorf("Revoked = %v, %v, want false", got, err)
		}
	})
	t.Run("subscribe", func(t *testing.T) {
		r := newList(t)
		if err := r.Revoke(t.Context(), "before", now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		a, b := collect(ctx, r), collect(t.Context(), r)
		for i := range 3 {
			if err := r.Revoke(t.Context(), fmt.Sprint("id-", i), now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 3 {
			want := fmt.Sprint("id-", i)
			if got := receive(t, a); got != want {
				t.Errorf("subscriber a got %q, want %q", got, want)
			}
			if got := receive(t, b); got != want {
				t.Errorf("subscriber b got %q, want %q", got, want)
			}
		}
		cancel()
		// Revoking again is not news; a new ID is, to b only.
		if err := r.Revoke(t.Context(), "id-0", now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := r.Revoke(t.Context(), "last", now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got := receive(t, b); got != "last" {
			t.Errorf("subscriber b got %q, want last", got)
		}
		select {
		case id := <-a:
			// The goroutine may have been running fn when cancel came,
			// but never for a revocation after it.
			if id == "last" {
				t.Errorf("cancelled subscriber got %q", id)
			}
		default:
		}
	})
}

func TestMemoryRevocations(t *testing.T) {
	c := newClock()
	revocationsConformance(t, func(*testing.T) Revocations {
		m := NewMemoryRevocations()
		m.now = c.Now
		return m
	}, c.Now)
}

func TestMemoryRevocationsDropExpired(t *testing.T) {
	c := newClock()
	m := NewMemoryRevocations()
	m.now = c.Now
	ctx := t.Context()
	for i := range 1000 {
		if err := m.Revoke(ctx, fmt.Sprint(i), c.Now().Add(time.Duration(i+1)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	// Extending an entry keeps it past its first time.
	if err := m.Revoke(ctx, "0", c.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	c.Advance(500 * time.Second)
	if got, _ := m.Revoked(ctx, "10"); got {
		t.Error("entry revoked past its time")
	}
	if got, _ := m.Revoked(ctx, "0"); !got {
		t.Error("extended entry dropped")
	}
	if got, _ := m.Revoked(ctx, "999"); !got {
		t.Error("entry dropped before its time")
	}
	if err := m.Revoke(ctx, "new", c.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	// 500..999 are left (their time is after now), plus "0" and "new".
	if got, want := m.Len(), 500+2; got != want {
		t.Errorf("%d entries, want %d", got, want)
	}
}

func TestWatch(t *testing.T) {
	t.Run("revoked", func(t *testing.T) {
		f := newFixture(t)
		_, c := f.issue(t, Template{Subject: "alice"})
		_, other := f.issue(t, Template{Subject: "alice"})
		ctx, cancel := f.issuer.Watch(t.Context(), c)
		defer cancel()
		if err := f.issuer.Revoke(t.Context(), other); err != nil {
			t.Fatal(err)
		}
		if err := f.issuer.Revoke(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		<-ctx.Done()
		if err := context.Cause(ctx); !errors.Is(err, ErrRevoked) {
			t.Errorf("cause %v, want ErrRevoked", err)
		}
	})
	t.Run("revoked before", func(t *testing.T) {
		f := newFixture(t)
		_, c := f.issue(t, Template{Subject: "alice"})
		if err := f.issuer.Revoke(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := f.issuer.Watch(t.Context(), c)
		defer cancel()
		<-ctx.Done()
		if err := context.Cause(ctx); !errors.Is(err, ErrRevoked) {
			t.Errorf("cause %v, want ErrRevoked", err)
		}
	})
	t.Run("expired", func(t *testing.T) {
		f := newFixture(t)
		_, c := f.issue(t, Template{Subject: "alice", TTL: time.Hour})
		// The token's hour is over by the issuer's clock: it ends now.
		f.clock.Advance(time.Hour)
		ctx, cancel := f.issuer.Watch(t.Context(), c)
		defer cancel()
		<-ctx.Done()
		if err := context.Cause(ctx); !errors.Is(err, ErrExpired) {
			t.Errorf("cause %v, want ErrExpired", err)
		}
	})
	t.Run("alive", func(t *testing.T) {
		f := newFixture(t)
		_, c := f.issue(t, Template{Subject: "alice"})
		parent, stop := context.WithCancel(t.Context())
		ctx, cancel := f.issuer.Watch(parent, c)
		defer cancel()
		if ctx.Err() != nil {
			t.Fatalf("context of a live token ended: %v", context.Cause(ctx))
		}
		stop()
		<-ctx.Done()
		if err := context.Cause(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("cause %v, want the parent's", err)
		}
	})
}
