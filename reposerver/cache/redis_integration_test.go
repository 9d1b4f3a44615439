//go:build integration

package cache_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/graphcd/graphcd/internal/testenv/localredis"
	"github.com/graphcd/graphcd/reposerver/cache"
	"github.com/graphcd/graphcd/reposerver/cache/cachetest"
)

var redisServer *localredis.Server

func TestMain(m *testing.M) { os.Exit(localredis.RunMain(m, &redisServer)) }

var prefixSeq atomic.Int64

// newRedisBackend gives each test its own key prefix on the shared server.
func newRedisBackend(tb testing.TB) *cache.Redis {
	client := redis.NewClient(&redis.Options{Addr: redisServer.Addr, Password: redisServer.Password})
	tb.Cleanup(func() { _ = client.Close() })
	return cache.NewRedis(client, fmt.Sprintf("test%d|", prefixSeq.Add(1)))
}

func TestRedisConformance(t *testing.T) {
	cachetest.Run(t, func(t *testing.T) cache.Backend { return newRedisBackend(t) })
}

// A signed entry written by one replica is read by another through Redis.
func TestRedisSharedBetweenCaches(t *testing.T) {
	backend := newRedisBackend(t)
	a := newCache(t, backend, nil)
	b := newCache(t, backend, nil)
	if err := a.Set(t.Context(), "k", cache.Entry{Revision: "abc"}); err != nil {
		t.Fatal(err)
	}
	if e, ok := b.Get(t.Context(), "k"); !ok || e.Revision != "abc" {
		t.Fatalf("second cache Get = %+v, %v", e, ok)
	}
}

// BenchmarkGetHit measures a cache hit (read, verify, decode) of a
// 40-object render, reporting p50 and p99 latency per backend.
func BenchmarkGetHit(b *testing.B) {
	entry := cache.Entry{Revision: strings.Repeat("a", 40), SourceType: "Helm"}
	var docs []string
	for i := range 40 {
		doc := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d","namespace":"default","labels":{"app":"demo"}},"data":{"key":%q}}`, i, strings.Repeat("v", 400))
		docs = append(docs, doc)
	}
	entry.Manifests = json.RawMessage("[" + strings.Join(docs, ",") + "]")
	for _, bc := range []struct {
		name    string
		backend func() cache.Backend
	}{
		{"memory", func() cache.Backend { return cache.NewMemory(64 << 20) }},
		{"redis", func() cache.Backend { return newRedisBackend(b) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := newCache(b, bc.backend(), nil)
			if err := c.Set(b.Context(), "k", entry); err != nil {
				b.Fatal(err)
			}
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, ok := c.Get(b.Context(), "k"); !ok {
					b.Fatal("miss")
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
