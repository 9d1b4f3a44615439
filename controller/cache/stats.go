package cache

import (
	"maps"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Stats are what a cluster cache holds, as Argo CD reports a cluster's
// cache info: for the cluster's status and its metrics.
type Stats struct {
	// Resources is how many objects the cache holds.
	Resources int
	// APIs is how many kinds the cache watches.
	APIs int
	// LastSync is when the initial lists, or the last discovery round
	// after them, completed; zero before Start has listed everything.
	LastSync time.Time
	// Events counts the watch events (adds, updates, deletes, resyncs)
	// the cache observed since it started, by kind.
	Events map[schema.GroupKind]uint64
}

// Stats returns the cache's figures now. Events is the caller's.
func (c *Cluster) Stats() Stats {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return Stats{
		Resources: len(c.byUID),
		APIs:      len(c.running),
		LastSync:  c.synced,
		Events:    maps.Clone(c.events),
	}
}

// markSynced records now as the time of the last complete sync.
func (c *Cluster) markSynced() {
	c.mu.Lock()
	c.synced = time.Now()
	c.mu.Unlock()
}
