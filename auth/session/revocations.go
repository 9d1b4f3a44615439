package session

import (
	"container/heap"
	"context"
	"errors"
	"sync"
	"time"
)

// Revocations is a list of revoked token IDs, each kept until the token
// would have expired anyway.
type Revocations interface {
	// Revoke adds id to the list until the time until.
	Revoke(ctx context.Context, id string, until time.Time) error
	// Revoked reports whether id is on the list. Verify calls it on every
	// request, so it should not cost a round trip when avoidable.
	Revoked(ctx context.Context, id string) (bool, error)
	// Subscribe calls fn with each id revoked from the time Subscribe
	// returns (in this process or, when the list is shared, in any
	// replica) until ctx ends. Calls for one subscription are sequential;
	// a slow fn delays only its own subscription.
	Subscribe(ctx context.Context, fn func(id string))
}

// MemoryRevocations is a Revocations held in this process, for a single
// replica. An entry is dropped once its time has passed.
type MemoryRevocations struct {
	set *revokedSet
	hub *hub
	now func() time.Time
}

var _ Revocations = (*MemoryRevocations)(nil)

// NewMemoryRevocations returns an empty list.
func NewMemoryRevocations() *MemoryRevocations {
	return &MemoryRevocations{set: newRevokedSet(), hub: newHub(), now: time.Now}
}

// Revoke adds id until until. An until in the past does nothing.
func (m *MemoryRevocations) Revoke(_ context.Context, id string, until time.Time) error {
	if id == "" {
		return errors.New("revoke: empty id")
	}
	if m.set.add(id, until, m.now()) {
		m.hub.publish(id)
	}
	return nil
}

// Revoked reports whether id is on the list; it never fails.
func (m *MemoryRevocations) Revoked(_ context.Context, id string) (bool, error) {
	return m.set.has(id, m.now()), nil
}

// Subscribe calls fn with each id revoked from now on until ctx ends.
func (m *MemoryRevocations) Subscribe(ctx context.Context, fn func(id string)) {
	m.hub.subscribe(ctx, fn)
}

// Len returns how many entries the list holds, expired ones not yet
// dropped included; for tests and metrics.
func (m *MemoryRevocations) Len() int { return m.set.len() }

// revokedSet maps revoked IDs to the time they may be forgotten. Expired
// entries are dropped, oldest first, whenever an entry is added, so the set
// never holds more than the revocations of the longest token lifetime.
type revokedSet struct {
	mu     sync.RWMutex
	until  map[string]time.Time
	expiry expiryHeap
}

func newRevokedSet() *revokedSet {
	return &revokedSet{until: map[string]time.Time{}}
}

// add records id until until and reports whether id is newly revoked (it
// was not on the list before). An until before now adds nothing.
func (s *revokedSet) add(id string, until, now time.Time) bool {
	if !until.After(now) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune(now)
	old, had := s.until[id]
	if had && !old.Before(until) {
		return false
	}
	s.until[id] = until
	heap.Push(&s.expiry, expiring{id: id, until: until})
	return !had
}

func (s *revokedSet) has(id string, now time.Time) bool {
	s.mu.RLock()
	until, ok := s.until[id]
	s.mu.RUnlock()
	return ok && until.After(now)
}

func (s *revokedSet) len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.until)
}

// prune drops the entries whose time has passed; s.mu is held.
func (s *revokedSet) prune(now time.Time) {
	for len(s.expiry) > 0 && !s.expiry[0].until.After(now) {
		e := heap.Pop(&s.expiry).(expiring)
		// A later add may have extended the entry; only its last heap
		// item removes it.
		if s.until[e.id].Equal(e.until) {
			delete(s.until, e.id)
		}
	}
}

type expiring struct {
	id    string
	until time.Time
}

// expiryHeap is a min-heap of entries by time (container/heap).
type expiryHeap []expiring

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].until.Before(h[j].until) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiring)) }
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// hub hands revoked IDs to subscribers. Each subscriber has its own queue
// and goroutine, so publishing never blocks and no ID is dropped: a
// subscription that misses a revocation would outlive its token.
type hub struct {
	mu   sync.Mutex
	subs map[*subscriber]struct{}
}

type subscriber struct {
	mu    sync.Mutex
	queue []string
	wake  chan struct{}
}

func newHub() *hub { return &hub{subs: map[*subscriber]struct{}{}} }

func (h *hub) subscribe(ctx context.Context, fn func(id string)) {
	s := &subscriber{wake: make(chan struct{}, 1)}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	go func() {
		defer func() {
			h.mu.Lock()
			delete(h.subs, s)
			h.mu.Unlock()
		}()
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
			}
			s.mu.Lock()
			ids := s.queue
			s.queue = nil
			s.mu.Unlock()
			for _, id := range ids {
				if ctx.Err() != nil {
					return
				}
				fn(id)
			}
		}
	}()
}

func (h *hub) publish(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		s.mu.Lock()
		s.queue = append(s.queue, id)
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}
