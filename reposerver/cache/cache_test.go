package cache_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/graphcd/graphcd/reposerver/cache"
	"github.com/graphcd/graphcd/reposerver/cache/cachetest"
)

var secret = bytes.Repeat([]byte("k"), 32)

func TestMemoryConformance(t *testing.T) {
	cachetest.Run(t, func(t *testing.T) cache.Backend { return cache.NewMemory(64 << 20) })
}

func TestRoundTrip(t *testing.T) {
	c := newCache(t, cache.NewMemory(1<<20), nil)
	want := cache.Entry{Manifests: json.RawMessage(`[{"kind":"ConfigMap"}]`), SourceType: "Directory", Revision: "abc"}
	if err := c.Set(t.Context(), "key", want); err != nil {
		t.Fatal(err)
	}
	got, ok := c.Get(t.Context(), "key")
	if !ok || got.Revision != "abc" || string(got.Manifests) != `[{"kind":"ConfigMap"}]` {
		t.Fatalf("Get = %+v, %v; want the stored entry", got, ok)
	}
}

// A value changed in the backend, or signed with another key, is a miss
// and a warning, and is removed.
func TestTamperedEntryIsAMiss(t *testing.T) {
	ctx := t.Context()
	mem := cache.NewMemory(1 << 20)
	var logs strings.Builder
	c := newCache(t, mem, &logs)
	if err := c.Set(ctx, "key", cache.Entry{Revision: "good"}); err != nil {
		t.Fatal(err)
	}
	raw, _, _ := mem.Get(ctx, "key")
	forged := bytes.Replace(raw, []byte("good"), []byte("evil"), 1)
	if err := mem.Set(ctx, "key", forged, time.Hour); err != nil {
		t.Fatal(err)
	}
	if e, ok := c.Get(ctx, "key"); ok {
		t.Fatalf("tampered entry served: %+v", e)
	}
	if !strings.Contains(logs.String(), "failed signature check") {
		t.Errorf("no warning logged for a tampered entry; logs: %s", logs.String())
	}
	if _, ok, _ := mem.Get(ctx, "key"); ok {
		t.Error("tampered entry left in the backend")
	}

	other, err := cache.New(mem, cache.Options{Secret: bytes.Repeat([]byte("x"), 32)})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Set(ctx, "foreign", cache.Entry{Revision: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(ctx, "foreign"); ok {
		t.Error("entry signed with another secret served")
	}
	if err := mem.Set(ctx, "short", []byte("tiny"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(ctx, "short"); ok {
		t.Error("entry shorter than a signature served")
	}
}

func TestFailuresExpireSooner(t *testing.T) {
	ctx := t.Context()
	rec := &ttlRecorder{Backend: cache.NewMemory(1 << 20)}
	c, err := cache.New(rec, cache.Options{Secret: secret, TTL: time.Hour, FailureTTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Set(ctx, "ok", cache.Entry{Revision: "a"})
	_ = c.Set(ctx, "bad", cache.Entry{Error: "chart not found"})
	if rec.ttls["ok"] != time.Hour || rec.ttls["bad"] != 5*time.Second {
		t.Errorf("TTLs = %v, want ok=1h bad=5s", rec.ttls)
	}
}

func TestShortSecretRefused(t *testing.T) {
	if _, err := cache.New(cache.NewMemory(1), cache.Options{Secret: []byte("short")}); err == nil {
		t.Fatal("New accepted a 5-byte secret")
	}
}

func TestMemoryEvictsLeastRecentlyUsed(t *testing.T) {
	ctx := t.Context()
	m := cache.NewMemory(30) // room for three 1-byte keys with 9-byte values
	for _, k := range []string{"a", "b", "c"} {
		_ = m.Set(ctx, k, []byte("123456789"), time.Hour)
	}
	_, _, _ = m.Get(ctx, "a") // a is now most recent; b is least
	_ = m.Set(ctx, "d", []byte("123456789"), time.Hour)
	for k, want := range map[string]bool{"a": true, "b": false, "c": true, "d": true} {
		if _, ok, _ := m.Get(ctx, k); ok != want {
			t.Errorf("after eviction, %s present = %v, want %v", k, ok, want)
		}
	}
	if m.Size() > 30 {
		t.Errorf("Size = %d, over the 30-byte bound", m.Size())
	}
	_ = m.Set(ctx, "huge", make([]byte, 100), time.Hour)
	if _, ok, _ := m.Get(ctx, "huge"); ok {
		t.Error("a value larger than the cache was stored")
	}
}

func TestKeyOf(t *testing.T) {
	type params struct {
		Repo, Revision string
		Values         map[string]string
	}
	a, _ := cache.KeyOf(params{"r", "abc", map[string]string{"x": "1", "y": "2"}})
	b, _ := cache.KeyOf(params{"r", "abc", map[string]string{"y": "2", "x": "1"}})
	c, _ := cache.KeyOf(params{"r", "abd", map[string]string{"x": "1", "y": "2"}})
	if a != b || a == c || len(a) != 64 {
		t.Errorf("KeyOf: same params %q vs %q, other revision %q", a, b, c)
	}
}

func newCache(t testing.TB, b cache.Backend, logs *strings.Builder) *cache.Cache {
	t.Helper()
	opts := cache.Options{Secret: secret}
	if logs != nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	c, err := cache.New(b, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type ttlRecorder struct {
	cache.Backend
	ttls map[string]time.Duration
}

func (r *ttlRecorder) Set(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	if r.ttls == nil {
		r.ttls = map[string]time.Duration{}
	}
	r.ttls[key] = ttl
	return r.Backend.Set(ctx, key, v, ttl)
}

// Of one lineage (one app's renders at successive revisions) the memory
// backend keeps the KeepPerLineage stored last; other lineages and
// entries of none are not touched, and an entry gone otherwise leaves
// its lineage.
func TestMemoryKeepsTheLatestOfALineage(t *testing.T) {
	ctx := context.Background()
	m := cache.NewMemory(1 << 20)
	c := newCache(t, m, nil)
	set := func(key, lineage string) {
		t.Helper()
		if err := c.Set(ctx, key, cache.Entry{Manifests: json.RawMessage(`[]`), Revision: key, Lineage: lineage}); err != nil {
			t.Fatal(err)
		}
	}
	has := func(key string) bool {
		_, ok := c.Get(ctx, key)
		return ok
	}
	set("other-1", "other")
	set("plain", "")
	for i := range 5 {
		set(fmt.Sprintf("web-%d", i), "web")
	}
	for i, want := range []bool{false, false, true, true, true} {
		if got := has(fmt.Sprintf("web-%d", i)); got != want {
			t.Errorf("web-%d kept: %v, want %v", i, got, want)
		}
	}
	if !has("other-1") || !has("plain") {
		t.Error("entries of another lineage or of none were dropped")
	}
	// Storing a kept entry again does not count twice.
	set("web-3", "web")
	if !has("web-2") || !has("web-3") || !has("web-4") {
		t.Error("storing an entry again dropped another of its lineage")
	}
	if err := c.Delete(ctx, "web-2"); err != nil {
		t.Fatal(err)
	}
	set("web-5", "web")
	for _, key := range []string{"web-3", "web-4", "web-5"} {
		if !has(key) {
			t.Errorf("%s dropped: a deleted entry still counted in its lineage", key)
		}
	}
}
