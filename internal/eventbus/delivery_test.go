package eventbus

import (
	"testing"

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
