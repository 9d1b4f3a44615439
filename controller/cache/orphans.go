package cache

import "sort"

// Orphans returns the top-level objects of namespace that no application
// tracks and that have no owner, sorted. It reads an index kept per
// namespace, so its cost is the number of such objects, not the size of
// the cluster.
func (c *Cluster) Orphans(namespace string) []ResourceKey {
	c.mu.RLock()
	keys := make([]ResourceKey, 0, len(c.roots[namespace]))
	for k := range c.roots[namespace] {
		keys = append(keys, k)
	}
	c.mu.RUnlock()
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	return keys
}

// OnOrphanChange registers fn to be called when an untracked top-level
// object (a candidate orphan) is added, changed or deleted, or when an
// object stops or starts being one. fn runs on the informer's goroutine
// and must not block.
func (c *Cluster) OnOrphanChange(fn func(key ResourceKey)) {
	c.handlersMu.Lock()
	c.rootFns = append(c.rootFns, fn)
	c.handlersMu.Unlock()
}

func (c *Cluster) notifyRoot(key ResourceKey) {
	c.handlersMu.RLock()
	fns := c.rootFns
	c.handlersMu.RUnlock()
	for _, fn := range fns {
		fn(key)
	}
}
