package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// waitReady polls url until it answers 200.
func waitReady(ctx context.Context, url string) error {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("graphcd never ready: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitReconciled watches the Applications (of resource gvr: graphcd's or
// Argo CD's) of namespace ns (one list, then a stream of changes: the
// harness itself stays light and sees each status the moment it is
// written) and returns when the first and when all apps were Synced and
// Healthy, counted from start. progress, if not nil, is told how many are
// after every change.
func waitReconciled(ctx context.Context, cluster *localcluster.Cluster, gvr schema.GroupVersionResource, ns string, start time.Time, apps int, progress func(n int)) (first, all time.Duration, err error) {
	return waitApps(ctx, cluster, gvr, ns, start, apps, func(a *unstructured.Unstructured) bool {
		sync, _, _ := unstructuredString(a.Object, "status", "sync", "status")
		h, _, _ := unstructuredString(a.Object, "status", "health", "status")
		return sync == "Synced" && h == "Healthy"
	}, progress)
}

// waitApps waits until apps apps of namespace ns are ready, with one list
// and a watch, and returns the time from start to the first and to the
// last; progress, when set, hears how many are ready after each change.
func waitApps(ctx context.Context, cluster *localcluster.Cluster, gvr schema.GroupVersionResource, ns string, start time.Time, apps int,
	ready func(*unstructured.Unstructured) bool, progress func(n int),
) (first, all time.Duration, err error) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config)
	done := map[string]bool{}
	n := 0
	observe := func(a *unstructured.Unstructured) {
		ok := ready(a)
		if ok != done[a.GetName()] {
			if ok {
				n++
			} else {
				n--
			}
		}
		done[a.GetName()] = ok
		if progress != nil {
			progress(n)
		}
	}
	relist := func() (string, error) {
		list, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", err
		}
		for i := range list.Items {
			observe(&list.Items[i])
		}
		return list.GetResourceVersion(), nil
	}
	rv, err := relist()
	if err != nil {
		return 0, 0, err
	}
	for {
		if n > 0 && first == 0 {
			first = time.Since(start)
		}
		if n == apps {
			return first, time.Since(start), nil
		}
		w, err := dyn.Resource(gvr).Namespace(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		if err != nil {
			return 0, 0, fmt.Errorf("watch applications: %w", err)
		}
		expired := false
		for ev := range w.ResultChan() {
			a, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				expired = ev.Type == watch.Error // rv too old, say: list again
				break
			}
			rv = a.GetResourceVersion()
			observe(a)
			if (n > 0 && first == 0) || n == apps {
				break
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			return 0, 0, fmt.Errorf("%d of %d apps ready: %w", n, apps, ctx.Err())
		}
		if expired {
			if rv, err = relist(); err != nil {
				return 0, 0, err
			}
		}
	}
}

func unstructuredString(obj map[string]any, path ...string) (string, bool, error) {
	cur := any(obj)
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[p]
	}
	s, ok := cur.(string)
	return s, ok, nil
}

// cpuSeconds reads user+system CPU time of pid from /proc, with that of
// the children it waited for: a repository server's render workers,
// which each retire after 100 renders.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(b)
	// utime, stime, cutime and cstime: fields 14 to 17 of the line.
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	var ticks float64
	for _, f := range fields[11:15] {
		v, _ := strconv.ParseFloat(f, 64)
		ticks += v
	}
	return ticks / 100, nil // clock ticks; 100 Hz on Linux
}

// clusterCPU sums the CPU seconds of the cluster's processes (etcd and
// kube-apiserver, and the rest in a full cluster).
func clusterCPU(c *localcluster.Cluster) (float64, error) {
	var sum float64
	for _, pid := range c.PIDs() {
		s, err := cpuSeconds(pid)
		if err != nil {
			return 0, err
		}
		sum += s
	}
	return sum, nil
}

// peakRSS reads VmHWM of pid, in bytes.
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM for pid %d", pid)
}
