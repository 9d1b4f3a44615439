//go:build integration

package resolvers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/redis/go-redis/v9"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver"
	"github.com/graphcd/graphcd/internal/eventbus"
	"github.com/graphcd/graphcd/resolvers"
)

// wsClient is a graphql-transport-ws client.
type wsClient struct {
	t    *testing.T
	conn *websocket.Conn
}

// wsMessage is a graphql-transport-ws message.
type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// dialWS connects to the API at baseURL and completes connection_init.
// readBuffer, when positive, shrinks the socket's receive buffer (a slow
// client whose backlog reaches the server soon).
func dialWS(t *testing.T, baseURL string, readBuffer int) *wsClient {
	t.Helper()
	c := openWS(t, baseURL, readBuffer)
	c.send(wsMessage{Type: "connection_init"})
	if m := c.read(); m.Type != "connection_ack" {
		t.Fatalf("after connection_init: %s %s", m.Type, m.Payload)
	}
	return c
}

// openWS opens a socket to the API at baseURL without connection_init.
func openWS(t *testing.T, baseURL string, readBuffer int) *wsClient {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 10 * time.Second}
	if readBuffer > 0 {
		d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(readBuffer)
			}
			return c, err
		}
	}
	conn, resp, err := d.DialContext(t.Context(), "ws"+strings.TrimPrefix(baseURL, "http")+"/api/graphql", nil)
	if resp != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return &wsClient{t: t, conn: conn}
}

func (c *wsClient) send(m wsMessage) {
	c.t.Helper()
	if err := c.conn.WriteJSON(m); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// read returns the next message that is not a ping.
func (c *wsClient) read() wsMessage {
	c.t.Helper()
	for {
		_ = c.conn.SetReadDeadline(time.Now().Add(time.Minute)) // a hang fails; no timing is asserted
		var m wsMessage
		if err := c.conn.ReadJSON(&m); err != nil {
			c.t.Fatalf("read: %v", err)
		}
		switch m.Type {
		case "ping":
			c.send(wsMessage{Type: "pong"})
		case "pong", "ka":
		default:
			return m
		}
	}
}

func (c *wsClient) subscribe(id, query string, vars map[string]any) {
	c.t.Helper()
	payload, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(wsMessage{ID: id, Type: "subscribe", Payload: payload})
}

// next reads the next "next" message of subscription id and decodes its
// data into out.
func (c *wsClient) next(id string, out any) {
	c.t.Helper()
	m := c.read()
	if m.Type != "next" || m.ID != id {
		c.t.Fatalf("got %s for %q: %s, want next for %q", m.Type, m.ID, m.Payload, id)
	}
	var p struct {
		Data   json.RawMessage
		Errors []any
	}
	if err := json.Unmarshal(m.Payload, &p); err != nil || len(p.Errors) > 0 {
		c.t.Fatalf("payload %s (%v)", m.Payload, err)
	}
	if err := json.Unmarshal(p.Data, out); err != nil {
		c.t.Fatal(err)
	}
}

const eventsSubscription = `subscription($f: ApplicationEventFilter) {
  applicationEvents(filter: $f) { lagged type name namespace health message application { name status { health { status } } } }
}`

type eventResult struct {
	ApplicationEvents struct {
		Lagged                        bool
		Type, Name, Namespace, Health *string
		Message                       *string
		Application                   *struct {
			Name   string
			Status struct{ Health struct{ Status string } }
		}
	}
}

// waitHealth waits until the API shows the app's health as health.
func waitHealth(t *testing.T, ns, name, health string) {
	t.Helper()
	eventually(t, "health "+health, func() error {
		var got struct {
			Application *struct {
				Status struct{ Health struct{ Status string } }
			}
		}
		data(t, `query($ns: String, $n: String!) { application(name: $n, namespace: $ns) { status { health { status } } } }`,
			map[string]any{"ns": ns, "n": name}, &got)
		if got.Application == nil || got.Application.Status.Health.Status != health {
			return fmt.Errorf("app %s/%s: %+v", ns, name, got.Application)
		}
		return nil
	})
}

// waitSubscribed publishes probe events on bus until client receives one,
// so that the subscription is known to be registered.
func waitSubscribed(t *testing.T, publish func(eventbus.Event), c *wsClient, id string, probe eventbus.Event) {
	t.Helper()
	got := make(chan struct{})
	go func() {
		for {
			select {
			case <-got:
				return
			case <-time.After(20 * time.Millisecond):
				publish(probe)
			}
		}
	}()
	var ev eventResult
	c.next(id, &ev)
	close(got)
}

func TestApplicationEventsSubscription(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	createApps(t, ns, appSpec{name: "web", health: v1alpha1.HealthStatusHealthy, sync: v1alpha1.SyncStatusCodeSynced})
	waitHealth(t, ns, "web", "Healthy")
	c := dialWS(t, apiURL, 0)
	c.subscribe("1", eventsSubscription, map[string]any{"f": map[string]any{"names": []string{"web"}, "namespaces": []string{ns}, "types": []string{"HealthChanged"}}})
	publish := func(ev eventbus.Event) { _ = events.Publish(t.Context(), ev) }
	key := types.NamespacedName{Namespace: ns, Name: "web"}
	waitSubscribed(t, publish, c, "1", eventbus.Event{App: key, Type: eventbus.HealthChanged, Health: "Progressing", Message: "probe"})

	// Events the filter does not select are not delivered; the next one is.
	publish(eventbus.Event{App: types.NamespacedName{Namespace: ns, Name: "other"}, Type: eventbus.HealthChanged, Health: "Degraded"})
	publish(eventbus.Event{App: key, Type: eventbus.SyncStatusChanged, Sync: "OutOfSync"})
	publish(eventbus.Event{App: key, Type: eventbus.HealthChanged, Health: "Healthy", Message: "last", Time: time.Now()})
	for {
		var ev eventResult
		c.next("1", &ev)
		e := ev.ApplicationEvents
		if *e.Message == "probe" {
			continue // a late probe
		}
		if e.Lagged || *e.Type != "HealthChanged" || *e.Name != "web" || *e.Namespace != ns || *e.Health != "Healthy" || *e.Message != "last" {
			t.Fatalf("event = %+v", e)
		}
		if e.Application == nil || e.Application.Name != "web" || e.Application.Status.Health.Status != "Healthy" {
			t.Errorf("event's application = %+v", e.Application)
		}
		break
	}
	c.send(wsMessage{ID: "1", Type: "complete"})
}

func TestApplicationSubscription(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	createApps(t, ns, appSpec{name: "api", health: v1alpha1.HealthStatusProgressing, sync: v1alpha1.SyncStatusCodeSynced})
	waitHealth(t, ns, "api", "Progressing")
	c := dialWS(t, apiURL, 0)
	c.subscribe("a", `subscription($ns: String) { application(name: "api", namespace: $ns) { name status { health { status } } } }`, map[string]any{"ns": ns})
	type appResult struct {
		Application *struct {
			Name   string
			Status struct{ Health struct{ Status string } }
		}
	}
	var got appResult
	c.next("a", &got)
	if got.Application == nil || got.Application.Status.Health.Status != "Progressing" {
		t.Fatalf("first = %+v", got.Application)
	}
	app := getApp(t, ns, "api")
	app.Status.Health.Status = v1alpha1.HealthStatusDegraded
	if err := kube.Status().Update(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	for got.Application.Status.Health.Status != "Degraded" {
		c.next("a", &got)
	}
	if err := kube.Delete(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	for got.Application != nil {
		c.next("a", &got)
	}
}

// TestReplicasShareEvents runs two API replicas on one Redis: an event
// published by a third process reaches the subscribers of both.
func TestReplicasShareEvents(t *testing.T) {
	t.Parallel()
	channel := fmt.Sprintf("graphcd:test:%d", time.Now().UnixNano())
	newBus := func() *eventbus.Redis {
		client := redis.NewClient(&redis.Options{Addr: redisSrv.Addr, Password: redisSrv.Password})
		t.Cleanup(func() { _ = client.Close() })
		bus := eventbus.NewRedis(client, channel, eventbus.RedisOptions{})
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		go func() { _ = bus.Run(ctx) }()
		<-bus.Ready()
		return bus
	}
	publisher := newBus() // the controller
	var clients []*wsClient
	for range 2 {
		ts, err := newAPI(newBus())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ts.Close)
		c := dialWS(t, ts.URL, 0)
		c.subscribe("r", eventsSubscription, map[string]any{"f": map[string]any{"namespaces": []string{"replicas"}}})
		clients = append(clients, c)
	}
	key := types.NamespacedName{Namespace: "replicas", Name: "shared"}
	publish := func(ev eventbus.Event) { _ = publisher.Publish(t.Context(), ev) }
	for _, c := range clients {
		waitSubscribed(t, publish, c, "r", eventbus.Event{App: key, Type: eventbus.ReconcileCompleted, Message: "probe"})
	}
	publish(eventbus.Event{App: key, Type: eventbus.HealthChanged, Health: "Degraded", Message: "the one"})
	for i, c := range clients {
		for {
			var ev eventResult
			c.next("r", &ev)
			if m := ev.ApplicationEvents.Message; m != nil && *m == "the one" {
				if *ev.ApplicationEvents.Health != "Degraded" {
					t.Errorf("replica %d: %+v", i, ev.ApplicationEvents)
				}
				break
			}
		}
	}
}

// TestSlowSubscriberLagged checks that a client that stops reading gets a
// lagged marker once it reads again, while a client that keeps up receives
// every event, and publishing never waits for either.
func TestSlowSubscriberLagged(t *testing.T) {
	t.Parallel()
	bus := eventbus.NewMemory()
	// The slow client reads nothing until the fast one has read
	// everything, which takes longer than the default write timeout on a
	// loaded machine: here the server waits, so only the lag is tested
	// (TestStalledSubscriberDisconnected tests the timeout).
	ts := serveAPIWith(t, bus, func(o *apiserver.Options) { o.WebsocketWriteTimeout = time.Hour })
	const q = `subscription { applicationEvents(filter: {namespaces: ["lag"]}) { lagged name message } }`
	fast, slow := dialWS(t, ts.URL, 0), dialWS(t, ts.URL, 64<<10)
	fast.subscribe("f", q, nil)
	slow.subscribe("s", q, nil)
	publish := func(ev eventbus.Event) { _ = bus.Publish(t.Context(), ev) }
	probe := eventbus.Event{App: types.NamespacedName{Namespace: "lag", Name: "probe"}, Type: eventbus.ReconcileCompleted}
	waitSubscribed(t, publish, fast, "f", probe)
	waitSubscribed(t, publish, slow, "s", probe)

	type result struct {
		ApplicationEvents struct {
			Lagged  bool
			Name    *string
			Message *string
		}
	}
	// Batches of events with distinct apps (nothing to coalesce) and
	// large messages; the fast client reads each batch before the next.
	big := strings.Repeat("m", eventbus.MaxMessage-16)
	const batches, perBatch = 60, 50
	for b := range batches {
		for i := range perBatch {
			name := fmt.Sprintf("app-%d-%d", b, i)
			publish(eventbus.Event{App: types.NamespacedName{Namespace: "lag", Name: name}, Type: eventbus.ReconcileCompleted, Message: big})
		}
		for i := 0; i < perBatch; {
			var ev result
			fast.next("f", &ev)
			e := ev.ApplicationEvents
			if e.Lagged {
				t.Fatalf("the fast client lagged in batch %d", b)
			}
			if *e.Name == "probe" {
				continue
			}
			if want := fmt.Sprintf("app-%d-%d", b, i); *e.Name != want {
				t.Fatalf("fast client got %s, want %s", *e.Name, want)
			}
			i++
		}
	}
	// The slow client now reads: somewhere in its stream is a marker.
	for n := 0; ; n++ {
		var ev result
		slow.next("s", &ev)
		if ev.ApplicationEvents.Lagged {
			if n >= batches*perBatch {
				t.Errorf("marker after %d events: nothing was dropped?", n)
			}
			return
		}
		if n > batches*perBatch {
			t.Fatal("the slow client received everything without a marker")
		}
	}
}

// TestStalledSubscriberDisconnected checks that the server closes the
// socket of a client that stops reading for longer than the write timeout
// (here 1 ms), rather than leaving it open and silent: once the events
// fill the socket's buffers, the client reads what was sent and then the
// end of the connection.
func TestStalledSubscriberDisconnected(t *testing.T) {
	t.Parallel()
	bus := eventbus.NewMemory()
	ts := serveAPIWith(t, bus, func(o *apiserver.Options) { o.WebsocketWriteTimeout = time.Millisecond })
	c := dialWS(t, ts.URL, 4<<10)
	c.subscribe("s", `subscription { applicationEvents(filter: {namespaces: ["stall"]}) { name message } }`, nil)
	publish := func(ev eventbus.Event) { _ = bus.Publish(t.Context(), ev) }
	waitSubscribed(t, publish, c, "s", eventbus.Event{App: types.NamespacedName{Namespace: "stall", Name: "probe"}, Type: eventbus.ReconcileCompleted})
	// Far more than loopback's socket buffers hold.
	big := strings.Repeat("m", eventbus.MaxMessage-16)
	for i := range 5000 {
		publish(eventbus.Event{App: types.NamespacedName{Namespace: "stall", Name: fmt.Sprint("app-", i)}, Type: eventbus.ReconcileCompleted, Message: big})
	}
	for {
		_ = c.conn.SetReadDeadline(time.Now().Add(time.Minute)) // a hang fails; no timing is asserted
		var m wsMessage
		err := c.conn.ReadJSON(&m)
		if err == nil {
			continue
		}
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			t.Fatalf("the stalled socket stayed open and silent: %v", err)
		}
		return // closed by the server
	}
}

// TestSubscriptionsPerSocketLimited opens more subscriptions on one socket
// than allowed: the ones past the limit get an error, the others work.
func TestSubscriptionsPerSocketLimited(t *testing.T) {
	t.Parallel()
	c := dialWS(t, apiURL, 0)
	const q = `subscription { applicationEvents(filter: {namespaces: ["limit"]}) { lagged } }`
	for i := range resolvers.DefaultMaxSubscriptions + 20 {
		c.subscribe(fmt.Sprint(i), q, nil)
	}
	for refused := 0; refused < 20; {
		m := c.read()
		switch {
		case m.Type == "complete":
		case strings.Contains(string(m.Payload), "too many subscriptions") && strings.Contains(string(m.Payload), "BAD_USER_INPUT"):
			refused++
		default:
			t.Fatalf("got %s %s, want an error for a subscription past the limit", m.Type, m.Payload)
		}
	}
}

// TestSilentPeerDisconnected checks the graphql-transport-ws ping: a
// client that stops answering pings is disconnected, so a peer gone without
// a close does not hold its subscriptions for ever, while one that answers
// (read does) keeps its subscription all the while.
func TestSilentPeerDisconnected(t *testing.T) {
	t.Parallel()
	// A client must answer within two intervals: long enough that the
	// client that answers does so on a loaded machine.
	const interval = 500 * time.Millisecond
	bus := eventbus.NewMemory()
	ts := serveAPIWith(t, bus, func(o *apiserver.Options) { o.WebsocketPingInterval = interval })
	alive := dialWS(t, ts.URL, 0)
	silent := dialWS(t, ts.URL, 0)
	for _, c := range []*wsClient{alive, silent} {
		c.subscribe("s", `subscription { applicationEvents(filter: {namespaces: ["ping"]}) { name } }`, nil)
	}
	publish := func(name string) {
		_ = bus.Publish(t.Context(), eventbus.Event{App: types.NamespacedName{Namespace: "ping", Name: name}, Type: eventbus.ReconcileCompleted})
	}

	// The silent client reads and never answers.
	type ending struct {
		pings int
		err   error
	}
	ended := make(chan ending, 1)
	go func() {
		pings := 0
		for {
			_ = silent.conn.SetReadDeadline(time.Now().Add(time.Minute)) // a hang fails; no timing is asserted
			var m wsMessage
			err := silent.conn.ReadJSON(&m)
			if err != nil {
				ended <- ending{pings, err}
				return
			}
			if m.Type == "ping" {
				pings++
			}
		}
	}()
	// Meanwhile events flow to the client that answers.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				publish("tick")
			}
		}
	}()
	var end ending
	for end.err == nil {
		var ev struct{ ApplicationEvents struct{ Name string } }
		alive.next("s", &ev)
		select {
		case end = <-ended:
		default:
		}
	}
	if ne, ok := errors.AsType[net.Error](end.err); ok && ne.Timeout() {
		t.Fatalf("a peer that answers no ping stayed connected: %v", end.err)
	}
	if end.pings == 0 {
		t.Fatalf("the server closed the socket without pinging it: %v", end.err)
	}

	// The client that answered outlived the silent one and still gets events.
	publish("after")
	for {
		var ev struct{ ApplicationEvents struct{ Name string } }
		alive.next("s", &ev)
		if ev.ApplicationEvents.Name == "after" {
			return
		}
	}
}
