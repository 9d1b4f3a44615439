package eventbus

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

func app(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

// ev makes an event whose Revision names it, so a test can list what it got.
func ev(ns, name string, t EventType, rev string) Event {
	return Event{App: app(ns, name), Type: t, Revision: rev}
}

// idle reports whether nothing waits for s's subscriber: no queued
// delivery and no pump holding one.
func (s *Subscription) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n == 0 && !s.pumping
}

// drain receives until nothing more waits for the subscriber and returns
// what it got: an event's Revision, or "LAGGED" for a marker. Everything
// published before drain was called is received: Publish queues before it
// returns.
func drain(t *testing.T, s *Subscription) []string {
	t.Helper()
	var got []string
	for {
		select {
		case d, ok := <-s.Deliveries():
			if !ok {
				t.Fatal("subscription closed while draining")
			}
			got = append(got, describe(d))
		default:
			if s.idle() {
				return got
			}
			runtime.Gosched()
		}
	}
}

func describe(d *Delivery) string {
	if d.Lagged {
		if d.Event != nil {
			return "LAGGED with an event"
		}
		return "LAGGED"
	}
	return d.Event.Revision
}

func TestFilter(t *testing.T) {
	events := []Event{
		ev("ns1", "a", SyncStatusChanged, "1"),
		ev("ns1", "a", HealthChanged, "2"),
		ev("ns2", "a", SyncStatusChanged, "3"),
		ev("ns1", "b", ReconcileCompleted, "4"),
		ev("ns2", "c", OperationPhaseChanged, "5"),
		ev("ns2", "c", ResourceChanged, "6"),
	}
	for _, tc := range []struct {
		name string
		f    Filter
		want []string
	}{
		{"all", Filter{}, []string{"1", "2", "3", "4", "5", "6"}},
		{"app in one namespace", Filter{Apps: []types.NamespacedName{app("ns1", "a")}}, []string{"1", "2"}},
		{"app in any namespace", Filter{Apps: []types.NamespacedName{app("", "a")}}, []string{"1", "2", "3"}},
		{"two apps", Filter{Apps: []types.NamespacedName{app("ns1", "b"), app("ns2", "c")}}, []string{"4", "5", "6"}},
		{"same name twice", Filter{Apps: []types.NamespacedName{app("ns1", "a"), app("ns2", "a")}}, []string{"1", "2", "3"}},
		{"namespace", Filter{Namespaces: []string{"ns2"}}, []string{"3", "5", "6"}},
		{"types", Filter{Types: []EventType{SyncStatusChanged, ResourceChanged}}, []string{"1", "3", "6"}},
		{"app and type", Filter{Apps: []types.NamespacedName{app("", "a")}, Types: []EventType{HealthChanged}}, []string{"2"}},
		{"app and namespace", Filter{Apps: []types.NamespacedName{app("", "a")}, Namespaces: []string{"ns2"}}, []string{"3"}},
		{"unknown app", Filter{Apps: []types.NamespacedName{app("", "zz")}}, nil},
		{"unknown type selects nothing", Filter{Types: []EventType{"Bogus"}}, nil},
		{"allow hides apps", Filter{Allow: func(a types.NamespacedName) bool { return a.Namespace == "ns1" }}, []string{"1", "2", "4"}},
		{"allow and app", Filter{Apps: []types.NamespacedName{app("", "a")}, Allow: func(a types.NamespacedName) bool { return a.Namespace == "ns2" }}, []string{"3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHub()
			s := h.Subscribe(t.Context(), tc.f, Options{Buffer: 100})
			for _, e := range events {
				h.Publish(e)
			}
			if diff := cmp.Diff(drain(t, s), tc.want); diff != "" {
				t.Errorf("deliveries (-got +want):\n%s", diff)
			}
		})
	}
}

// A subscriber that is not receiving gets its waiting events coalesced:
// the newer event of an app and type replaces the older one and moves to
// the back, so the later state arrives later.
func TestCoalesce(t *testing.T) {
	h := NewHub()
	s := h.Subscribe(t.Context(), Filter{}, Options{Buffer: 4})
	for _, e := range []Event{
		ev("ns", "a", SyncStatusChanged, "a-sync-1"),
		ev("ns", "b", SyncStatusChanged, "b-sync-1"),
		ev("ns", "a", HealthChanged, "a-health-1"),
		ev("ns", "b", HealthChanged, "b-health-1"), // full
		ev("ns", "b", SyncStatusChanged, "b-sync-2"),
		ev("ns", "a", HealthChanged, "a-health-2"),
		ev("ns", "b", SyncStatusChanged, "b-sync-3"),
	} {
		h.Publish(e)
	}
	// a-sync-1 is at the front, being handed over: it is never replaced.
	want := []string{"a-sync-1", "b-health-1", "a-health-2", "b-sync-3"}
	if diff := cmp.Diff(drain(t, s), want); diff != "" {
		t.Errorf("deliveries (-got +want):\n%s", diff)
	}
	st := h.Stats()
	if st.Coalesced != 3 || st.Dropped != 0 || st.Delivered != 4 {
		t.Errorf("stats = %+v, want 3 coalesced, 0 dropped, 4 delivered", st)
	}
}

// A buffer starts small and grows to Options.Buffer while deliveries wait,
// in order, across bursts; only past Options.Buffer does it lag.
func TestBufferGrows(t *testing.T) {
	h := NewHub()
	const size = 5*initialRing + 3
	s := h.Subscribe(t.Context(), Filter{}, Options{Buffer: size})
	for burst := range 2 {
		var want []string
		for i := range size {
			rev := fmt.Sprint(burst, "-", i)
			h.Publish(ev("ns", fmt.Sprint("app-", i), SyncStatusChanged, rev))
			want = append(want, rev)
		}
		if diff := cmp.Diff(drain(t, s), want); diff != "" {
			t.Fatalf("burst %d (-got +want):\n%s", burst, diff)
		}
	}
	for i := range size + 1 {
		h.Publish(ev("ns", fmt.Sprint("app-", i), HealthChanged, fmt.Sprint("over-", i)))
	}
	got := drain(t, s)
	if len(got) != size+1 || got[size] != "LAGGED" || got[size-1] != fmt.Sprint("over-", size-1) {
		t.Errorf("past the buffer got %d deliveries ending %q, want %d and a LAGGED marker", len(got), got[max(0, len(got)-2):], size+1)
	}
	if st := h.Stats(); st.Dropped != 1 {
		t.Errorf("stats = %+v, want 1 dropped", st)
	}
}

// When coalescing finds nothing to replace, the event is dropped and a
// single Lagged marker takes the first free slot; events after it flow
// again.
func TestLagged(t *testing.T) {
	h := NewHub()
	s := h.Subscribe(t.Context(), Filter{}, Options{Buffer: 2})
	for _, r := range []string{"1", "2", "3", "4"} {
		h.Publish(ev("ns", "app"+r, SyncStatusChanged, r))
	}
	// 3 and 4 were dropped. Taking 1 frees a slot, which goes to the
	// marker at once; 5 finds the buffer full again, and a drop while the
	// marker waits needs no second one.
	if got := describe(<-s.Deliveries()); got != "1" {
		t.Fatalf("first delivery = %s, want 1", got)
	}
	h.Publish(ev("ns", "app5", SyncStatusChanged, "5"))
	got := drain(t, s)
	h.Publish(ev("ns", "app6", SyncStatusChanged, "6"))
	got = append(got, drain(t, s)...)
	if diff := cmp.Diff(got, []string{"2", "LAGGED", "6"}); diff != "" {
		t.Errorf("deliveries (-got +want):\n%s", diff)
	}
	st := h.Stats()
	if st.Lagged != 1 || st.Dropped != 3 || st.Delivered != 3 {
		t.Errorf("stats = %+v, want 1 lagged marker, 3 dropped, 3 delivered", st)
	}
}

// A subscriber that keeps up with a slower stream sees everything; one
// that falls behind still sees, for every app and type, the newest event
// or a Lagged marker after it, and never an app's events out of order.
func TestOrderPerApp(t *testing.T) {
	const apps, perApp = 20, 300
	h := NewHub()
	fast := h.Subscribe(t.Context(), Filter{}, Options{Buffer: apps * perApp})
	slow := h.Subscribe(t.Context(), Filter{}, Options{Buffer: 8})
	release := make(chan struct{})

	type result struct {
		last   map[types.NamespacedName]uint64
		count  int
		lagged bool
		err    error
	}
	receive := func(s *Subscription, wait chan struct{}, out chan<- result) {
		if wait != nil {
			<-wait
		}
		r := result{last: map[types.NamespacedName]uint64{}}
		for d := range s.Deliveries() {
			if d.Lagged {
				r.lagged = true
				continue
			}
			if d.Event.Seq <= r.last[d.Event.App] && r.err == nil {
				r.err = fmt.Errorf("%s: seq %d after %d", d.Event.App, d.Event.Seq, r.last[d.Event.App])
			}
			r.last[d.Event.App] = d.Event.Seq
			r.count++
		}
		out <- r
	}
	fastOut, slowOut := make(chan result, 1), make(chan result, 1)
	go receive(fast, nil, fastOut)
	go receive(slow, release, slowOut)

	for i := 1; i <= perApp; i++ {
		for a := range apps {
			h.Publish(Event{App: app("ns", fmt.Sprint("app", a)), Type: SyncStatusChanged, Seq: uint64(i)})
		}
	}
	close(release)
	for !fast.idle() || !slow.idle() {
		runtime.Gosched()
	}
	fast.Close()
	slow.Close()

	f, sl := <-fastOut, <-slowOut
	if f.err != nil || sl.err != nil {
		t.Fatalf("out of order: fast %v, slow %v", f.err, sl.err)
	}
	if f.count != apps*perApp || f.lagged {
		t.Errorf("fast subscriber got %d events (lagged %v), want all %d", f.count, f.lagged, apps*perApp)
	}
	if sl.count >= apps*perApp {
		t.Errorf("slow subscriber got all %d events; the test did not make it fall behind", sl.count)
	}
	for a := range apps {
		if n := app("ns", fmt.Sprint("app", a)); sl.last[n] != perApp && !sl.lagged {
			t.Errorf("slow subscriber: last event of %s is %d and no Lagged marker", n, sl.last[n])
		}
	}
}

// Lag reaches every subscriber once, whatever its filter, even one listed
// under several names.
func TestLag(t *testing.T) {
	h := NewHub()
	subs := []*Subscription{
		h.Subscribe(t.Context(), Filter{}, Options{}),
		h.Subscribe(t.Context(), Filter{Apps: []types.NamespacedName{app("", "a"), app("", "b")}}, Options{}),
		h.Subscribe(t.Context(), Filter{Types: []EventType{HealthChanged}}, Options{}),
	}
	h.Lag()
	for i, s := range subs {
		if diff := cmp.Diff(drain(t, s), []string{"LAGGED"}); diff != "" {
			t.Errorf("subscriber %d (-got +want):\n%s", i, diff)
		}
	}
}

// Ending the context or calling Close closes the channel, removes the
// subscription and leaves no goroutine behind, even with deliveries
// waiting.
func TestUnsubscribe(t *testing.T) {
	before := runtime.NumGoroutine()
	h := NewHub()
	ctx, cancel := context.WithCancel(t.Context())
	var subs []*Subscription
	for i := range 50 {
		f := Filter{}
		if i%2 == 1 {
			f.Apps = []types.NamespacedName{app("ns", "a")}
		}
		subs = append(subs, h.Subscribe(ctx, f, Options{Buffer: 4}))
	}
	closed := h.Subscribe(t.Context(), Filter{}, Options{})
	for range 10 {
		h.Publish(ev("ns", "a", SyncStatusChanged, "x")) // queued, pumps running
	}
	closed.Close()
	closed.Close()
	cancel()
	for _, s := range append(subs, closed) {
		for range s.Deliveries() {
		}
	}
	if n := h.Stats().Subscribers; n != 0 {
		t.Errorf("%d subscribers left", n)
	}
	h.Publish(ev("ns", "a", SyncStatusChanged, "after")) // must not panic on a closed channel
	waitGoroutines(t, before)
}

// waitGoroutines waits for goroutines that are on their way out (a pump
// that just closed its channel) and fails if more than before remain.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	n := runtime.NumGoroutine()
	for i := 0; i < 1000 && n > before; i++ {
		time.Sleep(10 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	if n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines left, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// Publishing, subscribing and cancelling at once is safe (run with -race).
func TestConcurrent(t *testing.T) {
	before := runtime.NumGoroutine()
	h := NewHub()
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				h.Publish(ev("ns", fmt.Sprint("app", i%7), eventTypes[(i+p)%len(eventTypes)], "r"))
			}
		})
	}
	for c := range 8 {
		wg.Go(func() {
			for i := range 100 {
				ctx, cancel := context.WithCancel(t.Context())
				f := Filter{}
				if (c+i)%2 == 0 {
					f.Apps = []types.NamespacedName{app("", fmt.Sprint("app", i%7))}
				}
				s := h.Subscribe(ctx, f, Options{Buffer: 1 + i%3})
				for range i % 5 {
					select {
					case <-s.Deliveries():
					default:
					}
				}
				if i%3 == 0 {
					h.Lag()
				}
				cancel()
				for range s.Deliveries() {
				}
			}
		})
	}
	wg.Wait()
	if n := h.Stats().Subscribers; n != 0 {
		t.Errorf("%d subscribers left", n)
	}
	waitGoroutines(t, before)
}
