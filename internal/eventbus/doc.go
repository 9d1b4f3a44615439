// Package eventbus carries reconciliation events from the controller to
// GraphQL subscriptions, within one process or across API replicas through
// Redis pub/sub, without letting a slow subscriber hold anyone up.
//
// # Use
//
//	bus := eventbus.NewRedis(client, "", eventbus.RedisOptions{})
//	go bus.Run(ctx) // one Redis subscription per process
//
//	// publisher (the controller)
//	err := bus.Publish(ctx, eventbus.Event{
//		App:  types.NamespacedName{Namespace: "argocd", Name: "guestbook"},
//		Type: eventbus.HealthChanged, Health: "Degraded", Sync: "Synced",
//	})
//
//	// subscriber (a GraphQL subscription resolver)
//	sub := bus.Subscribe(ctx, eventbus.Filter{Types: []eventbus.EventType{eventbus.HealthChanged}}, eventbus.Options{})
//	for d := range sub.Deliveries() {
//		if d.Lagged {
//			// events were dropped: refetch the apps, then go on
//			continue
//		}
//		send(d.Event)
//	}
//
// A published event travels as one *Delivery shared by all its
// subscribers (and every Lagged marker is one shared value), so fan-out
// allocates nothing per subscriber; receivers treat deliveries as
// read-only.
//
// NewMemory is the same bus for a single process (no Redis).
//
// # Delivery guarantees
//
// At most once per replica. An event reaches each matching subscription
// of each replica at most once. It can be lost: a subscriber that falls
// behind has events coalesced or dropped (below), and events published
// while a replica's Redis connection is down never reach it. Every loss a
// replica can know of ends in a Lagged marker; events are state changes
// whose truth lives in the Kubernetes API, so the answer to a marker is to
// refetch, never to replay.
//
// Ordering per app. A subscriber receives the events of one app in the
// order they were published, when each Publish for that app returns before
// the next starts (the controller reconciles an app in one worker at a
// time). A Hub serialises Publish, so all its subscribers see one order;
// across replicas the order per app is the same, the order between apps
// may differ.
//
// Slow subscribers. Publish never blocks. Each subscription has a bounded
// buffer (Options.Buffer, DefaultBuffer by default) of deliveries waiting
// for its receiver; it starts small and grows while deliveries wait.
// When it is full, a waiting event of the same app and type among the 64
// newest is removed and the newer one queued at the back, so the newest
// state wins and later state still arrives later (the delivery at the
// front, already being handed over, is never replaced). When nothing can be
// coalesced the event is dropped (Stats.Dropped) and a single Lagged
// marker is queued in the first slot that frees up. Until the subscriber
// has taken that marker, an event that finds the buffer full is dropped
// without a search and needs no second marker: the refetch the marker
// triggers comes after it. Events delivered after the marker were
// published after the drop; apply them on top of the refetched state (some
// may repeat what the refetch already shows).
//
// Redis. Each process holds one Redis subscription (Redis.Run) that feeds
// its local Hub; a process's own events go to its subscribers directly and
// to Redis through one sending goroutine, so a slow or absent Redis
// never blocks the publisher either. Messages from Redis are decoded
// with limits (MaxPayload, field lengths, known types); anything else is
// dropped and counted (Stats.Invalid), never trusted. Each event carries
// its origin and a sequence number: a hole in a publisher's sequence, or a
// reconnect to Redis, gives every local subscriber a Lagged marker.
//
// Every bus counts what it published, delivered, coalesced and dropped
// (Stats); NewCollector exposes the counters as Prometheus metrics.
package eventbus
