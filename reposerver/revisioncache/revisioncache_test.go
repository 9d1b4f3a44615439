package revisioncache

import (
	"testing"
	"time"
)

func TestExpiresAndInvalidates(t *testing.T) {
	c := New(time.Hour)
	k := Key{Repo: "https://h/r", Creds: "c", Revision: "main"}
	c.Put(k, "sha-a")
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
	short.Put(k, "sha-a")
	time.Sleep(time.Millisecond)
	if _, ok := short.Get(k); ok {
		t.Error("entry survived its TTL")
	}
	off := New(-1)
	off.Put(k, "sha-a")
	if _, ok := off.Get(k); ok {
		t.Error("a disabled cache answered")
	}
}
