package audit

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync"
)

// Memory is a Store in one process: a ring of the newest entries.
type Memory struct {
	hub
	mu   sync.Mutex
	ring []Entry
	// next is the sequence number of the next entry; entry n sits at
	// ring[n%len(ring)] while n >= next-len(ring).
	next uint64
}

var _ Store = (*Memory)(nil)

// NewMemory returns a Memory keeping size entries (DefaultSize when
// size <= 0).
func NewMemory(size int) *Memory {
	if size <= 0 {
		size = DefaultSize
	}
	return &Memory{ring: make([]Entry, size), next: 1}
}

// Append implements Store.
func (m *Memory) Append(_ context.Context, e *Entry) error {
	m.mu.Lock()
	n := m.next
	m.next++
	e.ID = strconv.FormatUint(n, 10)
	m.ring[n%uint64(len(m.ring))] = e.clone()
	m.mu.Unlock()
	m.publish(*e)
	return nil
}

// ErrCursor is a malformed Query.After.
var ErrCursor = errors.New("invalid cursor")

// memoryBatch is how many entries List copies under the lock at a time.
const memoryBatch = 256

// List implements Store. It copies the entries the filter selects under
// the lock, a batch at a time, and asks Query.Allow (the caller's RBAC,
// which may be slow) outside it, so that reading never holds up Append.
func (m *Memory) List(_ context.Context, q Query) (Page, error) {
	first := clampFirst(q.First)
	from := uint64(math.MaxUint64)
	if q.After != "" {
		after, err := strconv.ParseUint(q.After, 10, 64)
		if err != nil {
			return Page{}, ErrCursor
		}
		if after == 0 {
			return Page{}, nil
		}
		from = after - 1
	}
	var p Page
	for from > 0 {
		var batch []Entry
		batch, from = m.scan(from, q.Filter)
		for i := range batch {
			if q.Allow != nil && !q.Allow(&batch[i]) {
				continue
			}
			if len(p.Entries) == first {
				p.More = true
				return p, nil
			}
			p.Entries = append(p.Entries, batch[i])
		}
	}
	return p, nil
}

// scan copies up to memoryBatch entries that f selects, newest first,
// from entry from down, and returns them with the entry to go on from (0
// when none is left).
func (m *Memory) scan(from uint64, f Filter) ([]Entry, uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	size := uint64(len(m.ring))
	oldest := uint64(1)
	if m.next > size {
		oldest = m.next - size
	}
	var out []Entry
	n := min(from, m.next-1)
	for ; n >= oldest && n > 0 && len(out) < memoryBatch; n-- {
		if e := &m.ring[n%size]; f.Match(e) {
			out = append(out, e.clone())
		}
	}
	if n < oldest {
		return out, 0
	}
	return out, n
}

// Subscribe implements Store.
func (m *Memory) Subscribe(ctx context.Context) <-chan Entry { return m.subscribe(ctx) }
