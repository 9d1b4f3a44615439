package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// notifyServices is how many webhook services the apps of --notify are
// spread over (app i subscribes to hook-<i mod notifyServices>), as teams
// post to channels of their own: graphcd's rate limit is per service
// (10/s, bursts of 20).
const notifyServices = 10

// notifyBench is --notify: every app subscribes to on-sync-succeeded; a
// webhook receiver on loopback records when each notification arrives,
// and a watch when each app's sync was seen to succeed (the event).
type notifyBench struct {
	srv *http.Server
	url string

	mu        sync.Mutex
	arrived   map[string][]time.Time // app -> requests
	succeeded map[string]time.Time   // app -> first seen Succeeded
}

func startNotifyBench() (*notifyBench, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &notifyBench{url: "http://" + l.Addr().String(), arrived: map[string][]time.Time{}, succeeded: map[string]time.Time{}}
	b.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		app := strings.TrimPrefix(r.URL.Path, "/")
		b.mu.Lock()
		b.arrived[app] = append(b.arrived[app], now)
		b.mu.Unlock()
	})}
	go func() { _ = b.srv.Serve(l) }()
	return b, nil
}

func (b *notifyBench) stop() { _ = b.srv.Close() }

// configure writes graphcd-notifications-cm: the webhook services and the
// template of the built-in on-sync-succeeded trigger, posting the app's
// name to each.
func (b *notifyBench) configure(ctx context.Context, c *localcluster.Cluster) error {
	data := map[string]string{}
	var hooks strings.Builder
	for i := range notifyServices {
		name := fmt.Sprintf("hook-%d", i)
		data["service.webhook."+name] = "url: " + b.url + "\nretryMax: -1\n"
		fmt.Fprintf(&hooks, "  %s:\n    method: POST\n    path: /{{.app.metadata.name}}\n    body: '{{.app.status.operationState.syncResult.revision}}'\n", name)
	}
	data["template.app-sync-succeeded"] = "message: '{{.app.metadata.name}} synced'\nwebhook:\n" + hooks.String()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "graphcd-notifications-cm", Namespace: "graphcd"}, Data: data}
	_, err := c.Client.CoreV1().ConfigMaps("graphcd").Create(ctx, cm, metav1.CreateOptions{})
	return err
}

// subscribe adds app i's subscription to its metadata.
func subscribe(app map[string]any, i int) {
	meta := app["metadata"].(map[string]any)
	meta["annotations"] = map[string]any{fmt.Sprintf("notifications.argoproj.io/subscribe.on-sync-succeeded.hook-%d", i%notifyServices): ""}
}

// watchSucceeded records when each app's operation was first seen
// Succeeded, until ctx ends.
func (b *notifyBench) watchSucceeded(ctx context.Context, c *localcluster.Cluster) error {
	dyn := dynamic.NewForConfigOrDie(c.Config)
	observe := func(a *unstructured.Unstructured) {
		if phase, _, _ := unstructuredString(a.Object, "status", "operationState", "phase"); phase != "Succeeded" {
			return
		}
		now := time.Now()
		b.mu.Lock()
		if _, ok := b.succeeded[a.GetName()]; !ok {
			b.succeeded[a.GetName()] = now
		}
		b.mu.Unlock()
	}
	list, err := dyn.Resource(appsGVR).Namespace("graphcd").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range list.Items {
		observe(&list.Items[i])
	}
	rv := list.GetResourceVersion()
	for ctx.Err() == nil {
		w, err := dyn.Resource(appsGVR).Namespace("graphcd").Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		if err != nil {
			return err
		}
		for ev := range w.ResultChan() {
			if a, ok := ev.Object.(*unstructured.Unstructured); ok {
				rv = a.GetResourceVersion()
				observe(a)
			}
		}
		w.Stop()
	}
	return nil
}

// notifyResult is what --notify measured: when the last app's
// notification arrived, the latencies from the event to the delivery, and
// the duplicates.
type notifyResult struct {
	last             time.Time
	p50, p99, worst  time.Duration
	duplicates, apps int
}

// waitDelivered waits until every app's notification arrived, then a
// little longer for duplicates.
func (b *notifyBench) waitDelivered(ctx context.Context, apps int) (notifyResult, error) {
	if apps == 0 {
		return notifyResult{}, errors.New("no apps")
	}
	for {
		b.mu.Lock()
		n := len(b.arrived)
		b.mu.Unlock()
		if n >= apps {
			break
		}
		select {
		case <-ctx.Done():
			return notifyResult{}, fmt.Errorf("%d of %d notifications delivered: %w", n, apps, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	time.Sleep(5 * time.Second)
	b.mu.Lock()
	defer b.mu.Unlock()
	var latencies []time.Duration
	r := notifyResult{apps: len(b.arrived)}
	for app, times := range b.arrived {
		r.duplicates += len(times) - 1
		if times[0].After(r.last) {
			r.last = times[0]
		}
		seen, ok := b.succeeded[app]
		if !ok {
			return notifyResult{}, errors.New("the sync of " + app + " was never seen to succeed")
		}
		// The receiver may hear of it before the harness's watch does:
		// such a latency is below zero.
		latencies = append(latencies, times[0].Sub(seen))
	}
	slices.Sort(latencies)
	at := func(q float64) time.Duration { return latencies[min(len(latencies)-1, int(q*float64(len(latencies))))] }
	r.p50, r.p99, r.worst = at(0.50), at(0.99), latencies[len(latencies)-1]
	return r, nil
}

// report waits for every notification and prints the table row of
// --notify: all Synced+Healthy, all delivered, latency p50/p99/max,
// duplicates, graphcd's CPU to all synced and to all delivered (the last
// includes the 5 s waited for duplicates), and its peak RSS.
func (b *notifyBench) report(ctx context.Context, apps, pid int, start time.Time, all time.Duration, cpuStart, cpuAll float64) error {
	r, err := b.waitDelivered(ctx, apps)
	if err != nil {
		return err
	}
	cpuDelivered, err := cpuSeconds(pid)
	if err != nil {
		return err
	}
	peak, err := peakRSS(pid)
	if err != nil {
		return err
	}
	fmt.Printf("| %d | %.1f s | %.1f s | %d ms | %d ms | %d ms | %d | %.1f CPU-s | %.1f CPU-s | %d MiB |\n",
		apps, all.Seconds(), r.last.Sub(start).Seconds(), r.p50.Milliseconds(), r.p99.Milliseconds(), r.worst.Milliseconds(), r.duplicates,
		cpuAll, cpuDelivered-cpuStart, peak>>20)
	return nil
}
