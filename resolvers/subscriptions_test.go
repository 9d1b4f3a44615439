package resolvers

import (
	"context"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/internal/eventbus"
)

// applicationEvents hands gqlgen the bus's own channel, and a subscription
// that ends gives its place on the socket back.
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
	if da != db || da.Health() == nil || *da.Health() != "Degraded" {
		t.Errorf("deliveries = %+v and %+v, want the one shared delivery of the event", da, db)
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
	tap := &EventTap{feed: make(chan *eventbus.Delivery, 1)}
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
