// Package revisioncache remembers resolved revisions (a branch to a commit
// SHA, a tag to a manifest digest) per repository and credentials for a
// TTL, bounded in size, so that the many renders of one refresh ask the
// remote once.
package revisioncache

import (
	"strconv"
	"sync"
	"time"
)

// maxEntries bounds the cache.
const maxEntries = 10000

// Key names one resolution: the normalised repository URL, a fingerprint
// of the credentials that made it (another caller's credentials never
// reuse it) and the revision asked for.
type Key struct{ Repo, Creds, Revision string }

// FailureTTL is how long a failed resolution is remembered (see
// PutFailure): while a remote is down or refuses, the apps retrying on
// it ask it once per period between them, and a recovery is seen at most
// that much later.
const FailureTTL = 5 * time.Second

type entry struct {
	value   string
	err     error // a failed resolution's
	expires time.Time
}

// Cache remembers resolved revisions for a TTL. A negative TTL disables
// it. It is safe for concurrent use.
type Cache struct {
	ttl     time.Duration
	mu      sync.Mutex
	entries map[Key]entry
	// invalidated numbers each repository's latest invalidation from one
	// counter (see Generation).
	invalidated map[string]uint64
	counter     uint64
}

// New returns a Cache keeping entries for ttl.
func New(ttl time.Duration) *Cache {
	return &Cache{ttl: ttl, entries: map[Key]entry{}, invalidated: map[string]uint64{}}
}

// Generation names the state of repo's invalidations. A lookup takes it
// before asking the remote and hands it to Put, and lookups share a
// request to the remote only within one generation: what a request that
// began before an invalidation found (perhaps the commit a push just
// replaced) is neither cached nor handed to a caller that came after it.
func (c *Cache) Generation(repo string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.invalidated[repo]
}

// Get returns the value stored under k, unless it has expired.
func (c *Cache) Get(k Key) (string, bool) {
	e, ok := c.get(k)
	if !ok || e.err != nil {
		return "", false
	}
	return e.value, true
}

// Failure returns the error of a failed resolution of k stored by
// PutFailure, unless it has expired.
func (c *Cache) Failure(k Key) error {
	e, _ := c.get(k)
	return e.err
}

func (c *Cache) get(k Key) (entry, bool) {
	if c.ttl < 0 {
		return entry{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || time.Now().After(e.expires) {
		return entry{}, false
	}
	return e, true
}

// Put stores value, found by a lookup that began in generation gen of
// k.Repo, under k for the TTL, unless the repository has been invalidated
// since. A full cache drops its expired entries, and all of them if that
// is not enough.
func (c *Cache) Put(k Key, value string, gen uint64) {
	c.put(k, entry{value: value}, c.ttl, gen)
}

// PutFailure stores the error of a failed resolution of k, begun in
// generation gen, for FailureTTL (or the TTL when that is shorter), so
// that lookups meanwhile fail alike without asking the remote. An
// invalidation forgets it like any entry.
func (c *Cache) PutFailure(k Key, err error, gen uint64) {
	c.put(k, entry{err: err}, min(FailureTTL, c.ttl), gen)
}

func (c *Cache) put(k Key, e entry, ttl time.Duration, gen uint64) {
	if c.ttl < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.invalidated[k.Repo] != gen {
		return
	}
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
	e.expires = now.Add(ttl)
	c.entries[k] = e
}

// Invalidate forgets every entry of repo (a normalised URL) and starts a
// new generation of it.
func (c *Cache) Invalidate(repo string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.invalidated[repo]; !ok && len(c.invalidated) >= maxEntries {
		clear(c.invalidated) // lookups in flight for these repositories then go uncached
	}
	c.counter++
	c.invalidated[repo] = c.counter
	for k := range c.entries {
		if k.Repo == repo {
			delete(c.entries, k)
		}
	}
}

// FlightKey names the request to the remote that lookups of k in
// generation gen share (with golang.org/x/sync/singleflight).
func FlightKey(k Key, gen uint64) string {
	return k.Repo + "\x00" + k.Creds + "\x00" + k.Revision + "\x00" + strconv.FormatUint(gen, 10)
}
