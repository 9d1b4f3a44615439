//go:build integration

package cache

import (
	"fmt"
	"runtime"
	"testing"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/internal/settings"
)

// TestMemoryConfigMaps reports the heap the cache uses for N ConfigMaps
// spread over namespaces. It runs alone (not parallel) so the figure is not
// mixed with other tests' caches.
func TestMemoryConfigMaps(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 2000 objects")
	}
	const n, namespaces = 2000, 10
	ctx := t.Context()
	var nss []string
	for range namespaces {
		nss = append(nss, cluster.Namespace(t))
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error {
			ns := nss[i%namespaces]
			cm := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{
					Name: fmt.Sprintf("cm-%04d", i), Namespace: ns,
					Labels: map[string]string{settings.DefaultInstanceLabelKey: "mem-" + ns},
				},
				Data: map[string]string{"key": "value"},
			}
			_, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(gctx, cm, metav1.CreateOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("create configmaps: %v", err)
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c := startCache(t, Options{})
	eventually(t, "configmaps indexed", func() bool {
		total := 0
		for _, ns := range nss {
			total += len(c.Managed("mem-" + ns))
		}
		return total == n
	})
	runtime.GC()
	runtime.ReadMemStats(&after)
	c.mu.RLock()
	objects := len(c.byUID)
	c.mu.RUnlock()
	delta := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("cache of %d objects (%d ConfigMaps in %d namespaces): HeapInuse delta %d bytes (%.0f KiB), %.0f bytes/object",
		objects, n, namespaces, delta, float64(delta)/1024, float64(delta)/float64(objects))
	runtime.KeepAlive(c)
}
