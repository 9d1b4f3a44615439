package cache

import (
	"container/list"
	"context"
	"slices"
	"sync"
	"time"
)

// Memory is an in-process LRU Backend bounded by the bytes it holds (keys
// and values). Expired entries are dropped when read or evicted. Of the
// entries of one lineage (see SetInLineage) it keeps the KeepPerLineage
// stored last.
type Memory struct {
	mu       sync.Mutex
	maxBytes int64
	size     int64
	order    *list.List // front = most recently used
	items    map[string]*list.Element
	lineages map[string][]string // lineage → its keys, stored last first
	now      func() time.Time
}

type memEntry struct {
	key     string
	value   []byte
	expires time.Time
	lineage string
}

// KeepPerLineage is how many entries of one lineage Memory keeps: an app's
// renders at its current revision and the ones just before, for a diff or
// a rollback; older ones are rendered again if ever asked for.
const KeepPerLineage = 3

// NewMemory returns a Memory backend holding at most maxBytes.
func NewMemory(maxBytes int64) *Memory {
	return &Memory{maxBytes: maxBytes, order: list.New(), items: map[string]*list.Element{}, lineages: map[string][]string{}, now: time.Now}
}

// Get implements Backend.
func (m *Memory) Get(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.items[key]
	if !ok {
		return nil, false, nil
	}
	e := el.Value.(*memEntry)
	if !m.now().Before(e.expires) {
		m.remove(el)
		return nil, false, nil
	}
	m.order.MoveToFront(el)
	return e.value, true, nil
}

// Set implements Backend. A value larger than the whole cache is not
// stored.
func (m *Memory) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return m.SetInLineage(ctx, "", key, value, ttl)
}

// SetInLineage implements LineageBackend: it stores value under key, in
// lineage (none when ""), and forgets the entries of lineage beyond the
// KeepPerLineage stored last.
func (m *Memory) SetInLineage(_ context.Context, lineage, key string, value []byte, ttl time.Duration) error {
	cost := int64(len(key) + len(value))
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.items[key]; ok {
		m.remove(el)
	}
	if cost > m.maxBytes {
		return nil
	}
	for m.size+cost > m.maxBytes {
		m.remove(m.order.Back())
	}
	m.items[key] = m.order.PushFront(&memEntry{key: key, value: value, expires: m.now().Add(ttl), lineage: lineage})
	m.size += cost
	if lineage != "" {
		keys := append([]string{key}, m.lineages[lineage]...)
		for len(keys) > KeepPerLineage {
			m.remove(m.items[keys[len(keys)-1]]) // shortens m.lineages[lineage], not keys
			keys = keys[:len(keys)-1]
		}
		m.lineages[lineage] = keys
	}
	return nil
}

// Delete implements Backend.
func (m *Memory) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.items[key]; ok {
		m.remove(el)
	}
	return nil
}

// Size reports the bytes held.
func (m *Memory) Size() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.size
}

func (m *Memory) remove(el *list.Element) {
	e := el.Value.(*memEntry)
	m.order.Remove(el)
	delete(m.items, e.key)
	m.size -= int64(len(e.key) + len(e.value))
	if e.lineage != "" {
		keys := slices.DeleteFunc(m.lineages[e.lineage], func(k string) bool { return k == e.key })
		if len(keys) == 0 {
			delete(m.lineages, e.lineage)
		} else {
			m.lineages[e.lineage] = keys
		}
	}
}
