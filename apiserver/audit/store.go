package audit

import (
	"context"
	"sync"
)

// DefaultSize is how many entries a store keeps unless told otherwise.
const DefaultSize = 10_000

// MaxPage bounds Query.First.
const MaxPage = 500

// Store keeps the newest entries, up to its size: appending beyond it
// drops the oldest.
type Store interface {
	// Append stores e, setting its ID, and streams it to subscribers.
	Append(ctx context.Context, e *Entry) error
	// List returns one page of the entries q selects, newest first.
	List(ctx context.Context, q Query) (Page, error)
	// Subscribe streams entries appended from now on (by any replica
	// sharing the store; a Redis store's follower may still hand over a
	// few appended just before) until ctx ends. A subscriber that falls behind
	// by more than SubscriberBuffer entries misses entries.
	Subscribe(ctx context.Context) <-chan Entry
}

// SubscriberBuffer is how many entries wait for a slow subscriber before
// newer ones are dropped for it.
const SubscriberBuffer = 256

// hub hands entries to the subscribers of one process.
type hub struct {
	mu   sync.Mutex
	subs map[chan Entry]struct{}
}

func (h *hub) subscribe(ctx context.Context) <-chan Entry {
	ch := make(chan Entry, SubscriberBuffer)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[chan Entry]struct{}{}
	}
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	context.AfterFunc(ctx, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
		close(ch)
	})
	return ch
}

// publish never blocks: a full subscriber misses e.
func (h *hub) publish(e Entry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- e.clone():
		default:
		}
	}
}

// clampFirst bounds a page size to 1..MaxPage.
func clampFirst(first int) int {
	return min(max(first, 1), MaxPage)
}
