//go:build integration

package cache

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/graphcd/graphcd/internal/settings"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Full}, &cluster))
}

// startCache starts a cache on the shared cluster for the test's lifetime.
// Unless opts say otherwise it tracks by label, as the fixtures of this
// package mark their objects.
func startCache(t *testing.T, opts Options) *Cluster {
	t.Helper()
	if opts.Config == nil {
		opts.Config = cluster.Config
	}
	if opts.TrackingMethod == "" {
		opts.TrackingMethod = settings.TrackingLabel
	}
	c, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return c
}

// eventually polls cond until it holds, failing the test after a minute.
// Extra describes the state on failure.
func eventually(t *testing.T, what string, cond func() bool, extra ...func() string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		for _, e := range extra {
			t.Log(e())
		}
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// seen reports whether the cache has indexed key, at resourceVersion rv
// when rv is not empty.
func (c *Cluster) seen(key ResourceKey, rv string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e := c.byKey[key]
	return e != nil && (rv == "" || e.rv == rv)
}

// createConfigMap creates a ConfigMap with the given labels and annotations.
func createConfigMap(t *testing.T, ns, name string, labels, annotations map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: annotations},
		Data:       map[string]string{"key": "value"},
	}
	got, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap %s/%s: %v", ns, name, err)
	}
	return got
}

// recorder collects OnChange calls.
type recorder struct {
	mu     sync.Mutex
	events []change
}

func (r *recorder) record(app string, key ResourceKey) {
	r.mu.Lock()
	r.events = append(r.events, change{app: app, key: key})
	r.mu.Unlock()
}

// has reports whether fn matches a recorded event.
func (r *recorder) has(fn func(change) bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if fn(e) {
			return true
		}
	}
	return false
}
