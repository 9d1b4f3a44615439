package eventbus

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Every subscriber of an event receives the same *Delivery, so a publish
// allocates once however many subscribers it reaches; markers are shared
// too.
func TestDeliveryShared(t *testing.T) {
	h := NewHub()
	a := h.Subscribe(t.Context(), Filter{}, Options{})
	b := h.Subscribe(t.Context(), Filter{Apps: []types.NamespacedName{app("ns", "app")}}, Options{})
	h.Publish(ev("ns", "app", HealthChanged, "1"))
	h.Lag()
	da, db := <-a.Deliveries(), <-b.Deliveries()
	if da != db {
		t.Errorf("subscribers got different deliveries of one event: %p and %p", da, db)
	}
	ma, mb := <-a.Deliveries(), <-b.Deliveries()
	if !ma.Lagged || ma != mb {
		t.Errorf("markers = %+v (%p) and %+v (%p), want one shared Lagged marker", ma, ma, mb, mb)
	}
}

func TestDeliveryAccessors(t *testing.T) {
	at := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	d := &Delivery{Event: &Event{
		App: app("ns", "app"), Type: OperationPhaseChanged, Sync: "Synced", Health: "Healthy",
		Revision: "abc", Phase: "Running", Message: "syncing", Time: at,
	}}
	for name, got := range map[string]*string{
		"ns": d.Namespace(), "app": d.Name(), "Synced": d.SyncStatus(), "Healthy": d.Health(),
		"abc": d.Revision(), "Running": d.OperationPhase(), "syncing": d.Message(),
	} {
		if got == nil || *got != name {
			t.Errorf("accessor for %q returned %v", name, got)
		}
	}
	if got := d.Type(); got == nil || *got != OperationPhaseChanged {
		t.Errorf("Type() = %v, want OperationPhaseChanged", got)
	}
	if got := d.Time(); got == nil || !got.Equal(at) {
		t.Errorf("Time() = %v, want %v", got, at)
	}
	if got := d.Key(); got != app("ns", "app") {
		t.Errorf("Key() = %v", got)
	}

	m := lagMarker
	if m.Type() != nil || m.Time() != nil || m.Name() != nil || m.Namespace() != nil ||
		m.SyncStatus() != nil || m.Health() != nil || m.Revision() != nil ||
		m.OperationPhase() != nil || m.Message() != nil || m.Key() != (types.NamespacedName{}) {
		t.Error("a Lagged marker's accessors returned non-nil values")
	}
}
