package appstate

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// DefaultRewrite is how often a Writer rewrites an unchanged state, well
// inside DefaultTTL.
const DefaultRewrite = time.Hour

// WriterOptions configure a Writer.
type WriterOptions struct {
	// Rewrite is how long an unchanged state goes without being written
	// again (default DefaultRewrite); keep it well below the store's TTL.
	Rewrite time.Duration
	// Now tells the time (default time.Now).
	Now func() time.Time
}

// Writer puts states into a Store only when their content changed, so
// that the periodic refresh of a steady app costs a hash, not a write.
// It is safe for concurrent use.
type Writer struct {
	store   Store
	rewrite time.Duration
	now     func() time.Time

	mu   sync.Mutex
	last map[types.NamespacedName]written
}

type written struct {
	sum [sha256.Size]byte
	at  time.Time
}

// NewWriter returns a Writer over store.
func NewWriter(store Store, opts WriterOptions) *Writer {
	if opts.Rewrite <= 0 {
		opts.Rewrite = DefaultRewrite
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Writer{store: store, rewrite: opts.Rewrite, now: opts.Now, last: map[types.NamespacedName]written{}}
}

// Write puts s unless the state last written for s.App by this Writer
// has the same content (ReconciledAt aside) and is younger than the
// rewrite period. It reports whether it wrote.
func (w *Writer) Write(ctx context.Context, s State) (bool, error) {
	sum, err := fingerprint(s)
	if err != nil {
		return false, err
	}
	now := w.now()
	w.mu.Lock()
	prev, ok := w.last[s.App]
	w.mu.Unlock()
	if ok && prev.sum == sum && now.Sub(prev.at) < w.rewrite {
		return false, nil
	}
	if err := w.store.Put(ctx, s); err != nil {
		w.forget(s.App)
		return false, err
	}
	w.mu.Lock()
	w.last[s.App] = written{sum: sum, at: now}
	w.mu.Unlock()
	return true, nil
}

// Delete removes the state of app from the store.
func (w *Writer) Delete(ctx context.Context, app types.NamespacedName) error {
	w.forget(app)
	return w.store.Delete(ctx, app)
}

func (w *Writer) forget(app types.NamespacedName) {
	w.mu.Lock()
	delete(w.last, app)
	w.mu.Unlock()
}

// fingerprint hashes the content of s, ReconciledAt excluded.
func fingerprint(s State) ([sha256.Size]byte, error) {
	s.ReconciledAt = time.Time{}
	h := sha256.New()
	var sum [sha256.Size]byte
	if err := json.NewEncoder(h).Encode(s); err != nil {
		return sum, fmt.Errorf("encode state of %s: %w", s.App, err)
	}
	h.Sum(sum[:0])
	return sum, nil
}
