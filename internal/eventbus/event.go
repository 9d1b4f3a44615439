package eventbus

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/types"
)

// EventType says what happened to an app.
type EventType string

// The event types a subscriber can see.
const (
	// SyncStatusChanged: the app's sync status changed.
	SyncStatusChanged EventType = "SyncStatusChanged"
	// HealthChanged: the app's health status changed.
	HealthChanged EventType = "HealthChanged"
	// OperationPhaseChanged: an operation (a sync) started or changed
	// phase; Phase and Message say how.
	OperationPhaseChanged EventType = "OperationPhaseChanged"
	// ResourceChanged: a live object of the app changed.
	ResourceChanged EventType = "ResourceChanged"
	// ReconcileCompleted: the app was compared again.
	ReconcileCompleted EventType = "ReconcileCompleted"
)

// eventTypes lists the known types; an event's bit in a type mask is its
// index here.
var eventTypes = [...]EventType{SyncStatusChanged, HealthChanged, OperationPhaseChanged, ResourceChanged, ReconcileCompleted}

// typeBit returns the type's bit in a Filter's mask, or 0 for an unknown
// type.
func typeBit(t EventType) uint8 {
	for i, k := range eventTypes {
		if k == t {
			return 1 << i
		}
	}
	return 0
}

// Valid reports whether t is one of the known event types.
func (t EventType) Valid() bool { return typeBit(t) != 0 }

// Limits on an event's fields. Publish trims Message to MaxMessage so a
// well-formed publisher never makes an event that receivers reject; events
// decoded from Redis that break a limit are dropped.
const (
	// MaxPayload is the largest encoded event a Redis bus accepts.
	MaxPayload = 16 << 10
	// MaxMessage is the longest operation message, in bytes.
	MaxMessage = 4 << 10
	maxName    = 253 // a DNS subdomain, the longest Kubernetes object name
	maxStatus  = 64  // a status or phase word
	maxRev     = 256 // a commit SHA, a Helm chart version or a list of them
	maxOrigin  = 64
)

// Event is one reconciliation event of an app. Sync, Health and Revision
// are the app's state after the event (empty for ResourceChanged, which may
// come before a comparison); Phase and Message belong to operation events.
//
// A published event is shared by every subscriber that receives it: treat
// the Event a Delivery points to as read-only.
type Event struct {
	App      types.NamespacedName
	Type     EventType
	Sync     string
	Health   string
	Revision string
	Phase    string
	Message  string
	Time     time.Time
	// Origin and Seq are set by a Redis bus: the publishing process and a
	// number that grows by one with each event that process publishes, so
	// a receiver can tell when it missed some.
	Origin string
	Seq    uint64
}

// wireEvent is Event as it travels through Redis, with short keys.
type wireEvent struct {
	Namespace string    `json:"ns,omitempty"`
	Name      string    `json:"n"`
	Type      EventType `json:"t"`
	Sync      string    `json:"s,omitempty"`
	Health    string    `json:"h,omitempty"`
	Revision  string    `json:"r,omitempty"`
	Phase     string    `json:"p,omitempty"`
	Message   string    `json:"m,omitempty"`
	Time      time.Time `json:"ts"`
	Origin    string    `json:"o,omitempty"`
	Seq       uint64    `json:"q,omitempty"`
}

// MarshalJSON encodes the event with the compact keys used on the wire.
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(wireEvent{
		Namespace: e.App.Namespace, Name: e.App.Name, Type: e.Type,
		Sync: e.Sync, Health: e.Health, Revision: e.Revision,
		Phase: e.Phase, Message: e.Message, Time: e.Time,
		Origin: e.Origin, Seq: e.Seq,
	})
}

// UnmarshalJSON decodes the compact form. It does not validate: Decode
// does.
func (e *Event) UnmarshalJSON(b []byte) error {
	var w wireEvent
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Event{
		App:  types.NamespacedName{Namespace: w.Namespace, Name: w.Name},
		Type: w.Type, Sync: w.Sync, Health: w.Health, Revision: w.Revision,
		Phase: w.Phase, Message: w.Message, Time: w.Time,
		Origin: w.Origin, Seq: w.Seq,
	}
	return nil
}

// ErrInvalidEvent marks an event that breaks a limit or names an unknown
// type.
var ErrInvalidEvent = errors.New("invalid event")

// Validate checks the event's type and the size and encoding of its fields.
func (e *Event) Validate() error {
	if !e.Type.Valid() {
		return fmt.Errorf("%w: unknown type %.32q", ErrInvalidEvent, e.Type)
	}
	if e.App.Name == "" {
		return fmt.Errorf("%w: no app name", ErrInvalidEvent)
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{
		{"namespace", e.App.Namespace, maxName},
		{"name", e.App.Name, maxName},
		{"sync", e.Sync, maxStatus},
		{"health", e.Health, maxStatus},
		{"revision", e.Revision, maxRev},
		{"phase", e.Phase, maxStatus},
		{"message", e.Message, MaxMessage},
		{"origin", e.Origin, maxOrigin},
	} {
		if len(f.v) > f.max {
			return fmt.Errorf("%w: %s longer than %d bytes", ErrInvalidEvent, f.name, f.max)
		}
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("%w: %s is not UTF-8", ErrInvalidEvent, f.name)
		}
	}
	return nil
}

// Decode parses and validates an event received from another process.
// Any input gives either a valid event or an error, never a panic.
func Decode(payload []byte) (Event, error) {
	if len(payload) > MaxPayload {
		return Event{}, fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidEvent, len(payload), MaxPayload)
	}
	var e Event
	if err := json.Unmarshal(payload, &e); err != nil {
		return Event{}, fmt.Errorf("%w: %w", ErrInvalidEvent, err)
	}
	if err := e.Validate(); err != nil {
		return Event{}, err
	}
	return e, nil
}

// trimMessage shortens an over-long message at a rune boundary so a
// publisher's event stays within MaxMessage.
func trimMessage(m string) string {
	if len(m) <= MaxMessage {
		return m
	}
	cut := MaxMessage
	for cut > 0 && !utf8.RuneStart(m[cut]) {
		cut--
	}
	return m[:cut]
}
