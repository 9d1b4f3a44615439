package audit

import (
	"context"
	"errors"
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

// List implements Store.
func (m *Memory) List(_ context.Context, q Query) (Page, error) {
	first := clampFirst(q.First)
	m.mu.Lock()
	defer m.mu.Unlock()
	size := uint64(len(m.ring))
	newest := m.next - 1
	if q.After != "" {
		after, err := strconv.ParseUint(q.After, 10, 64)
		if err != nil {
			return Page{}, ErrCursor
		}
		if after == 0 {
			return Page{}, nil
		}
		newest = min(newest, after-1)
	}
	oldest := uint64(1)
	if m.next > size {
		oldest = m.next - size
	}
	var p Page
	for n := newest; n >= oldest && n > 0; n-- {
		e := &m.ring[n%size]
		if !q.match(e) {
			continue
		}
		if len(p.Entries) == first {
			p.More = true
			break
		}
		p.Entries = append(p.Entries, e.clone())
	}
	return p, nil
}

// Subscribe implements Store.
func (m *Memory) Subscribe(ctx context.Context) <-chan Entry { return m.subscribe(ctx) }
