// Package revisioncache remembers resolved revisions (a branch to a commit
// SHA, a tag to a manifest digest) per repository and credentials for a
// TTL, bounded in size, so that the many renders of one refresh ask the
// remote once.
package revisioncache

import (
	"sync"
	"time"
)

// maxEntries bounds the cache.
const maxEntries = 10000

// Key names one resolution: the normalised repository URL, a fingerprint
// of the credentials that made it (another caller's credentials never
// reuse it) and the revision asked for.
type Key struct{ Repo, Creds, Revision string }

type entry struct {
	value   string
	expires time.Time
}

// Cache remembers resolved revisions for a TTL. A negative TTL disables
// it. It is safe for concurrent use.
type Cache struct {
	ttl     time.Duration
	mu      sync.Mutex
	entries map[Key]entry
}

// New returns a Cache keeping entries for ttl.
func New(ttl time.Duration) *Cache {
	return &Cache{ttl: ttl, entries: map[Key]entry{}}
}

// Get returns the value stored under k, unless it has expired.
func (c *Cache) Get(k Key) (string, bool) {
	if c.ttl < 0 {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || time.Now().After(e.expires) {
		return "", false
	}
	return e.value, true
}

// Put stores value under k for the TTL. A full cache drops its expired
// entries, and all of them if that is not enough.
func (c *Cache) Put(k Key, value string) {
	if c.ttl < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if len(c.entries) >= maxEntries {
		for key, e := range c.entries {
			if now.After(e.expires) {
				delete(c.entries, key)
			}
		}
		if len(c.entries) >= maxEntries {
			clear(c.entries)
		}
	}
	c.entries[k] = entry{value: value, expires: now.Add(c.ttl)}
}

// Invalidate forgets every entry of repo (a normalised URL).
func (c *Cache) Invalidate(repo string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.entries {
		if k.Repo == repo {
			delete(c.entries, k)
		}
	}
}
