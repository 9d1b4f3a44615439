package eventbus

// Delivery is what a subscription's channel carries: an event, or a Lagged
// marker saying events were dropped and the subscriber must refetch.
//
// Deliveries are shared: every subscriber that receives a published event
// gets the same *Delivery, and every Lagged marker is the same value.
// Treat a Delivery and its Event as read-only.
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
