package eventbus

import (
	"context"
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// DefaultBuffer is how many deliveries wait for a subscriber that is not
// receiving, unless Options.Buffer says otherwise: enough for a push to a
// repository of 1,000 apps to reach a subscriber of all of them without
// a lagged marker.
const DefaultBuffer = 1024

// coalesceWindow is how many of the newest waiting deliveries a full
// buffer searches for one to replace, so that a publish costs the same
// whatever the buffer's size.
const coalesceWindow = 64

// initialRing is the buffer a subscription starts with; it doubles up to
// its Options.Buffer while deliveries wait, and starts again from this
// size once they are all taken, so idle subscribers hold little.
const initialRing = 16

// Filter selects the events a subscription receives. Every non-empty field
// must match; an empty Filter selects every event.
type Filter struct {
	// Apps lists apps by namespace and name; an entry with an empty
	// Namespace matches the name in any namespace.
	Apps []types.NamespacedName
	// Namespaces lists the namespaces of the apps.
	Namespaces []string
	// Types lists event types.
	Types []EventType
	// Allow, when set, must also accept the event's app: the API hides
	// the apps a subscriber may not see. It runs while the hub publishes,
	// once per matching subscriber and event, so it must be cheap and must
	// not block.
	Allow func(app types.NamespacedName) bool
}

// Options tune one subscription.
type Options struct {
	// Buffer is how many deliveries may wait while the subscriber is not
	// receiving (DefaultBuffer when 0). Past it the hub coalesces and then
	// drops, as the package documentation describes.
	Buffer int
}

// Stats are counters since the hub (or bus) was made.
type Stats struct {
	// Subscribers is the number of open subscriptions.
	Subscribers int
	// Published counts events given to the hub.
	Published uint64
	// Delivered counts events handed to subscribers' channels.
	Delivered uint64
	// Coalesced counts waiting events replaced by a newer one of the same
	// app and type.
	Coalesced uint64
	// Dropped counts events a subscriber missed because its buffer was
	// full.
	Dropped uint64
	// Lagged counts Lagged markers handed to subscribers.
	Lagged uint64
	// Received counts messages read from Redis (Redis bus only).
	Received uint64
	// Invalid counts messages from Redis dropped as malformed, too large or
	// of an unknown type (Redis bus only).
	Invalid uint64
	// Gaps counts the times events from Redis were found missing (a
	// reconnect, or a hole in a publisher's sequence), each answered by a
	// Lagged marker to every subscriber (Redis bus only).
	Gaps uint64
	// PublishErrors counts events that could not be sent to Redis (Redis
	// bus only).
	PublishErrors uint64
}

// Hub fans events out to subscriptions in this process. Publish never
// blocks on a subscriber. The zero Hub is not usable; use NewHub.
type Hub struct {
	mu sync.Mutex
	// wild holds subscriptions without app names; each knows its index.
	wild []*Subscription
	// byName holds subscriptions with app names, under each distinct name.
	byName map[string][]*Subscription
	count  int
	lagGen uint64

	published, delivered, coalesced, dropped, lagged atomic.Uint64
}

// NewHub returns an empty hub.
func NewHub() *Hub {
	return &Hub{byName: map[string][]*Subscription{}}
}

// Subscription receives the events its filter selects until its context
// ends or Close is called; then its channel is closed.
type Subscription struct {
	hub        *Hub
	ch         chan *Delivery
	done       chan struct{}
	stop       func() bool
	apps       []types.NamespacedName
	names      []string // distinct names of apps, the keys in hub.byName
	namespaces []string
	types      uint8 // mask of typeBit; 0 = all
	allow      func(types.NamespacedName) bool
	wildIndex  int // index in hub.wild, or -1
	lagGen     uint64
	size       int // the most deliveries the ring may hold

	mu   sync.Mutex
	ring []*Delivery // pending deliveries, allocated on first need
	keys []uint32    // coalesceKey of each delivery in ring
	// pumpFn is s.pump, made once with the ring.
	pumpFn func()
	head   int
	n      int
	// pumping is true while a goroutine moves the ring into ch.
	pumping bool
	// lagged is true when events were dropped and no marker is queued yet.
	lagged bool
	// markerQueued is true while a marker waits in the ring or is being
	// handed over; a drop then needs no second marker.
	markerQueued bool
	closed       bool
}

// Subscribe starts a subscription selecting events by f. It ends when ctx
// ends or Close is called.
func (h *Hub) Subscribe(ctx context.Context, f Filter, opts Options) *Subscription {
	size := opts.Buffer
	if size <= 0 {
		size = DefaultBuffer
	}
	s := &Subscription{
		hub:        h,
		ch:         make(chan *Delivery),
		done:       make(chan struct{}),
		apps:       slices.Clone(f.Apps),
		namespaces: slices.Clone(f.Namespaces),
		allow:      f.Allow,
		wildIndex:  -1,
		size:       size,
	}
	for _, t := range f.Types {
		s.types |= typeBit(t)
		if typeBit(t) == 0 {
			// An unknown type selects nothing; keep the mask non-zero so
			// the filter does not turn into "all types".
			s.types |= 1 << 7
		}
	}
	for _, a := range f.Apps {
		if !slices.Contains(s.names, a.Name) {
			s.names = append(s.names, a.Name)
		}
	}
	h.mu.Lock()
	if len(s.names) == 0 {
		s.wildIndex = len(h.wild)
		h.wild = append(h.wild, s)
	}
	for _, n := range s.names {
		h.byName[n] = append(h.byName[n], s)
	}
	h.count++
	h.mu.Unlock()
	s.stop = context.AfterFunc(ctx, s.end)
	return s
}

// Deliveries is the channel of deliveries; it is closed when the
// subscription ends. The deliveries are shared with other subscribers: do
// not modify them.
func (s *Subscription) Deliveries() <-chan *Delivery { return s.ch }

// Close ends the subscription. It is safe to call more than once.
func (s *Subscription) Close() {
	s.stop()
	s.end()
}

// end removes s from the hub and closes its channel once no goroutine can
// send on it.
func (s *Subscription) end() {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	if !s.pumping {
		close(s.ch) // else the pump closes it as it leaves
	}
	s.ring, s.keys, s.n = nil, nil, 0
	s.mu.Unlock()

	if i := s.wildIndex; i >= 0 {
		last := len(h.wild) - 1
		h.wild[i] = h.wild[last]
		h.wild[i].wildIndex = i
		h.wild[last] = nil
		h.wild = h.wild[:last]
		s.wildIndex = -1
	}
	for _, n := range s.names {
		list := h.byName[n]
		if i := slices.Index(list, s); i >= 0 {
			list[i] = list[len(list)-1]
			list[len(list)-1] = nil
			list = list[:len(list)-1]
		}
		if len(list) == 0 {
			delete(h.byName, n)
		} else {
			h.byName[n] = list
		}
	}
	h.count--
}

// matches reports whether s's filter selects ev; bit is ev.Type's bit.
func (s *Subscription) matches(ev *Event, bit uint8) bool {
	if s.types != 0 && s.types&bit == 0 {
		return false
	}
	if len(s.namespaces) > 0 && !slices.Contains(s.namespaces, ev.App.Namespace) {
		return false
	}
	if len(s.apps) > 0 && !s.selects(ev.App) {
		return false
	}
	return s.allow == nil || s.allow(ev.App)
}

// selects reports whether app is one of s's apps.
func (s *Subscription) selects(app types.NamespacedName) bool {
	for _, a := range s.apps {
		if a.Name == app.Name && (a.Namespace == "" || a.Namespace == app.Namespace) {
			return true
		}
	}
	return false
}

// Publish hands ev to every subscription whose filter selects it, without
// waiting for any of them. A zero Time is set to now. Publish calls are
// serialised, so all subscribers see events in one order.
func (h *Hub) Publish(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	pub := &published{ev: ev}
	p, d := &pub.ev, &pub.d
	d.Event = p
	bit := typeBit(ev.Type)
	key := coalesceKey(p)
	var sent uint64
	h.mu.Lock()
	for _, s := range h.wild {
		if s.matches(p, bit) && s.offer(d, key) {
			sent++
		}
	}
	for _, s := range h.byName[ev.App.Name] {
		if s.matches(p, bit) && s.offer(d, key) {
			sent++
		}
	}
	h.mu.Unlock()
	h.published.Add(1)
	h.delivered.Add(sent)
}

// Lag gives every subscription a Lagged marker, whatever its filter: the
// caller knows events were lost but not which (a Redis reconnect).
func (h *Hub) Lag() {
	h.mu.Lock()
	h.lagGen++
	var sent uint64
	offer := func(s *Subscription) {
		if s.lagGen == h.lagGen {
			return
		}
		s.lagGen = h.lagGen
		if s.offer(lagMarker, 0) {
			sent++
		}
	}
	for _, s := range h.wild {
		offer(s)
	}
	for _, list := range h.byName {
		for _, s := range list {
			offer(s)
		}
	}
	h.mu.Unlock()
	h.lagged.Add(sent)
}

// Stats returns the hub's counters.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	n := h.count
	h.mu.Unlock()
	return Stats{
		Subscribers: n,
		Published:   h.published.Load(),
		Delivered:   h.delivered.Load(),
		Coalesced:   h.coalesced.Load(),
		Dropped:     h.dropped.Load(),
		Lagged:      h.lagged.Load(),
	}
}

// offer hands d to the subscriber directly when it is waiting and nothing
// is queued before d, and otherwise queues it. It reports whether d was
// handed over directly.
func (s *Subscription) offer(d *Delivery, key uint32) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.n == 0 && !s.pumping {
		select {
		case s.ch <- d:
			return true
		default:
		}
	}
	s.enqueue(d, key)
	if s.n > 0 && !s.pumping {
		s.pumping = true
		go s.pumpFn() // a func value without arguments: no allocation per start
	}
	return false
}

// enqueue queues d, whose coalescing key is key; when the ring is full it
// coalesces or drops. Called with s.mu held.
func (s *Subscription) enqueue(d *Delivery, key uint32) {
	if s.ring == nil {
		s.ring = make([]*Delivery, min(s.size, initialRing))
		s.keys = make([]uint32, len(s.ring))
		s.head = 0
		if s.pumpFn == nil {
			s.pumpFn = s.pump
		}
	}
	if s.n == len(s.ring) && len(s.ring) < s.size {
		s.grow()
	}
	if d.Lagged {
		switch {
		case s.markerQueued:
		case s.n < len(s.ring):
			s.push(d, 0)
			s.markerQueued = true
		default:
			s.lagged = true
		}
		return
	}
	if s.n < len(s.ring) {
		s.push(d, key)
		return
	}
	if s.lagged || s.markerQueued {
		// Already lagging: the refetch the marker asks for comes after
		// this event, so it needs no slot (and no search for one).
		s.hub.dropped.Add(1)
		return
	}
	// Full: a waiting event of the same app and type among the newest
	// coalesceWindow gives way to the newer one, which goes to the back so
	// later state stays later. The front is the pump's, being handed over.
	for i := max(1, s.n-coalesceWindow); i < s.n; i++ {
		j := s.index(i)
		if s.keys[j] != key {
			continue
		}
		if old := s.ring[j].Event; old != nil && old.Type == d.Event.Type && old.App == d.Event.App {
			s.remove(i)
			s.push(d, key)
			s.hub.coalesced.Add(1)
			return
		}
	}
	s.hub.dropped.Add(1)
	s.lagged = true
}

// grow doubles the ring, up to s.size, keeping the waiting deliveries in
// order with the front (the pump's) at the head.
func (s *Subscription) grow() {
	n := min(2*len(s.ring), s.size)
	ring, keys := make([]*Delivery, n), make([]uint32, n)
	for i := range s.n {
		j := s.index(i)
		ring[i], keys[i] = s.ring[j], s.keys[j]
	}
	s.ring, s.keys, s.head = ring, keys, 0
}

// index returns the ring index of the i-th waiting delivery.
func (s *Subscription) index(i int) int {
	j := s.head + i
	if j >= len(s.ring) {
		j -= len(s.ring)
	}
	return j
}

func (s *Subscription) push(d *Delivery, key uint32) {
	j := s.index(s.n)
	s.ring[j], s.keys[j] = d, key
	s.n++
}

func (s *Subscription) pop() {
	s.ring[s.head], s.keys[s.head] = nil, 0
	s.head = s.index(1)
	s.n--
}

// remove deletes the i-th waiting delivery, moving the shorter side of the
// ring by one slot to close the gap.
func (s *Subscription) remove(i int) {
	if i < s.n/2 {
		for ; i > 0; i-- {
			j, k := s.index(i), s.index(i-1)
			s.ring[j], s.keys[j] = s.ring[k], s.keys[k]
		}
		s.pop()
		return
	}
	for ; i < s.n-1; i++ {
		j, k := s.index(i), s.index(i+1)
		s.ring[j], s.keys[j] = s.ring[k], s.keys[k]
	}
	j := s.index(s.n - 1)
	s.ring[j], s.keys[j] = nil, 0
	s.n--
}

// keySeed seeds coalesceKey; any fixed seed serves.
var keySeed = maphash.MakeSeed()

// coalesceKey hashes an event's app and type, so a search for an event to
// coalesce compares small numbers from one small array and reads an event
// only when the numbers match. Markers have key 0, events never do.
func coalesceKey(ev *Event) uint32 {
	var h maphash.Hash
	h.SetSeed(keySeed)
	_, _ = h.WriteString(ev.App.Namespace)
	_ = h.WriteByte('/')
	_, _ = h.WriteString(ev.App.Name)
	_ = h.WriteByte(' ')
	_, _ = h.WriteString(string(ev.Type))
	return uint32(h.Sum64()) | 1 //nolint:gosec // truncation wanted: the low bits of a hash
}

// pump moves queued deliveries into the channel, in order, until the ring
// is empty or the subscription ends. One runs per subscription at most,
// and only while deliveries wait, so an idle subscription costs no
// goroutine. The delivery at the front stays in the ring, and counts
// against the buffer, until the subscriber has taken it; coalescing
// leaves it alone.
func (s *Subscription) pump() {
	for {
		s.mu.Lock()
		if s.closed || s.n == 0 {
			s.pumping = false
			if s.closed {
				close(s.ch)
			} else if len(s.ring) > initialRing {
				s.ring, s.keys = nil, nil // grown for a burst: start small again
			}
			s.mu.Unlock()
			return
		}
		d := s.ring[s.head]
		s.mu.Unlock()

		select {
		case s.ch <- d:
		case <-s.done:
			continue
		}
		s.mu.Lock()
		if !s.closed {
			s.pop()
			if d.Lagged {
				s.markerQueued = false
			}
			if s.lagged {
				// The slot just freed is the first room since the drop.
				s.lagged = false
				s.markerQueued = true
				s.push(lagMarker, 0)
			}
		}
		s.mu.Unlock()
		if d.Lagged {
			s.hub.lagged.Add(1)
		} else {
			s.hub.delivered.Add(1)
		}
	}
}
