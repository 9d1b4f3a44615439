package revisioncache

import (
	"errors"
	"testing"
	"time"
)

func TestExpiresAndInvalidates(t *testing.T) {
	c := New(time.Hour)
	k := Key{Repo: "https://h/r", Creds: "c", Revision: "main"}
	c.Put(k, "sha-a", 0)
	if got, ok := c.Get(k); !ok || got != "sha-a" {
		t.Fatalf("Get = %q, %v", got, ok)
	}
	if _, ok := c.Get(Key{Repo: "https://h/r", Creds: "other", Revision: "main"}); ok {
		t.Error("cache answered for other credentials")
	}
	c.Invalidate("https://h/r")
	if _, ok := c.Get(k); ok {
		t.Error("entry survived Invalidate")
	}
	short := New(time.Nanosecond)
	short.Put(k, "sha-a", 0)
	time.Sleep(time.Millisecond)
	if _, ok := short.Get(k); ok {
		t.Error("entry survived its TTL")
	}
	off := New(-1)
	off.Put(k, "sha-a", 0)
	if _, ok := off.Get(k); ok {
		t.Error("a disabled cache answered")
	}
}

// A lookup that began before an invalidation does not cache what it found.
func TestPutAfterInvalidateIsDropped(t *testing.T) {
	c := New(time.Hour)
	k := Key{Repo: "https://h/r", Creds: "c", Revision: "main"}
	before := c.Generation(k.Repo)
	c.Invalidate(k.Repo)
	after := c.Generation(k.Repo)
	if before == after {
		t.Fatalf("Invalidate kept generation %d", before)
	}
	if FlightKey(k, before) == FlightKey(k, after) {
		t.Error("lookups before and after an invalidation share a request")
	}
	c.Put(k, "old", before)
	if got, ok := c.Get(k); ok {
		t.Fatalf("Get = %q: a lookup from before the invalidation was cached", got)
	}
	c.Put(k, "new", after)
	if got, ok := c.Get(k); !ok || got != "new" {
		t.Fatalf("Get = %q, %v, want new", got, ok)
	}
	other := Key{Repo: "https://h/other", Creds: "c", Revision: "main"}
	c.Put(other, "x", c.Generation(other.Repo))
	if _, ok := c.Get(other); !ok {
		t.Error("another repository's lookup was dropped")
	}
}

// A failure is answered for a short while, never as a value, and an
// invalidation forgets it.
func TestFailure(t *testing.T) {
	c := New(time.Hour)
	k := Key{Repo: "https://h/r", Creds: "c", Revision: "main"}
	refused := errors.New("connection refused")
	c.PutFailure(k, refused, c.Generation(k.Repo))
	if err := c.Failure(k); !errors.Is(err, refused) {
		t.Fatalf("Failure = %v, want the stored error", err)
	}
	if v, ok := c.Get(k); ok {
		t.Fatalf("Get = %q for a failed resolution", v)
	}
	c.Invalidate(k.Repo)
	if err := c.Failure(k); err != nil {
		t.Fatalf("Failure = %v after Invalidate", err)
	}
	short := New(time.Nanosecond)
	short.PutFailure(k, refused, 0)
	time.Sleep(time.Millisecond)
	if err := short.Failure(k); err != nil {
		t.Errorf("a failure outlived the cache's TTL: %v", err)
	}
	c.Put(k, "sha", c.Generation(k.Repo))
	if err := c.Failure(k); err != nil {
		t.Errorf("Failure = %v for a resolved revision", err)
	}
}
