package eventbus

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Delivery is what a subscription's channel carries: an event, or a Lagged
// marker saying events were dropped and the subscriber must refetch.
//
// Deliveries are shared: every subscriber that receives a published event
// gets the same *Delivery, and every Lagged marker is the same value.
// Treat a Delivery and its Event as read-only.
//
// The accessors below return nil for a marker and otherwise point into the
// shared Event, so reading a field allocates nothing; the GraphQL
// ApplicationEvent type is bound to them.
type Delivery struct {
	// Event is the event; nil for a Lagged marker. Shared with other
	// subscribers: do not modify it.
	Event *Event
	// Lagged is true for a marker.
	Lagged bool
}

// lagMarker is the one Lagged marker every subscription receives.
var lagMarker = &Delivery{Lagged: true}

// published is a published event together with the delivery that carries
// it, so that both take one allocation.
type published struct {
	ev Event
	d  Delivery
}

// Key returns the app's key; zero for a marker.
func (d *Delivery) Key() types.NamespacedName {
	if d.Event == nil {
		return types.NamespacedName{}
	}
	return d.Event.App
}

// Type returns the event's type; nil for a marker.
func (d *Delivery) Type() *EventType {
	if d.Event == nil {
		return nil
	}
	return &d.Event.Type
}

// Time returns when the event happened; nil for a marker.
func (d *Delivery) Time() *time.Time {
	if d.Event == nil {
		return nil
	}
	return &d.Event.Time
}

// Name returns the app's name; nil for a marker.
func (d *Delivery) Name() *string {
	if d.Event == nil {
		return nil
	}
	return &d.Event.App.Name
}

// Namespace returns the app's namespace; nil for a marker.
func (d *Delivery) Namespace() *string {
	if d.Event == nil {
		return nil
	}
	return &d.Event.App.Namespace
}

// SyncStatus returns the sync status after the event; nil for a marker.
func (d *Delivery) SyncStatus() *string {
	if d.Event == nil {
		return nil
	}
	return &d.Event.Sync
}

// Health returns the health status after the event; nil for a marker.
func (d *Delivery) Health() *string {
	if d.Event == nil {
		return nil
	}
	return &d.Event.Health
}

// Revision returns the revision; nil for a marker.
func (d *Delivery) Revision() *string {
	if d.Event == nil {
		return nil
	}
	return &d.Event.Revision
}

// OperationPhase returns the operation's phase; nil for a marker.
func (d *Delivery) OperationPhase() *string {
	if d.Event == nil {
		return nil
	}
	return &d.Event.Phase
}

// Message returns the operation's message; nil for a marker.
func (d *Delivery) Message() *string {
	if d.Event == nil {
		return nil
	}
	return &d.Event.Message
}
