//go:build integration

package cache

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/graphcd/graphcd/internal/settings"
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

	cm := createConfigMap(t, ns, "cfg", map[string]string{settings.DefaultInstanceLabelKey: app}, nil)
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
	if second.GetLabels()[settings.DefaultInstanceLabelKey] != app {
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

// Lookup answers "does not exist" for a watched kind from the index, with
// no API call, and reads kinds the cache does not watch from the API
// server.
func TestLookup(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	var gets atomic.Int64
	cfg := rest.CopyConfig(cluster.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return countingTransport{next: rt, suffix: "/namespaces/" + ns + "/configmaps/absent", n: &gets}
	})
	c := startCache(t, Options{Config: cfg, Exclusions: []settings.ResourceFilter{{Kinds: []string{"Secret"}}}})

	absent, err := c.Lookup(ctx, ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "absent"})
	if err != nil || absent != nil {
		t.Fatalf("Lookup of a missing ConfigMap = %v, %v; want nil, nil", absent, err)
	}
	if got := gets.Load(); got != 0 {
		t.Errorf("API GETs for a missing object of a watched kind = %d, want 0", got)
	}
	cm := createConfigMap(t, ns, "present", nil, nil)
	key := ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "present"}
	eventually(t, "configmap indexed", func() bool { return c.seen(key, cm.ResourceVersion) })
	if obj, err := c.Lookup(ctx, key); err != nil || obj == nil || obj.GetUID() != cm.UID {
		t.Fatalf("Lookup of an existing ConfigMap = %v, %v", obj, err)
	}
	// Secrets are excluded: the cache knows nothing of them and asks.
	if _, err := cluster.Client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if obj, err := c.Lookup(ctx, ResourceKey{Kind: "Secret", Namespace: ns, Name: "s"}); err != nil || obj == nil {
		t.Fatalf("Lookup of a Secret the cache does not watch = %v, %v; want the object", obj, err)
	}
	if obj, err := c.Lookup(ctx, ResourceKey{Kind: "Secret", Namespace: ns, Name: "none"}); err != nil || obj != nil {
		t.Fatalf("Lookup of a missing Secret = %v, %v; want nil, nil", obj, err)
	}
}

// Observed says whether the cache has caught up with a write: a version
// the watch delivered or a later one, a deletion once the object is gone,
// and always for a kind the cache does not watch.
func TestObserved(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	c := startCache(t, Options{Exclusions: []settings.ResourceFilter{{Kinds: []string{"Secret"}}}})

	cm := createConfigMap(t, ns, "written", nil, nil)
	key := ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "written"}
	eventually(t, "the created version observed", func() bool { return c.Observed(key, cm.ResourceVersion) })
	if c.Observed(key, "") {
		t.Error(`Observed(key, "") of an object that exists = true, want false`)
	}
	if c.Observed(key, "18446744073709551615") {
		t.Error("Observed of a version the server has not reached = true, want false")
	}
	if !c.Observed(key, "1") {
		t.Error("Observed of an older version = false, want true")
	}
	cm.Data["key"] = "changed"
	updated, err := cluster.Client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the updated version observed", func() bool { return c.Observed(key, updated.ResourceVersion) })
	if err := cluster.Client.CoreV1().ConfigMaps(ns).Delete(ctx, "written", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deletion observed", func() bool { return c.Observed(key, "") })
	if c.Observed(key, updated.ResourceVersion) {
		t.Error("Observed of a version of a deleted object = true, want false")
	}
	if !c.Observed(ResourceKey{Kind: "Secret", Namespace: ns, Name: "s"}, "18446744073709551615") {
		t.Error("Observed of a kind the cache does not watch = false, want true")
	}
}
