package sync

import (
	"context"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Reader reads live objects for the executor, typically from a cluster
// cache that watches the destination, so that a sync's reads cost the API
// server nothing. It returns nil without error for an object that does
// not exist. A cache may be a moment behind: the executor treats what it
// reads as a hint, and an apply that finds the object created or deleted
// meanwhile (AlreadyExists, NotFound) reads the API server and goes on.
type Reader interface {
	Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error)
}

// read reads an object through the configured Reader, or from the API
// server through ri when there is none.
func (e *Executor) read(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, ri dynamic.ResourceInterface) (*unstructured.Unstructured, error) {
	if e.cfg.Reader != nil {
		return e.cfg.Reader.Get(ctx, gvk, namespace, name)
	}
	return getLive(ctx, ri, name)
}

// Follower is a Reader that trails the API server, as a cache does. After
// a step's writes the executor waits, up to FollowTimeout, until the
// reader has seen them, so that what is read next (a wave's health, the
// comparison that follows the sync) is not a write behind.
type Follower interface {
	Reader
	// Observed reports whether the reader has seen the object at
	// resourceVersion or later or, for "", seen it deleted. An object
	// the reader cannot see (a kind or namespace it does not watch)
	// counts as seen.
	Observed(gvk schema.GroupVersionKind, namespace, name, resourceVersion string) bool
}

// FollowTimeout bounds the wait for a Follower after a step: a reader
// that lags more (a foreground deletion whose dependents go first) is
// read as it is.
const FollowTimeout = 2 * time.Second

// followPoll is how often the executor asks a Follower again.
const followPoll = 10 * time.Millisecond

// follow waits until the Follower reader, if the executor has one, has
// seen writes, for at most FollowTimeout.
func (e *Executor) follow(ctx context.Context, writes []write) {
	f, ok := e.cfg.Reader.(Follower)
	if !ok || len(writes) == 0 {
		return
	}
	deadline := time.NewTimer(FollowTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(followPoll)
	defer tick.Stop()
	for {
		writes = slices.DeleteFunc(writes, func(w write) bool {
			return f.Observed(w.gvk, w.namespace, w.name, w.resourceVersion)
		})
		if len(writes) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		case <-tick.C:
		}
	}
}
