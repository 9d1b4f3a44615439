package git

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"sync"
)

// workingCopy is one repository's directory plus the lock that guards it.
// Callers that want the commit already checked out share it, also when
// nobody holds it at the moment (readers never write to a working copy, so
// it stays clean); anyone else waits until every holder has released it
// and then gets it exclusively to fetch and check out. Waiting for exclusive use blocks new sharers, so a
// steady stream of readers cannot starve a different commit.
type workingCopy struct {
	dir string

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every state change
	sha       string        // commit checked out and clean ("" = unknown)
	subs      bool          // submodules of sha are checked out too
	holders   int
	exclusive bool
	waiting   map[string]int // waiting callers by the commit they want
	nWaiting  int
}

func (c *Client) workingCopy(normalized string) *workingCopy {
	c.mu.Lock()
	defer c.mu.Unlock()
	wc, ok := c.copies[normalized]
	if !ok {
		sum := sha256.Sum256([]byte(normalized))
		wc = &workingCopy{
			dir:     filepath.Join(c.opts.WorkDir, hex.EncodeToString(sum[:16])),
			changed: make(chan struct{}),
			waiting: map[string]int{},
		}
		c.copies[normalized] = wc
	}
	return wc
}

// broadcast wakes every waiter; w.mu must be held.
func (w *workingCopy) broadcast() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// acquire shares the copy when sha is checked out (with its submodules
// when subs asks for them; shared is true), or grants it exclusively
// (shared is false) for the caller to prepare. An empty sha always asks
// for exclusive use. Sharing is refused while someone waits for a
// different commit.
func (w *workingCopy) acquire(ctx context.Context, sha string, subs bool) (shared bool, err error) {
	counted := false
	defer func() {
		if counted {
			w.mu.Lock()
			w.waiting[sha]--
			if w.waiting[sha] == 0 {
				delete(w.waiting, sha)
			}
			w.nWaiting--
			w.mu.Unlock()
		}
	}()
	for {
		w.mu.Lock()
		if sha != "" && !w.exclusive && w.sha == sha && (w.subs || !subs) && w.nWaiting == w.waiting[sha] {
			w.holders++
			w.mu.Unlock()
			return true, nil
		}
		if !w.exclusive && w.holders == 0 {
			w.exclusive = true
			w.mu.Unlock()
			return false, nil
		}
		if !counted {
			counted = true
			w.waiting[sha]++
			w.nWaiting++
		}
		ch := w.changed
		w.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// finishExclusive ends exclusive use. With ok the caller becomes the first
// holder of sha (checked out with submodules when subs); otherwise the copy
// is left unowned and unknown.
func (w *workingCopy) finishExclusive(sha string, subs, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.exclusive = false
	if ok {
		w.sha, w.subs = sha, subs
		w.holders = 1
	} else {
		w.sha, w.subs = "", false
	}
	w.broadcast()
}

// finishExclusiveKeep ends exclusive use without checking anything out.
func (w *workingCopy) finishExclusiveKeep() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.exclusive = false
	w.broadcast()
}

// releaser returns an idempotent release for one holder.
func (w *workingCopy) releaser() func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.holders--
			if w.holders == 0 {
				w.broadcast()
			}
		})
	}
}
