package eventbus

import (
	"context"
)

// Bus carries reconciliation events from publishers to subscribers.
type Bus interface {
	// Publish sends ev to the bus's subscribers without waiting for any of
	// them. It fails for an invalid event and, on a Redis bus, when the
	// event cannot be queued for Redis; local subscribers get it all the
	// same when it is valid.
	Publish(ctx context.Context, ev Event) error
	// Lost tells every subscriber, with a Lagged marker, that events were
	// lost before they reached the bus.
	Lost()
	// Subscribe starts a subscription that ends with ctx or its Close.
	Subscribe(ctx context.Context, f Filter, opts Options) *Subscription
	// Stats returns the bus's counters.
	Stats() Stats
}

// Memory is a Bus within one process: a Hub that validates what it is
// given.
type Memory struct {
	hub *Hub
}

var _ Bus = (*Memory)(nil)

// NewMemory returns a bus for a single process.
func NewMemory() *Memory { return &Memory{hub: NewHub()} }

// Publish validates ev and hands it to the subscribers.
func (m *Memory) Publish(_ context.Context, ev Event) error {
	ev.Message = trimMessage(ev.Message)
	if err := ev.Validate(); err != nil {
		return err
	}
	m.hub.Publish(ev)
	return nil
}

// Lost gives every subscription a Lagged marker.
func (m *Memory) Lost() { m.hub.Lag() }

// Subscribe starts a subscription.
func (m *Memory) Subscribe(ctx context.Context, f Filter, opts Options) *Subscription {
	return m.hub.Subscribe(ctx, f, opts)
}

// Stats returns the hub's counters.
func (m *Memory) Stats() Stats { return m.hub.Stats() }
