package appstate

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Store keeps the latest State of each application. Implementations are
// safe for concurrent use; the states they return are the caller's.
type Store interface {
	// Put replaces the state of s.App.
	Put(ctx context.Context, s State) error
	// Get returns the state of app, or nil (and no error) when there is
	// none, or none that could be trusted.
	Get(ctx context.Context, app types.NamespacedName) (*State, error)
	// GetMany returns the states of apps in one round trip: the result has
	// one element per app, in order, nil where Get would return nil.
	GetMany(ctx context.Context, apps []types.NamespacedName) ([]*State, error)
	// Delete forgets the state of app; deleting an absent state is not an
	// error.
	Delete(ctx context.Context, app types.NamespacedName) error
}

// Memory is a Store in process memory, for a single-process install and
// for tests. It keeps states encoded, as Redis does, so a state read back
// shares nothing with the one written.
type Memory struct {
	mu     sync.RWMutex
	states map[types.NamespacedName][]byte
}

// NewMemory returns an empty Memory store.
func NewMemory() *Memory {
	return &Memory{states: map[types.NamespacedName][]byte{}}
}

// Put implements Store.
func (m *Memory) Put(_ context.Context, s State) error {
	b, err := Encode(s, DefaultMaxSize)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.states[s.App] = b
	m.mu.Unlock()
	return nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, app types.NamespacedName) (*State, error) {
	m.mu.RLock()
	b, ok := m.states[app]
	m.mu.RUnlock()
	if !ok {
		return nil, nil
	}
	return Decode(b)
}

// GetMany implements Store.
func (m *Memory) GetMany(ctx context.Context, apps []types.NamespacedName) ([]*State, error) {
	out := make([]*State, len(apps))
	for i, app := range apps {
		s, err := m.Get(ctx, app)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// Delete implements Store.
func (m *Memory) Delete(_ context.Context, app types.NamespacedName) error {
	m.mu.Lock()
	delete(m.states, app)
	m.mu.Unlock()
	return nil
}
