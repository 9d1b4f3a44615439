//go:build integration

package inproc_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/testenv/localredis"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/cache"
	"github.com/graphcd/graphcd/reposerver/inproc"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// BenchmarkGenerateManifestsCacheHit measures a refresh that finds its
// render in the cache: revision (from the revision cache), key, read,
// verify, decode of 50 objects. p50/p99 per backend.
func BenchmarkGenerateManifestsCacheHit(b *testing.B) {
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("app/cm-%02d.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  labels: {app: demo}\ndata:\n  key: %q\n", i, bytes.Repeat([]byte("v"), 200))
	}
	dir, _ := reposervertest.CommitFiles(b, files)
	srv, err := localredis.Start(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Stop() })
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: srv.Password})
	b.Cleanup(func() { _ = rc.Close() })

	for _, bc := range []struct {
		name    string
		backend cache.Backend
	}{
		{"memory", cache.NewMemory(64 << 20)},
		{"redis", cache.NewRedis(rc, "bench|")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c, err := cache.New(bc.backend, cache.Options{Secret: bytes.Repeat([]byte("s"), 32)})
			if err != nil {
				b.Fatal(err)
			}
			l, err := inproc.New(inproc.Options{WorkDir: b.TempDir(), Cache: c, AllowFileURLs: true})
			if err != nil {
				b.Fatal(err)
			}
			req := reposerver.ManifestRequest{Repo: reposerver.Repository{URL: "file://" + dir}, Source: v1alpha1.ApplicationSource{Path: "app"}, AppName: "demo"}
			if _, err := l.GenerateManifests(b.Context(), req); err != nil {
				b.Fatal(err)
			}
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				res, err := l.GenerateManifests(b.Context(), req)
				if err != nil || !res.Cached || len(res.Manifests) != 50 {
					b.Fatalf("not a cache hit: %v", err)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
