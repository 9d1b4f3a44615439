// Package cachetest is the conformance suite every cache.Backend passes.
package cachetest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/graphcd/graphcd/reposerver/cache"
)

// Run checks the Backend contract on backends made by newBackend, one per
// subtest, each empty.
func Run(t *testing.T, newBackend func(t *testing.T) cache.Backend) {
	t.Run("MissingKey", func(t *testing.T) {
		b := newBackend(t)
		if _, ok, err := b.Get(t.Context(), "absent"); ok || err != nil {
			t.Fatalf("Get(absent) = ok %v, err %v; want a miss", ok, err)
		}
	})
	t.Run("SetGetOverwriteDelete", func(t *testing.T) {
		ctx, b := t.Context(), newBackend(t)
		value := []byte{0, 1, 2, 0xff, '\n'} // binary-safe
		mustSet(t, b, "k", value, time.Hour)
		expect(t, b, "k", value)
		mustSet(t, b, "k", []byte("second"), time.Hour)
		expect(t, b, "k", []byte("second"))
		if err := b.Delete(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := b.Get(ctx, "k"); ok {
			t.Error("Get after Delete hit; want a miss")
		}
		if err := b.Delete(ctx, "k"); err != nil {
			t.Errorf("Delete of an absent key: %v", err)
		}
	})
	t.Run("LargeValue", func(t *testing.T) {
		b := newBackend(t)
		value := bytes.Repeat([]byte("manifest"), 1<<17) // 1 MiB
		mustSet(t, b, "big", value, time.Hour)
		expect(t, b, "big", value)
	})
	t.Run("Expiry", func(t *testing.T) {
		ctx, b := t.Context(), newBackend(t)
		mustSet(t, b, "short", []byte("v"), 50*time.Millisecond)
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, ok, err := b.Get(ctx, "short"); err != nil {
				t.Fatal(err)
			} else if !ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("entry with a 50ms TTL still present after 10s")
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		ctx, b := t.Context(), newBackend(t)
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				for j := range 50 {
					k := fmt.Sprintf("k%d-%d", i, j%5)
					if err := b.Set(ctx, k, []byte(k), time.Hour); err != nil {
						t.Error(err)
						return
					}
					if got, ok, err := b.Get(ctx, k); err != nil || (ok && string(got) != k) {
						t.Errorf("Get(%s) = %q, %v, %v", k, got, ok, err)
						return
					}
				}
			})
		}
		wg.Wait()
	})
}

func mustSet(t *testing.T, b cache.Backend, key string, v []byte, ttl time.Duration) {
	t.Helper()
	if err := b.Set(context.Background(), key, v, ttl); err != nil {
		t.Fatalf("Set(%s): %v", key, err)
	}
}

func expect(t *testing.T, b cache.Backend, key string, want []byte) {
	t.Helper()
	got, ok, err := b.Get(context.Background(), key)
	if err != nil || !ok || !bytes.Equal(got, want) {
		t.Fatalf("Get(%s) = %d bytes, ok %v, err %v; want %d bytes", key, len(got), ok, err, len(want))
	}
}
