package apiserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gorilla/websocket"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/internal/eventbus"
	"github.com/graphcd/graphcd/resolvers"
)

// Subscribers who ask the same thing share one execution per event; each
// still gets every event, and a subscriber who asks something else gets
// its own.
func TestSharedSubscriptions(t *testing.T) {
	t.Parallel()
	bus := eventbus.NewMemory()
	ts, _ := newTestServer(t, Options{API: resolvers.Config{Build: testBuild, Events: bus}})
	same := `subscription { applicationEvents { type name revision } }`
	other := `subscription { applicationEvents { name health } }`
	queries := []string{same, same, same, other}
	conns := make([]*websocket.Conn, len(queries))
	for i, q := range queries {
		conns[i] = subscribe(t, ts.URL, q)
	}
	deadline := time.Now().Add(time.Minute) // a hang fails, not the timing
	for bus.Stats().Subscribers < len(queries) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d subscriptions started", bus.Stats().Subscribers, len(queries))
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, rev := range []string{"r1", "r2"} {
		_ = bus.Publish(t.Context(), eventbus.Event{
			App: types.NamespacedName{Namespace: "graphcd", Name: "web"}, Type: eventbus.HealthChanged,
			Health: "Degraded", Revision: rev,
		})
	}
	want := map[string][]string{
		same:  {`{"applicationEvents":{"type":"HealthChanged","name":"web","revision":"r1"}}`, `{"applicationEvents":{"type":"HealthChanged","name":"web","revision":"r2"}}`},
		other: {`{"applicationEvents":{"name":"web","health":"Degraded"}}`, `{"applicationEvents":{"name":"web","health":"Degraded"}}`},
	}
	for i, c := range conns {
		for j, w := range want[queries[i]] {
			if got := nextData(t, c); got != w {
				t.Errorf("subscriber %d, event %d: %s, want %s", i, j, got, w)
			}
		}
	}
	_, metrics, _ := get(t, ts.URL+"/metrics")
	for _, m := range []string{
		"graphcd_subscription_event_responses_total 8",
		"graphcd_subscription_event_executions_total 4", // 2 events × (3 shared + 1 alone)
	} {
		if !strings.Contains(metrics, m+"\n") {
			t.Errorf("metrics lack %q", m)
		}
	}
}

// subscribe opens a socket at baseURL and subscribes to q as "1".
func subscribe(t *testing.T, baseURL, q string) *websocket.Conn {
	t.Helper()
	c, status := dialGraphQL(t, baseURL, "")
	if c == nil {
		t.Fatalf("dial: HTTP %d", status)
	}
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	sub, _ := json.Marshal(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": q}})
	for _, m := range [][]byte{[]byte(`{"type":"connection_init"}`), sub} {
		if err := c.WriteMessage(websocket.TextMessage, m); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// nextData returns the data of the next "next" message on c.
func nextData(t *testing.T, c *websocket.Conn) string {
	t.Helper()
	for {
		var m struct {
			Type    string
			Payload struct {
				Data   json.RawMessage
				Errors []any
			}
		}
		if err := c.ReadJSON(&m); err != nil {
			t.Fatalf("read: %v", err)
		}
		switch m.Type {
		case "next":
			if len(m.Payload.Errors) > 0 {
				t.Fatalf("errors: %v", m.Payload.Errors)
			}
			return string(m.Payload.Data)
		case "connection_ack", "ka", "ping", "pong":
		default:
			t.Fatalf("got a %q message", m.Type)
		}
	}
}

// Only subscribers of one principal with the same operation and
// variables share.
func TestShareKey(t *testing.T) {
	op := func(query string, vars map[string]any) *graphql.OperationContext {
		return &graphql.OperationContext{RawQuery: query, Variables: vars}
	}
	as := func(p auth.Principal) context.Context { return auth.NewContext(context.Background(), p) }
	alice := as(auth.Principal{Subject: "alice", Groups: []string{"dev", "ops"}})
	q := `subscription($n: [String!]) { applicationEvents(filter: {names: $n}) { name } }`
	base := shareKey(alice, op(q, map[string]any{"n": []any{"web"}}))
	for _, tt := range []struct {
		name  string
		ctx   context.Context
		op    *graphql.OperationContext
		share bool
	}{
		{"same principal, groups in another order", as(auth.Principal{Subject: "alice", Groups: []string{"ops", "dev"}}), op(q, map[string]any{"n": []any{"web"}}), true},
		{"another user", as(auth.Principal{Subject: "bob", Groups: []string{"dev", "ops"}}), op(q, map[string]any{"n": []any{"web"}}), false},
		{"other groups", as(auth.Principal{Subject: "alice", Groups: []string{"dev"}}), op(q, map[string]any{"n": []any{"web"}}), false},
		{"anonymous", context.Background(), op(q, map[string]any{"n": []any{"web"}}), false},
		{"other variables", alice, op(q, map[string]any{"n": []any{"api"}}), false},
		{"other query", alice, op(strings.Replace(q, "name", "name health", 1), map[string]any{"n": []any{"web"}}), false},
	} {
		if got := shareKey(tt.ctx, tt.op) == base; got != tt.share {
			t.Errorf("%s: shares = %v, want %v", tt.name, got, tt.share)
		}
	}
}
