package project

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Cache keeps each project's compiled Rules and compiles a project again
// only when its UID or metadata.generation changes, which the API server
// bumps on every spec change. Objects that did not come from the API
// server (generation 0) are compiled on every call. The zero Cache is
// ready to use and safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	entries map[types.NamespacedName]cacheEntry
}

type cacheEntry struct {
	uid        types.UID
	generation int64
	rules      *Rules
	err        error
}

// Rules returns proj compiled, from the cache when proj has not changed;
// the error is Compile's.
func (c *Cache) Rules(proj *v1alpha1.AppProject) (*Rules, error) {
	if proj.Generation == 0 {
		return Compile(proj)
	}
	key := types.NamespacedName{Namespace: proj.Namespace, Name: proj.Name}
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && e.uid == proj.UID && e.generation == proj.Generation {
		return e.rules, e.err
	}
	r, err := Compile(proj)
	c.mu.Lock()
	if c.entries == nil {
		c.entries = make(map[types.NamespacedName]cacheEntry)
	}
	c.entries[key] = cacheEntry{uid: proj.UID, generation: proj.Generation, rules: r, err: err}
	c.mu.Unlock()
	return r, err
}

// Forget drops a deleted project from the cache.
func (c *Cache) Forget(namespace, name string) {
	c.mu.Lock()
	delete(c.entries, types.NamespacedName{Namespace: namespace, Name: name})
	c.mu.Unlock()
}
