package eventbus

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

const benchSubscribers = 5000

// receivers subscribes n receiving goroutines with filter(i) and returns
// a function that ends them and returns what each received, plus sampled
// publish-to-receive latencies.
func receivers(b *testing.B, h *Hub, n int, filter func(i int) Filter) (subs []*Subscription, stop func() (events, lagged int, lat []time.Duration)) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	var total, totalLagged int
	var lats []time.Duration
	for i := range n {
		s := h.Subscribe(ctx, filter(i), Options{})
		subs = append(subs, s)
		wg.Go(func() {
			var got, lag int
			var mine []time.Duration
			for d := range s.Deliveries() {
				if d.Lagged {
					lag++
					continue
				}
				got++
				// Sample one delivery in 64 so the clock read does not
				// dominate.
				if got%64 == i%64 {
					mine = append(mine, time.Since(d.Event.Time))
				}
			}
			mu.Lock()
			total += got
			totalLagged += lag
			lats = append(lats, mine...)
			mu.Unlock()
		})
	}
	return subs, func() (int, int, []time.Duration) {
		cancel()
		wg.Wait()
		return total, totalLagged, lats
	}
}

func waitIdle(subs []*Subscription) {
	for _, s := range subs {
		for !s.idle() {
			runtime.Gosched()
		}
	}
}

// cpuTime is the CPU time (user and system) this process has used, which
// unlike the wall clock barely changes when other work shares the machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[int(float64(len(d)-1)*p)]
}

// BenchmarkPublish measures Publish fan-out to 5,000 subscribers. An op is
// one Publish; deliveries/s counts events that reached a receiving
// goroutine, over the time until every subscriber had taken what was
// queued for it.
func BenchmarkPublish(b *testing.B) {
	events := make([]Event, 100)
	for i := range events {
		events[i] = Event{App: types.NamespacedName{Namespace: "apps", Name: fmt.Sprint("app-", i)}, Type: HealthChanged, Health: "Healthy", Sync: "Synced", Revision: "0123456789abcdef0123456789abcdef01234567"}
	}

	// Every subscriber selects every event and receives as fast as it
	// can; Publish is called back to back, faster than 5,000 receivers on
	// two cores keep up with, so the figures include coalescing and drops.
	b.Run("all-receiving", func(b *testing.B) {
		h := NewHub()
		subs, stop := receivers(b, h, benchSubscribers, func(int) Filter { return Filter{} })
		b.ReportAllocs()
		b.ResetTimer()
		start, cpu := time.Now(), cpuTime()
		for i := range b.N {
			ev := events[i%len(events)]
			ev.Time = time.Now()
			h.Publish(ev)
		}
		waitIdle(subs)
		elapsed, cpu := time.Since(start), cpuTime()-cpu
		b.StopTimer()
		got, lagged, lat := stop()
		st := h.Stats()
		b.ReportMetric(float64(got)/elapsed.Seconds(), "deliveries/s")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(got), "cpu-ns/delivery")
		b.ReportMetric(float64(st.Dropped+st.Coalesced)/float64(b.N*benchSubscribers)*100, "%lost")
		b.ReportMetric(float64(lagged)/float64(benchSubscribers), "lagged/sub")
		b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
	})

	// Publish at a steady 100 events/s (500,000 deliveries/s), the rate
	// of a busy installation, and measure publish-to-receive latency.
	b.Run("steady-100/s", func(b *testing.B) {
		h := NewHub()
		subs, stop := receivers(b, h, benchSubscribers, func(int) Filter { return Filter{} })
		b.ReportAllocs()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		b.ResetTimer()
		cpu := cpuTime()
		for i := range b.N {
			<-tick.C
			ev := events[i%len(events)]
			ev.Time = time.Now()
			h.Publish(ev)
		}
		waitIdle(subs)
		cpu = cpuTime() - cpu
		b.StopTimer()
		got, lagged, lat := stop()
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(got), "cpu-ns/delivery")
		if want := b.N * benchSubscribers; got != want || lagged != 0 {
			b.Logf("received %d of %d events, %d lagged markers", got, want, lagged)
		}
		b.ReportMetric(float64(percentile(lat, 0.50).Microseconds()), "p50-µs")
		b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
	})

	// Each subscriber follows one app (a GraphQL application(name)
	// subscription): the name index makes Publish touch one subscriber,
	// not 5,000.
	b.Run("one-app-each", func(b *testing.B) {
		h := NewHub()
		_, stop := receivers(b, h, benchSubscribers, func(i int) Filter {
			return Filter{Apps: []types.NamespacedName{{Namespace: "apps", Name: fmt.Sprint("app-", i%len(events))}}}
		})
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			h.Publish(events[i%len(events)])
		}
		b.StopTimer()
		stop()
	})

	// No subscriber receives and every buffer is full of events of the
	// apps being published: each Publish searches 5,000 buffers and
	// replaces an event in each — the slowest path of the publisher.
	b.Run("none-receiving-coalescing", func(b *testing.B) {
		h := NewHub()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for range benchSubscribers {
			h.Subscribe(ctx, Filter{}, Options{Buffer: benchBuffer})
		}
		for i := range benchBuffer {
			h.Publish(events[i])
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			h.Publish(events[1+i%(benchBuffer-1)]) // the front is not replaced
		}
		b.StopTimer()
		if st := h.Stats(); st.Dropped != 0 {
			b.Fatalf("stats = %+v, want coalescing only", st)
		}
	})

	// No subscriber receives and every buffer is full of other apps'
	// events: each Publish drops, once lagging without a search.
	b.Run("none-receiving", func(b *testing.B) {
		h := NewHub()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for range benchSubscribers {
			h.Subscribe(ctx, Filter{}, Options{Buffer: benchBuffer})
		}
		for i := range benchBuffer {
			ev := events[0]
			ev.App.Name = fmt.Sprint("fill-", i)
			h.Publish(ev)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			h.Publish(events[i%len(events)])
		}
	})
}

// benchBuffer is the buffer of the subscribers that never receive: the
// figures in docs/benchmarks.md were taken with this size, the default
// until 2026-11-30.
const benchBuffer = 64

// BenchmarkIdleSubscriber measures the memory an idle subscription holds
// (nothing received yet, so no buffer and no goroutine).
func BenchmarkIdleSubscriber(b *testing.B) {
	h := NewHub()
	var perSub, goroutines float64
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		subs := make([]*Subscription, 0, benchSubscribers)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		g := runtime.NumGoroutine()
		for i := range benchSubscribers {
			f := Filter{}
			if i%2 == 1 {
				f.Apps = []types.NamespacedName{{Namespace: "apps", Name: fmt.Sprint("app-", i)}}
			}
			subs = append(subs, h.Subscribe(ctx, f, Options{}))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perSub = float64(after.HeapAlloc-before.HeapAlloc) / benchSubscribers
		goroutines = float64(runtime.NumGoroutine()-g) / benchSubscribers
		runtime.KeepAlive(subs)
		cancel()
		for h.Stats().Subscribers > 0 {
			runtime.Gosched()
		}
	}
	b.ReportMetric(perSub, "B/subscriber")
	b.ReportMetric(goroutines, "goroutines/subscriber")
}
