package gqlmodel

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/internal/eventbus"
)

// ApplicationEvent is one delivery of an application event subscription:
// an event, or a marker that events were lost.
type ApplicationEvent struct {
	Delivery eventbus.Delivery
}

// Lagged reports whether this is a lost-events marker.
func (e ApplicationEvent) Lagged() bool { return e.Delivery.Lagged }

// Key returns the app's key; zero for a marker.
func (e ApplicationEvent) Key() types.NamespacedName {
	if e.Delivery.Event == nil {
		return types.NamespacedName{}
	}
	return e.Delivery.Event.App
}

// Type returns the event's type; nil for a marker.
func (e ApplicationEvent) Type() *eventbus.EventType {
	if ev := e.Delivery.Event; ev != nil {
		return &ev.Type
	}
	return nil
}

// Time returns when it happened; nil for a marker.
func (e ApplicationEvent) Time() *metav1.Time {
	if ev := e.Delivery.Event; ev != nil {
		t := metav1.NewTime(ev.Time)
		return &t
	}
	return nil
}

// Name returns the app's name; nil for a marker.
func (e ApplicationEvent) Name() *string {
	return e.field(func(ev *eventbus.Event) string { return ev.App.Name })
}

// Namespace returns the app's namespace; nil for a marker.
func (e ApplicationEvent) Namespace() *string {
	return e.field(func(ev *eventbus.Event) string { return ev.App.Namespace })
}

// SyncStatus returns the sync status after the event.
func (e ApplicationEvent) SyncStatus() *string {
	return e.field(func(ev *eventbus.Event) string { return ev.Sync })
}

// Health returns the health status after the event.
func (e ApplicationEvent) Health() *string {
	return e.field(func(ev *eventbus.Event) string { return ev.Health })
}

// Revision returns the revision.
func (e ApplicationEvent) Revision() *string {
	return e.field(func(ev *eventbus.Event) string { return ev.Revision })
}

// OperationPhase returns the operation's phase.
func (e ApplicationEvent) OperationPhase() *string {
	return e.field(func(ev *eventbus.Event) string { return ev.Phase })
}

// Message returns the operation's message.
func (e ApplicationEvent) Message() *string {
	return e.field(func(ev *eventbus.Event) string { return ev.Message })
}

func (e ApplicationEvent) field(get func(*eventbus.Event) string) *string {
	if ev := e.Delivery.Event; ev != nil {
		v := get(ev)
		return &v
	}
	return nil
}
