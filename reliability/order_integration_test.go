//go:build integration

package reliability

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// orderLog records, from watches of a destination namespace, the
// resourceVersion at which each ConfigMap and Job first appeared and at
// which each Job completed. The resourceVersions of one etcd increase
// with every write, so they order writes of different kinds, which
// timestamps (to the second) cannot.
type orderLog struct {
	mu    sync.Mutex
	added map[string]uint64 // "Kind/name": first seen
	done  map[string]uint64 // "Job/name": first seen complete
}

// watchOrder starts recording ns until the test ends.
func watchOrder(t *testing.T, ns string) *orderLog {
	t.Helper()
	o := &orderLog{added: map[string]uint64{}, done: map[string]uint64{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	started := make(chan struct{}, 2)
	watchKind := func(kind string, open func(context.Context, metav1.ListOptions) (watch.Interface, error)) {
		wg.Go(func() {
			rv, first := "", true
			for ctx.Err() == nil {
				w, err := open(ctx, metav1.ListOptions{ResourceVersion: rv})
				if err != nil {
					time.Sleep(time.Second)
					continue
				}
				if first {
					started <- struct{}{}
					first = false
				}
				for ev := range w.ResultChan() {
					if ev.Type == watch.Error {
						rv = "" // expired: start over, first sightings are kept
						break
					}
					if obj, ok := ev.Object.(interface{ GetResourceVersion() string }); ok {
						rv = obj.GetResourceVersion()
					}
					o.record(kind, ev.Object)
				}
				w.Stop()
			}
		})
	}
	watchKind("ConfigMap", func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return cluster.Client.CoreV1().ConfigMaps(ns).Watch(ctx, opts)
	})
	watchKind("Job", func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return cluster.Client.BatchV1().Jobs(ns).Watch(ctx, opts)
	})
	for range 2 {
		select {
		case <-started:
		case <-time.After(time.Minute):
			t.Fatalf("watches of %s did not start", ns)
		}
	}
	return o
}

func (o *orderLog) record(kind string, obj runtime.Object) {
	var name, rvText string
	complete := false
	switch x := obj.(type) {
	case *corev1.ConfigMap:
		name, rvText = x.Name, x.ResourceVersion
	case *batchv1.Job:
		name, rvText = x.Name, x.ResourceVersion
		for _, c := range x.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				complete = true
			}
		}
	default:
		return
	}
	rv, err := strconv.ParseUint(rvText, 10, 64)
	if err != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	key := kind + "/" + name
	if _, ok := o.added[key]; !ok {
		o.added[key] = rv
	}
	if _, ok := o.done[key]; !ok && complete {
		o.done[key] = rv
	}
}

// find returns the resourceVersion m records of the one key of prefix,
// and how many keys have it.
func find(m map[string]uint64, prefix string) (uint64, int) {
	var rv uint64
	n := 0
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			rv, n = v, n+1
		}
	}
	return rv, n
}

// running reports whether the Job of prefix exists and has not
// completed.
func (o *orderLog) running(prefix string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, created := find(o.added, "Job/"+prefix)
	_, done := find(o.done, "Job/"+prefix)
	return created == 1 && done == 0
}

// checkWaves fails the test unless the waves app's resources were written
// in its phases' and waves' order, each hook created once: the PreSync
// hook done before wave 0, wave 0 before the wave-1 hook, that hook done
// before wave 2, wave 2 before the PostSync hook.
func (o *orderLog) checkWaves(t *testing.T, app string) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	steps := []struct {
		what   string
		m      map[string]uint64
		prefix string
	}{
		{"PreSync hook done", o.done, "Job/pre-"},
		{"wave 0 applied", o.added, "ConfigMap/wave-0"},
		{"wave 1 hook created", o.added, "Job/slow-"},
		{"wave 1 hook done", o.done, "Job/slow-"},
		{"wave 2 applied", o.added, "ConfigMap/wave-2"},
		{"PostSync hook created", o.added, "Job/post-"},
	}
	var prev uint64
	prevWhat := ""
	for _, s := range steps {
		rv, n := find(s.m, s.prefix)
		if n != 1 {
			t.Errorf("%s: %d objects %s*, want 1 (%s)", app, n, s.prefix, s.what)
			return
		}
		if rv <= prev {
			t.Errorf("%s: %s at resourceVersion %d, not after %s at %d", app, s.what, rv, prevWhat, prev)
		}
		prev, prevWhat = rv, s.what
	}
}
