package apiserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/internal/eventbus"
	"github.com/graphcd/graphcd/resolvers"
)

// The subscription fan-out benchmark (issue 7): fanoutSubscribers
// websocket clients, each subscribed to every application event, and
// events published at a steady rate, each stamped with its publish time
// (UnixNano in Revision) so that every client measures publish->receive
// latency. The same clients also run against a raw broadcast floor: a
// websocket server on the same gorilla connections (the same Accept) that
// writes the frame the GraphQL server would write, without GraphQL or the
// event bus.
//
// The server runs in a process of its own (this test binary again, as
// TestFanoutServer), so that its memory and CPU are measured apart from
// the clients'.
//
//	go test -run '^$' -bench SubscriptionFanout -benchtime 1x -count 3 ./apiserver/
const (
	fanoutSubscribers = 5000
	// fanoutEvents is how many timed events one run publishes.
	fanoutEvents = 200
	// fanoutDialers is how many clients connect at once.
	fanoutDialers = 32
	// fanoutDrain bounds the wait for the last deliveries after the last
	// publish; what has not arrived by then is counted as lost.
	fanoutDrain = 30 * time.Second
	// fanoutQuery is the subscription every client runs; revision
	// carries the publish time.
	fanoutQuery = `subscription { applicationEvents { type name health revision } }`
	// probeRevision marks the events published until every client has
	// received one (the subscriptions are then known to be live).
	probeRevision = "probe"
	// fanoutServerEnv names the target a TestFanoutServer process serves.
	fanoutServerEnv = "GRAPHCD_FANOUT_SERVER"
	// fanoutProfileEnv, when set, is where the server process writes a
	// CPU profile of the timed part of the run.
	fanoutProfileEnv = "GRAPHCD_FANOUT_CPUPROFILE"
	// fanoutHeapProfileEnv, when set, is where the server process writes a
	// heap profile each time it reports its stats, as <path>.1, <path>.2,
	// ... (the second is idle with every client subscribed).
	fanoutHeapProfileEnv = "GRAPHCD_FANOUT_HEAPPROFILE"
)

func BenchmarkSubscriptionFanout(b *testing.B) {
	raiseOpenFiles(b, 2*fanoutSubscribers)
	// At 2 events/s each event's burst of 5,000 deliveries drains before
	// the next: p99 is then the time one burst takes.
	for _, rate := range []int{2, 10, 20} {
		for _, mode := range []string{"graphql", "raw"} {
			b.Run(fmt.Sprintf("%s/rate=%d", mode, rate), func(b *testing.B) {
				runFanout(b, mode, rate)
			})
		}
	}
	// Every client logs in as a user of its own, so no two share the
	// execution of their selection: what 5,000 different users cost.
	b.Run("graphql-unshared/rate=10", func(b *testing.B) { runFanout(b, "graphql-unshared", 10) })
}

func runFanout(b *testing.B, mode string, rate int) {
	b.Helper()
	handshake := func(*websocket.Conn, int) error { return nil }
	switch mode {
	case "graphql":
		handshake = func(c *websocket.Conn, _ int) error { return subscribeGraphQL(c, "") }
	case "graphql-unshared":
		mode = "graphql"
		handshake = func(c *websocket.Conn, i int) error { return subscribeGraphQL(c, fmt.Sprintf("user%d", i)) }
	}
	srv := startFanoutServer(b, mode)
	goroutines := runtime.NumGoroutine()
	defer waitGoroutines(goroutines)

	for range b.N {
		srvBefore, before := srv.stats(b), memInUse()
		clients := dialFanout(b, srv.url, handshake)
		probe(b, clients, srv)
		srvIdle, idle := srv.stats(b), memInUse()

		cpuBefore := cpuTime(b)
		publishTimed(b, clients, srv, rate)
		srvAfter := srv.stats(b)
		clientCPU := cpuTime(b) - cpuBefore
		serverCPU := srvAfter.CPU - srvIdle.CPU
		r := summarize(clients, srvAfter.Start)

		per := func(now, then uint64) float64 { return float64(int64(now)-int64(then)) / fanoutSubscribers }
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(r.deliveriesPerSec, "deliveries/s")
		b.ReportMetric(float64(r.p50.Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(r.p99.Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(r.max.Microseconds())/1000, "max-ms")
		b.ReportMetric(float64(r.lagged), "lagged")
		b.ReportMetric(float64(r.lost), "lost")
		b.ReportMetric(float64(srvAfter.Skipped-srvIdle.Skipped), "skipped")
		b.ReportMetric(per(srvIdle.Heap+srvIdle.Stack, srvBefore.Heap+srvBefore.Stack), "srv-B/sub")
		b.ReportMetric(per(srvIdle.Heap, srvBefore.Heap), "srv-heap-B/sub")
		b.ReportMetric(per(srvIdle.Stack, srvBefore.Stack), "srv-stack-B/sub")
		b.ReportMetric(float64(srvIdle.Goroutines-srvBefore.Goroutines)/fanoutSubscribers, "srv-goroutines/sub")
		b.ReportMetric(per(idle.heap+idle.stack, before.heap+before.stack), "client-B/sub")
		if n := fanoutEvents*fanoutSubscribers - r.lost; n > 0 {
			b.ReportMetric(float64(serverCPU.Microseconds())/float64(n), "srv-cpu-us/delivery")
			b.ReportMetric(float64(clientCPU.Microseconds())/float64(n), "client-cpu-us/delivery")
		}
	}
}

// fanoutServer is a TestFanoutServer process.
type fanoutServer struct {
	base, url string
}

// startFanoutServer runs this test binary again as a server of mode
// (graphql or raw) and stops it when b ends.
func startFanoutServer(b *testing.B, mode string) *fanoutServer {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFanoutServer$", "-test.count=1")
	cmd.Env = append(os.Environ(), fanoutServerEnv+"="+mode)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = stdin.Close() // the server process ends when its stdin does
		if err := cmd.Wait(); err != nil {
			b.Errorf("server process: %v", err)
		}
	})
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if addr, ok := strings.CutPrefix(lines.Text(), "fanout-addr "); ok {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return &fanoutServer{base: "http://" + addr, url: "ws://" + addr + "/api/graphql"}
		}
	}
	b.Fatalf("server process gave no address: %v", lines.Err())
	return nil
}

// fanoutStats is what the server process says of itself.
type fanoutStats struct {
	// Heap and Stack are the bytes in use after collections.
	Heap, Stack uint64
	Goroutines  int
	// CPU is the process's user and system time.
	CPU time.Duration
	// Skipped counts deliveries the server let go (coalesced or dropped)
	// rather than send.
	Skipped uint64
	// Start is when the last timed run began.
	Start time.Time
}

func (s *fanoutServer) stats(b *testing.B) fanoutStats {
	b.Helper()
	var st fanoutStats
	s.call(b, http.MethodGet, "/fanout/stats", &st)
	return st
}

func (s *fanoutServer) call(b *testing.B, method, path string, out any) {
	b.Helper()
	req, err := http.NewRequestWithContext(b.Context(), method, s.base+path, nil)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("%s %s: %s", method, path, resp.Status)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			b.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// TestFanoutServer is not a test: it is BenchmarkSubscriptionFanout's
// server process, and skips unless that benchmark started it. It serves
// the websocket endpoint and a small control API on a loopback port it
// prints, until its stdin ends.
func TestFanoutServer(t *testing.T) {
	var target fanoutTarget
	switch mode := os.Getenv(fanoutServerEnv); mode {
	case "":
		t.Skip("the server process of BenchmarkSubscriptionFanout")
	case "graphql":
		target = newGraphQLFanout(t)
	case "raw":
		target = newRawFanout()
	default:
		t.Fatalf("%s=%q: want graphql or raw", fanoutServerEnv, mode)
	}
	raiseOpenFiles(t, 2*fanoutSubscribers)
	var (
		mu    sync.Mutex
		start time.Time
	)
	mux := http.NewServeMux()
	mux.Handle("/api/graphql", target.handler())
	mux.HandleFunc("POST /fanout/probe", func(http.ResponseWriter, *http.Request) {
		target.publish("guestbook", probeRevision)
	})
	mux.HandleFunc("POST /fanout/run", func(w http.ResponseWriter, r *http.Request) {
		rate, err := strconv.Atoi(r.FormValue("rate"))
		if err != nil || rate <= 0 {
			http.Error(w, "bad rate", http.StatusBadRequest)
			return
		}
		if path := os.Getenv(fanoutProfileEnv); path != "" {
			stop := startCPUProfile(t, path)
			t.Cleanup(stop)
		}
		mu.Lock()
		start = time.Now()
		mu.Unlock()
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for i := range fanoutEvents {
			if i > 0 {
				<-tick.C
			}
			// Every event is of another app: a subscriber that falls
			// behind then sees drops and a lagged marker, not events
			// coalesced silently.
			target.publish(fmt.Sprintf("app-%d", i), strconv.FormatInt(time.Now().UnixNano(), 10))
		}
	})
	statsCalls := 0
	mux.HandleFunc("GET /fanout/stats", func(w http.ResponseWriter, _ *http.Request) {
		cpu := cpuTime(t)
		m := memInUse()
		if path := os.Getenv(fanoutHeapProfileEnv); path != "" {
			statsCalls++
			writeHeapProfile(t, fmt.Sprintf("%s.%d", path, statsCalls))
		}
		mu.Lock()
		st := fanoutStats{Heap: m.heap, Stack: m.stack, Goroutines: runtime.NumGoroutine(),
			CPU: cpu, Skipped: target.skipped(), Start: start}
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(st)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("fanout-addr %s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = srv.Close()
}

func startCPUProfile(t *testing.T, path string) (stop func()) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}

func writeHeapProfile(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
}

// fanoutTarget is a server the clients subscribe to.
type fanoutTarget interface {
	// handler serves the websocket endpoint.
	handler() http.Handler
	// publish sends one event of the app named app, with the given
	// revision, to every subscriber without waiting for them.
	publish(app, revision string)
	// skipped returns how many deliveries the server let go (coalesced or
	// dropped) rather than send.
	skipped() uint64
}

// fanoutClient reads one subscriber's frames.
type fanoutClient struct {
	conn *websocket.Conn
	// ready is set by the first probe received.
	ready atomic.Bool
	// received counts timed events, for the publisher's drain loop.
	received *atomic.Int64
	// Owned by the reader goroutine until done is closed.
	latencies []time.Duration
	lagged    int
	last      time.Time
	done      chan struct{}
}

var (
	revisionKey = []byte(`"revision":"`)
	laggedFrame = []byte(`"type":null`)
)

// read handles frames until the connection ends. It looks for the
// revision by hand: decoding each frame would cost the clients, which
// share the CPU with the server, more than the server's own work.
func (c *fanoutClient) read() {
	defer close(c.done)
	var buf bytes.Buffer
	for {
		_, r, err := c.conn.NextReader()
		if err != nil {
			return
		}
		buf.Reset()
		if _, err := buf.ReadFrom(r); err != nil {
			return
		}
		now := time.Now()
		frame := buf.Bytes()
		if bytes.Contains(frame, laggedFrame) {
			c.lagged++
			continue
		}
		i := bytes.Index(frame, revisionKey)
		if i < 0 {
			continue
		}
		rev := frame[i+len(revisionKey):]
		rev = rev[:max(bytes.IndexByte(rev, '"'), 0)]
		if string(rev) == probeRevision {
			c.ready.Store(true)
			continue
		}
		sent, err := strconv.ParseInt(string(rev), 10, 64)
		if err != nil {
			continue
		}
		c.latencies = append(c.latencies, now.Sub(time.Unix(0, sent)))
		c.last = now
		c.received.Add(1)
	}
}

// dialFanout connects and subscribes fanoutSubscribers clients.
func dialFanout(b *testing.B, url string, handshake func(c *websocket.Conn, i int) error) []*fanoutClient {
	b.Helper()
	received := new(atomic.Int64)
	clients := make([]*fanoutClient, fanoutSubscribers)
	d := websocket.Dialer{
		Subprotocols:     []string{"graphql-transport-ws"},
		HandshakeTimeout: 30 * time.Second,
	}
	var (
		wg    sync.WaitGroup
		next  atomic.Int64
		errMu sync.Mutex
		first error
	)
	for range fanoutDialers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(clients) {
					return
				}
				conn, resp, err := d.DialContext(b.Context(), url, nil)
				if resp != nil {
					_ = resp.Body.Close()
				}
				if err == nil {
					err = handshake(conn, i)
				}
				if err != nil {
					errMu.Lock()
					first = cmpOr(first, fmt.Errorf("client %d: %w", i, err))
					errMu.Unlock()
					return
				}
				clients[i] = &fanoutClient{conn: conn, received: received, done: make(chan struct{})}
			}
		})
	}
	wg.Wait()
	if first != nil {
		b.Fatal(first)
	}
	for _, c := range clients {
		go c.read()
	}
	return clients
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// probe publishes probe events until every client has received one.
func probe(b *testing.B, clients []*fanoutClient, srv *fanoutServer) {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		srv.call(b, http.MethodPost, "/fanout/probe", nil)
		time.Sleep(100 * time.Millisecond)
		waiting := 0
		for _, c := range clients {
			if !c.ready.Load() {
				waiting++
			}
		}
		if waiting == 0 {
			// Let the last probes arrive before anything is measured.
			time.Sleep(500 * time.Millisecond)
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d clients received no probe in a minute", waiting, len(clients))
		}
	}
}

type fanoutResult struct {
	deliveriesPerSec float64
	p50, p99, max    time.Duration
	lagged, lost     int
}

// publishTimed has the server publish fanoutEvents events at rate per
// second and waits for their deliveries: until all have arrived, none has
// for 3 s, or fanoutDrain has passed since the last publish.
func publishTimed(b *testing.B, clients []*fanoutClient, srv *fanoutServer, rate int) {
	b.Helper()
	received := clients[0].received
	received.Store(0)
	srv.call(b, http.MethodPost, fmt.Sprintf("/fanout/run?rate=%d", rate), nil)
	want := int64(fanoutEvents * len(clients))
	drainEnd := time.Now().Add(fanoutDrain)
	got, progress := received.Load(), time.Now()
	for got < want && time.Now().Before(drainEnd) && time.Since(progress) < 3*time.Second {
		time.Sleep(10 * time.Millisecond)
		if n := received.Load(); n != got {
			got, progress = n, time.Now()
		}
	}
}

// summarize closes the clients and sums up what they saw of the timed
// events published from start.
func summarize(clients []*fanoutClient, start time.Time) fanoutResult {
	for _, c := range clients {
		_ = c.conn.Close()
		<-c.done
	}
	var (
		all  []time.Duration
		last time.Time
		r    fanoutResult
	)
	for _, c := range clients {
		all = append(all, c.latencies...)
		r.lagged += c.lagged
		if c.last.After(last) {
			last = c.last
		}
	}
	r.lost = fanoutEvents*len(clients) - len(all)
	if len(all) == 0 {
		return r
	}
	slices.Sort(all)
	r.p50 = all[len(all)/2]
	r.p99 = all[len(all)*99/100]
	r.max = all[len(all)-1]
	r.deliveriesPerSec = float64(len(all)) / last.Sub(start).Seconds()
	return r
}

type memUse struct{ heap, stack uint64 }

// memInUse returns the heap and stack memory in use once collections no
// longer shrink it: each collection halves at most the stacks of idle
// goroutines that use less than a quarter of theirs, and a server that
// stays up runs many.
func memInUse() memUse {
	var m runtime.MemStats
	last := memUse{heap: math.MaxUint64, stack: math.MaxUint64}
	for range 10 {
		runtime.GC()
		runtime.ReadMemStats(&m)
		now := memUse{heap: m.HeapInuse, stack: m.StackInuse}
		if now.heap+now.stack >= last.heap+last.stack {
			return now
		}
		last = now
	}
	return last
}

// cpuTime returns the user and system CPU time the process has used: on
// a shared machine, CPU per delivery says more than wall-clock rates.
func cpuTime(tb testing.TB) time.Duration {
	tb.Helper()
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// waitGoroutines waits a little for the goroutines of a finished run to
// end, so the next run's baseline does not count them.
func waitGoroutines(n int) {
	for range 200 {
		if runtime.NumGoroutine() <= n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// raiseOpenFiles lifts the soft limit on open files to at least n (both
// ends of every connection live in this process).
func raiseOpenFiles(tb testing.TB, n uint64) {
	tb.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		tb.Fatalf("getrlimit: %v", err)
	}
	if lim.Cur >= n {
		return
	}
	lim.Cur = min(max(n, lim.Cur), lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur < n {
		tb.Skipf("need %d open files, the limit is %d (%v)", n, lim.Cur, err)
	}
}

// graphQLFanout is the real server with an in-memory event bus.
type graphQLFanout struct {
	srv *Server
	bus *eventbus.Memory
}

func newGraphQLFanout(t *testing.T) *graphQLFanout {
	t.Helper()
	bus := eventbus.NewMemory()
	srv, err := New(Options{API: resolvers.Config{Events: bus}, Authenticator: fanoutUsers{}})
	if err != nil {
		t.Fatal(err)
	}
	return &graphQLFanout{srv: srv, bus: bus}
}

func (g *graphQLFanout) handler() http.Handler { return g.srv.Handler() }

// fanoutUsers takes any token as the name of a user (no RBAC is set up):
// clients that log in as different users do not share executions.
type fanoutUsers struct{}

func (fanoutUsers) Authenticate(ctx context.Context, token string) (context.Context, error) {
	return auth.NewContext(ctx, auth.Principal{Subject: token}), nil
}

func (fanoutUsers) Bind(ctx context.Context) context.Context { return ctx }

// subscribeGraphQL opens a graphql-transport-ws session on c, as the
// user named user (anonymous if ""), and subscribes to fanoutQuery.
func subscribeGraphQL(c *websocket.Conn, user string) error {
	init := `{"type":"connection_init"}`
	if user != "" {
		init = fmt.Sprintf(`{"type":"connection_init","payload":{"token":%q}}`, user)
	}
	if err := c.WriteMessage(websocket.TextMessage, []byte(init)); err != nil {
		return err
	}
	_, msg, err := c.ReadMessage()
	if err != nil {
		return err
	}
	if !bytes.Contains(msg, []byte(`"connection_ack"`)) {
		return fmt.Errorf("want connection_ack, got %s", msg)
	}
	sub := fmt.Sprintf(`{"id":"1","type":"subscribe","payload":{"query":%q}}`, fanoutQuery)
	return c.WriteMessage(websocket.TextMessage, []byte(sub))
}

func (g *graphQLFanout) publish(app, revision string) {
	_ = g.bus.Publish(context.Background(), fanoutEvent(app, revision))
}

func (g *graphQLFanout) skipped() uint64 {
	st := g.bus.Stats()
	return st.Coalesced + st.Dropped
}

func fanoutEvent(app, revision string) eventbus.Event {
	return eventbus.Event{
		App:      types.NamespacedName{Namespace: "graphcd", Name: app},
		Type:     eventbus.HealthChanged,
		Sync:     "Synced",
		Health:   "Healthy",
		Revision: revision,
	}
}

// rawFanout is the floor: the same websocket connections (gorillaWebsocket
// accepts them), one reading goroutine each, and a broadcast of one
// prepared frame per event, split over as many writers as there are CPUs.
type rawFanout struct {
	ws gorillaWebsocket

	mu    sync.Mutex
	conns []*gorillaConn
}

func newRawFanout() *rawFanout {
	return &rawFanout{ws: newGorillaWebsocket(nil, DefaultWebsocketWriteTimeout)}
}

func (r *rawFanout) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		wc, err := r.ws.Accept(w, req, transport.WebsocketAcceptOptions{
			ResponseHeader: http.Header{},
			Subprotocols:   []string{"graphql-transport-ws"},
		})
		if err != nil {
			return
		}
		c := wc.(*gorillaConn)
		r.mu.Lock()
		r.conns = append(r.conns, c)
		r.mu.Unlock()
		defer func() {
			r.mu.Lock()
			r.conns = slices.DeleteFunc(r.conns, func(o *gorillaConn) bool { return o == c })
			r.mu.Unlock()
			_ = c.Close()
		}()
		for {
			if _, _, err := c.NextReader(); err != nil {
				return
			}
		}
	})
}

// publish writes the frame the GraphQL server sends for the event.
func (r *rawFanout) publish(app, revision string) {
	ev := fanoutEvent(app, revision)
	frame := fmt.Sprintf(`{"payload":{"data":{"applicationEvents":{"type":%q,"name":%q,"health":%q,"revision":%q}}},"id":"1","type":"next"}`+"\n",
		ev.Type, ev.App.Name, ev.Health, ev.Revision)
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, []byte(frame))
	if err != nil {
		panic(err)
	}
	r.mu.Lock()
	conns := slices.Clone(r.conns)
	r.mu.Unlock()
	writers := runtime.GOMAXPROCS(0)
	per := (len(conns) + writers - 1) / writers
	for chunk := range slices.Chunk(conns, max(per, 1)) {
		go func() {
			for _, c := range chunk {
				c.mu.Lock()
				_ = c.conn.SetWriteDeadline(time.Now().Add(DefaultWebsocketWriteTimeout))
				_ = c.conn.WritePreparedMessage(pm)
				c.mu.Unlock()
			}
		}()
	}
}

func (r *rawFanout) skipped() uint64 { return 0 }
