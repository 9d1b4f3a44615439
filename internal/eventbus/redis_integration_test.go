//go:build integration

package eventbus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/testenv/localredis"
)

var redisServer *localredis.Server

func TestMain(m *testing.M) { os.Exit(localredis.RunMain(m, &redisServer)) }

var channelSeq atomic.Int64

// testChannel gives each test its own channel on the shared server.
func testChannel() string { return fmt.Sprintf("graphcd:test-events:%d", channelSeq.Add(1)) }

func newClient(tb testing.TB, addr, password string) *redis.Client {
	client := redis.NewClient(&redis.Options{Addr: addr, Password: password})
	tb.Cleanup(func() { _ = client.Close() })
	return client
}

// startBus runs a Redis bus (a "replica") until the test ends and waits
// until it is subscribed.
func startBus(t *testing.T, client *redis.Client, channel string) *Redis {
	t.Helper()
	return startBusWith(t, client, channel, RedisOptions{})
}

func startBusWith(t *testing.T, client *redis.Client, channel string, opts RedisOptions) *Redis {
	t.Helper()
	bus := NewRedis(client, channel, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bus.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case <-bus.Ready():
	case err := <-done:
		t.Fatalf("Run ended before it subscribed: %v", err)
	}
	return bus
}

// next receives one delivery, failing if the subscription closed.
func next(t *testing.T, s *Subscription) *Delivery {
	t.Helper()
	d, ok := <-s.Deliveries()
	if !ok {
		t.Fatal("subscription closed")
	}
	return d
}

// Two replicas sharing one Redis both deliver an event published by a
// third process, with its origin and sequence number.
func TestRedisReplicas(t *testing.T) {
	channel := testChannel()
	a := startBus(t, newClient(t, redisServer.Addr, redisServer.Password), channel)
	b := startBus(t, newClient(t, redisServer.Addr, redisServer.Password), channel)
	publisher := startBus(t, newClient(t, redisServer.Addr, redisServer.Password), channel)

	subA := a.Subscribe(t.Context(), Filter{}, Options{})
	subB := b.Subscribe(t.Context(), Filter{Types: []EventType{HealthChanged}}, Options{})
	local := publisher.Subscribe(t.Context(), Filter{}, Options{})
	want := Event{App: app("argocd", "guestbook"), Type: HealthChanged, Health: "Degraded", Sync: "Synced", Revision: "abc",
		Time: time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC)}
	if err := publisher.Publish(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Subscription{"replica a": subA, "replica b": subB, "publisher": local} {
		d := next(t, s)
		if d.Lagged {
			t.Fatalf("%s: got a Lagged marker", name)
		}
		got := *d.Event
		if got.Origin == "" || got.Origin != publisher.origin || got.Seq != 1 {
			t.Errorf("%s: origin %q seq %d, want %q 1", name, got.Origin, got.Seq, publisher.origin)
		}
		got.Origin, got.Seq = "", 0
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("%s: event (-got +want):\n%s", name, diff)
		}
	}
	// The publisher's own event came back through Redis too, and was not
	// delivered twice.
	for publisher.Stats().Received == 0 {
		runtime.Gosched()
	}
	if got := drain(t, local); len(got) != 0 {
		t.Errorf("publisher delivered again: %v", got)
	}
}

// Events a publisher lost before the bus (Lost) reach every replica as a
// Lagged marker before the publisher's next event, and its own
// subscribers at once.
func TestRedisLost(t *testing.T) {
	channel := testChannel()
	replica := startBus(t, newClient(t, redisServer.Addr, redisServer.Password), channel)
	publisher := startBus(t, newClient(t, redisServer.Addr, redisServer.Password), channel)
	remote := replica.Subscribe(t.Context(), Filter{}, Options{})
	local := publisher.Subscribe(t.Context(), Filter{}, Options{})
	ev := Event{App: app("argocd", "guestbook"), Type: SyncStatusChanged, Sync: "OutOfSync", Revision: "abc"}
	if err := publisher.Publish(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	if d := next(t, remote); d.Lagged {
		t.Fatal("the replica's first delivery is a Lagged marker")
	}
	if d := next(t, local); d.Lagged {
		t.Fatal("the publisher's first delivery is a Lagged marker")
	}
	publisher.Lost()
	if d := next(t, local); !d.Lagged {
		t.Errorf("the publisher's subscriber got %+v after Lost, want a Lagged marker", d.Event)
	}
	if err := publisher.Publish(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		if d := next(t, remote); d.Lagged != want {
			t.Errorf("replica delivery %d: lagged %v, want %v", i+1, d.Lagged, want)
		}
	}
}

// Through Redis, a slow subscriber gets a Lagged marker while a fast one on
// the same replica receives every event, in order.
func TestRedisSlowAndFastSubscribers(t *testing.T) {
	const n = 500
	channel := testChannel()
	replica := startBus(t, newClient(t, redisServer.Addr, redisServer.Password), channel)
	publisher := startBus(t, newClient(t, redisServer.Addr, redisServer.Password), channel)

	fast := replica.Subscribe(t.Context(), Filter{}, Options{Buffer: n})
	slow := replica.Subscribe(t.Context(), Filter{}, Options{Buffer: 8})
	got := make(chan []string, 1)
	go func() {
		var revs []string
		for len(revs) < n {
			d := <-fast.Deliveries()
			revs = append(revs, describe(d))
		}
		got <- revs
	}()
	var want []string
	for i := range n {
		rev := fmt.Sprint(i)
		want = append(want, rev)
		// Distinct apps, so nothing can be coalesced.
		if err := publisher.Publish(t.Context(), ev("ns", "app"+rev, ReconcileCompleted, rev)); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(<-got, want); diff != "" {
		t.Errorf("fast subscriber (-got +want):\n%s", diff)
	}
	// The fast subscriber may get the last event before the hub has
	// offered it to the slow one.
	for replica.Stats().Published < n {
		runtime.Gosched()
	}
	slowGot := drain(t, slow)
	if len(slowGot) == 0 || slowGot[len(slowGot)-1] != "LAGGED" {
		t.Errorf("slow subscriber got %v, want a few events then LAGGED", slowGot)
	}
	if st := replica.Stats(); st.Dropped == 0 || st.Lagged != 1 {
		t.Errorf("replica stats = %+v, want drops and one Lagged marker", st)
	}
}

// Garbage on the channel is counted and dropped; valid events still flow,
// and a hole in a publisher's sequence marks subscribers lagged.
func TestRedisHostileMessages(t *testing.T) {
	channel := testChannel()
	replica := startBus(t, newClient(t, redisServer.Addr, redisServer.Password), channel)
	raw := newClient(t, redisServer.Addr, redisServer.Password)
	sub := replica.Subscribe(t.Context(), Filter{}, Options{})

	publish := func(payload string) {
		t.Helper()
		if err := raw.Publish(t.Context(), channel, payload).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{
		"not json",
		`{"n":"a","t":"Explode"}`,
		`{"n":"a","t":"HealthChanged","m":"` + strings.Repeat("x", 1<<20) + `"}`,
		`{"n":` + strings.Repeat("[", 100000),
		"",
	} {
		publish(p)
	}
	publish(`{"n":"a","t":"HealthChanged","r":"1","o":"other","q":1}`)
	publish(`{"n":"a","t":"HealthChanged","r":"1 again","o":"other","q":1}`) // a replay
	publish(`{"n":"a","t":"HealthChanged","r":"3","o":"other","q":3}`)       // 2 is missing
	var got []string
	for len(got) < 3 {
		got = append(got, describe(next(t, sub)))
	}
	if diff := cmp.Diff(got, []string{"1", "LAGGED", "3"}); diff != "" {
		t.Errorf("deliveries (-got +want):\n%s", diff)
	}
	if st := replica.Stats(); st.Invalid != 6 || st.Gaps != 1 || st.Received != 8 {
		t.Errorf("stats = %+v, want 8 received, 6 invalid, 1 gap", st)
	}
}

// A quiet subscription is pinged, answers, and is kept: no reconnect, no
// Lagged marker, events still arrive.
func TestRedisIdlePing(t *testing.T) {
	channel := testChannel()
	replica := startBusWith(t, newClient(t, redisServer.Addr, redisServer.Password), channel, RedisOptions{Idle: 10 * time.Millisecond})
	publisher := startBus(t, newClient(t, redisServer.Addr, redisServer.Password), channel)
	sub := replica.Subscribe(t.Context(), Filter{}, Options{})
	time.Sleep(200 * time.Millisecond) // a dozen idle periods
	if err := publisher.Publish(t.Context(), ev("ns", "a", HealthChanged, "1")); err != nil {
		t.Fatal(err)
	}
	if got := describe(next(t, sub)); got != "1" {
		t.Errorf("got %s, want 1", got)
	}
	if st := replica.Stats(); st.Gaps != 0 {
		t.Errorf("stats = %+v, want no gap", st)
	}
}

// ownRedis runs a redis-server on a port it keeps, so the test can stop
// and start it again at the same address.
type ownRedis struct {
	bin, dir, conf, addr string
	proc                 *localcluster.Process
}

func startOwnRedis(t *testing.T) *ownRedis {
	t.Helper()
	bin, err := localredis.Binary(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	r := &ownRedis{bin: bin, dir: t.TempDir(), addr: fmt.Sprintf("127.0.0.1:%d", port)}
	r.conf = filepath.Join(r.dir, "redis.conf")
	cfg := fmt.Sprintf("bind 127.0.0.1\nport %d\nrequirepass pw\nsave \"\"\nappendonly no\ndir %s\n", port, r.dir)
	if err := os.WriteFile(r.conf, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.proc.Stop(5 * time.Second) })
	r.start(t)
	return r
}

func (r *ownRedis) start(t *testing.T) {
	t.Helper()
	var err error
	r.proc, err = localcluster.StartProcess("redis-server", filepath.Join(r.dir, "redis.log"), r.bin, r.conf)
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(&redis.Options{Addr: r.addr, Password: "pw", MaxRetries: -1})
	defer func() { _ = client.Close() }()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := r.proc.WaitFor(ctx, func(ctx context.Context) error { return client.Ping(ctx).Err() }); err != nil {
		t.Fatal(err)
	}
}

// After Redis restarts, a replica subscribes again by itself, marks its
// subscribers lagged (events published meanwhile are lost), and receives
// new events.
func TestRedisRestart(t *testing.T) {
	srv := startOwnRedis(t)
	channel := testChannel()
	replica := startBus(t, newClient(t, srv.addr, "pw"), channel)
	publisher := startBus(t, newClient(t, srv.addr, "pw"), channel)
	sub := replica.Subscribe(t.Context(), Filter{}, Options{})

	if err := publisher.Publish(t.Context(), ev("ns", "a", SyncStatusChanged, "before")); err != nil {
		t.Fatal(err)
	}
	if got := describe(next(t, sub)); got != "before" {
		t.Fatalf("got %s, want before", got)
	}

	srv.proc.Stop(5 * time.Second)
	srv.start(t)

	if got := describe(next(t, sub)); got != "LAGGED" {
		t.Fatalf("after the restart got %s, want LAGGED", got)
	}
	// The publisher's connection may fail once more before its pool
	// replaces it; publish until an event gets through.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		err := publisher.Publish(t.Context(), ev("ns", "a", SyncStatusChanged, fmt.Sprint("after-", i)))
		if err != nil && !errors.Is(err, ErrBackedUp) {
			t.Fatal(err)
		}
		select {
		case d, ok := <-sub.Deliveries():
			if !ok {
				t.Fatal("subscription closed")
			}
			if !d.Lagged && strings.HasPrefix(d.Event.Revision, "after-") {
				if st := replica.Stats(); st.Gaps == 0 {
					t.Errorf("stats = %+v, want a gap counted for the reconnect", st)
				}
				return
			}
		case <-tick.C:
		}
	}
}

// BenchmarkRedisFanOut measures events through Redis: a publisher process
// sends, another replica with 5,000 receiving subscribers decodes and fans
// them out. An op is one event.
func BenchmarkRedisFanOut(b *testing.B) {
	events := make([]Event, 100)
	for i := range events {
		events[i] = Event{App: app("apps", fmt.Sprint("app-", i)), Type: HealthChanged, Health: "Healthy", Sync: "Synced", Revision: "0123456789abcdef0123456789abcdef01234567"}
	}
	run := func(b *testing.B, pace time.Duration) {
		channel := testChannel()
		replicaClient := redis.NewClient(&redis.Options{Addr: redisServer.Addr, Password: redisServer.Password})
		publisherClient := redis.NewClient(&redis.Options{Addr: redisServer.Addr, Password: redisServer.Password})
		defer func() { _ = replicaClient.Close(); _ = publisherClient.Close() }()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		replica := NewRedis(replicaClient, channel, RedisOptions{})
		publisher := NewRedis(publisherClient, channel, RedisOptions{Queue: b.N})
		go func() { _ = replica.Run(ctx) }()
		go func() { _ = publisher.Run(ctx) }()
		<-replica.Ready()
		<-publisher.Ready()
		subs, stop := receivers(b, replica.hub, benchSubscribers, func(int) Filter { return Filter{} })
		var tick <-chan time.Time
		if pace > 0 {
			ticker := time.NewTicker(pace)
			defer ticker.Stop()
			tick = ticker.C
		}

		b.ReportAllocs()
		b.ResetTimer()
		start, cpu := time.Now(), cpuTime()
		for i := range b.N {
			if tick != nil {
				<-tick
			}
			ev := events[i%len(events)]
			ev.Time = time.Now()
			if err := publisher.Publish(ctx, ev); err != nil {
				b.Fatal(err)
			}
		}
		for replica.Stats().Published < uint64(b.N) {
			runtime.Gosched()
		}
		waitIdle(subs)
		elapsed, cpu := time.Since(start), cpuTime()-cpu
		b.StopTimer()
		got, lagged, lat := stop()
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
		b.ReportMetric(float64(got)/elapsed.Seconds(), "deliveries/s")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(got), "cpu-ns/delivery")
		b.ReportMetric(float64(lagged)/benchSubscribers, "lagged/sub")
		b.ReportMetric(float64(percentile(lat, 0.50).Microseconds()), "p50-µs")
		b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
	}
	// Back to back: the replica's fan-out is the limit; latency is queueing.
	b.Run("saturated", func(b *testing.B) { run(b, 0) })
	// 100 events/s, 500,000 deliveries/s.
	b.Run("steady-100/s", func(b *testing.B) { run(b, 10*time.Millisecond) })
}
