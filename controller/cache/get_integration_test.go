//go:build integration

package cache

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// countingTransport counts GET requests whose path ends with suffix.
type countingTransport struct {
	next   http.RoundTripper
	suffix string
	n      *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, c.suffix) {
		c.n.Add(1)
	}
	return c.next.RoundTrip(r)
}

func TestGetCachesUnchangedObjects(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	app := "get-" + ns
	var gets atomic.Int64
	cfg := rest.CopyConfig(cluster.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return countingTransport{next: rt, suffix: "/namespaces/" + ns + "/configmaps/cfg", n: &gets}
	})
	c := startCache(t, Options{Config: cfg})

	cm := createConfigMap(t, ns, "cfg", map[string]string{DefaultInstanceLabelKey: app}, nil)
	key := ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "cfg"}
	eventually(t, "configmap indexed", func() bool { return c.seen(key, cm.ResourceVersion) })

	first, err := c.Get(ctx, key)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	// managedFieldsManagers diff rules need the live managed fields.
	if mf := first.GetManagedFields(); len(mf) == 0 {
		t.Error("managedFields dropped")
	}
	if diff := cmp.Diff(first.Object["data"], map[string]any{"key": "value"}); diff != "" {
		t.Errorf("data (-got +want):\n%s", diff)
	}
	// Callers may modify what they get without touching the cache.
	first.SetLabels(nil)
	second, err := c.Get(ctx, key)
	if err != nil {
		t.Fatalf("second Get: %v", err)
	}
	if got := gets.Load(); got != 1 {
		t.Errorf("API GETs after two Gets of an unchanged object = %d, want 1", got)
	}
	if second.GetLabels()[DefaultInstanceLabelKey] != app {
		t.Errorf("cached object was modified through an earlier result: labels %v", second.GetLabels())
	}

	// A change invalidates the cached copy.
	cm.Data["key"] = "new"
	updated, err := cluster.Client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	eventually(t, "update indexed", func() bool { return c.seen(key, updated.ResourceVersion) })
	third, err := c.Get(ctx, key)
	if err != nil {
		t.Fatalf("third Get: %v", err)
	}
	if got := gets.Load(); got != 2 {
		t.Errorf("API GETs after a change = %d, want 2", got)
	}
	if diff := cmp.Diff(third.Object["data"], map[string]any{"key": "new"}); diff != "" {
		t.Errorf("data after update (-got +want):\n%s", diff)
	}
}
