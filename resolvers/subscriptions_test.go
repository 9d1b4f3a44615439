package resolvers

import (
	"context"
	"runtime"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/eventbus"
)

// applicationEvents hands gqlgen events that point into the bus's one
// shared event, and a subscription that ends gives its place on the socket
// back.
func TestApplicationEventsChannel(t *testing.T) {
	bus := eventbus.NewMemory()
	r := New(Config{Events: bus, Namespace: "ns"})
	sub := r.Subscription()
	socket := WithSocket(t.Context(), 2)

	ctxA, endA := context.WithCancel(socket)
	defer endA()
	a, err := sub.ApplicationEvents(ctxA, nil)
	if err != nil {
		t.Fatalf("first subscription: %v", err)
	}
	b, err := sub.ApplicationEvents(socket, nil)
	if err != nil {
		t.Fatalf("second subscription: %v", err)
	}
	if _, err := sub.ApplicationEvents(socket, nil); err == nil {
		t.Fatal("a third subscription on a socket of two was accepted")
	}

	if err := bus.Publish(t.Context(), eventbus.Event{App: types.NamespacedName{Namespace: "ns", Name: "app"}, Type: eventbus.HealthChanged, Health: "Degraded"}); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	da, db := <-a, <-b
	if da.Health == nil || da.Health != db.Health || *da.Health != "Degraded" {
		t.Errorf("events = %+v and %+v, want both to point into the one shared event", da, db)
	}

	endA()
	for range a { // closed once the subscription ends
	}
	// The release runs after ctxA ends, not necessarily before a's
	// channel closes: retry until the place is free (a hang fails).
	for {
		_, err := sub.ApplicationEvents(socket, nil)
		if err == nil {
			break
		}
		runtime.Gosched()
	}
}

// Feeding a subscription whose stream has stopped taking (its context
// ended) gives up instead of blocking the subscriber, and the other
// subscribers waiting on its response.
func TestEventTapFeedAfterEnd(t *testing.T) {
	tap := &EventTap{feed: make(chan *model.ApplicationEvent, 1)}
	d := &eventbus.Delivery{}
	if !tap.Feed(t.Context(), d) {
		t.Fatal("the first feed was refused")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // the stream ended without taking d
	if tap.Feed(ctx, d) {
		t.Error("a feed after the end was taken")
	}
}

// A delivery maps to an event whose fields point into the shared event,
// and a lagged marker to one whose fields are all null.
func TestApplicationEventMapping(t *testing.T) {
	at := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	ev := &eventbus.Event{
		App: types.NamespacedName{Namespace: "ns", Name: "app"}, Type: eventbus.OperationPhaseChanged, Sync: "Synced",
		Health: "Healthy", Revision: "abc", Phase: "Running", Message: "syncing", Time: at,
	}
	e := applicationEvent(&eventbus.Delivery{Event: ev})
	for want, got := range map[string]*string{
		"ns": e.Namespace, "app": e.Name, "Synced": e.SyncStatus, "Healthy": e.Health,
		"abc": e.Revision, "Running": e.OperationPhase, "syncing": e.Message,
	} {
		if got == nil || *got != want {
			t.Errorf("field for %q is %v", want, got)
		}
	}
	if e.Lagged || e.Type == nil || *e.Type != model.ApplicationEventTypeOperationPhaseChanged {
		t.Errorf("Lagged, Type = %v, %v; want false, OperationPhaseChanged", e.Lagged, e.Type)
	}
	if e.Time != &ev.Time || eventKey(e) != ev.App {
		t.Errorf("Time, key = %v, %v; want the event's", e.Time, eventKey(e))
	}
	m := applicationEvent(&eventbus.Delivery{Lagged: true})
	if !m.Lagged || *m != (model.ApplicationEvent{Lagged: true}) {
		t.Errorf("marker = %+v, want only Lagged", m)
	}
}
