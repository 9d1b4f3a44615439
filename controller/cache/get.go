package cache

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/internal/resourceversion"
)

// maxFullObjects caps the full objects kept; past it Get still works but
// fetches every time.
const maxFullObjects = 10000

// fullObject is a full object cached for a managed key at one version,
// kept as JSON: a decoded object takes several times its encoding's
// memory, and every Get hands out a copy of its own anyway.
type fullObject struct {
	rv   string
	json []byte
}

// Get returns the full live object of key, managed fields included (diff
// rules on managedFieldsManagers read them). Objects
// that belong to or descend from an application are kept until the metadata
// informer sees a new version, so repeated reconciles of unchanged objects
// do not refetch them. The result is the caller's to modify.
func (c *Cluster) Get(ctx context.Context, key ResourceKey) (*unstructured.Unstructured, error) {
	c.mu.RLock()
	e := c.byKey[key]
	f, ok := c.full[key]
	c.mu.RUnlock()
	if e != nil && ok && f.rv == e.rv {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(f.json); err == nil {
			return obj, nil
		}
	}
	return c.Fetch(ctx, key)
}

// Fetch reads key from the API server, past the cache, for a caller that
// knows its copy is older than the API server's (and keeps the answer for
// Get, as Get does).
func (c *Cluster) Fetch(ctx context.Context, key ResourceKey) (*unstructured.Unstructured, error) {
	res, err := c.resourceFor(key.GroupKind())
	if err != nil {
		return nil, err
	}
	ns := key.Namespace
	if !res.namespaced {
		ns = ""
	}
	obj, err := c.dyn.Resource(res.gvr).Namespace(ns).Get(ctx, key.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	c.mu.RLock()
	e := c.byKey[key]
	keep := e != nil && len(c.full) < maxFullObjects && c.related(e)
	c.mu.RUnlock()
	if !keep {
		return obj, nil
	}
	// Encoded outside the lock; kept if the object is still indexed. One
	// that does not encode is fetched again next time.
	if b, jerr := obj.MarshalJSON(); jerr == nil {
		c.mu.Lock()
		// Checked again under the write lock: concurrent fetches all saw
		// room before any stored.
		if _, held := c.full[key]; c.byKey[key] != nil && (held || len(c.full) < maxFullObjects) {
			c.full[key] = fullObject{rv: obj.GetResourceVersion(), json: b}
		}
		c.mu.Unlock()
	}
	return obj, nil
}

// Lookup returns the live object of key, or nil when it does not exist,
// answering from the cache where it can: an object of a watched, listed
// kind that the index does not hold does not exist (as far as the cache
// has seen), with no API call; one it holds comes from Get. Kinds the
// cache does not watch are read from the API server. The cache may be a
// moment behind the API server; callers that act on the answer must
// tolerate that.
func (c *Cluster) Lookup(ctx context.Context, key ResourceKey) (*unstructured.Unstructured, error) {
	c.mu.RLock()
	w := c.running[key.GroupKind()]
	c.mu.RUnlock()
	if w != nil && w.complete(key.Namespace) {
		if _, exists := c.Owner(key); !exists {
			return nil, nil
		}
	}
	obj, err := c.Get(ctx, key)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

// Observed reports whether the cache has seen key at resourceVersion rv or
// later, or, with rv "", seen it deleted: a writer waits for it before
// reading what it wrote. A key the cache does not watch (its kind, or its
// namespace out of scope, or a watch not yet listed) counts as seen, as
// does a version that is not a number (see resourceversion.AtLeast).
func (c *Cluster) Observed(key ResourceKey, rv string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	w := c.running[key.GroupKind()]
	if w == nil || !w.complete(key.Namespace) {
		return true
	}
	e := c.byKey[key]
	if rv == "" || e == nil {
		return rv == "" && e == nil
	}
	return resourceversion.AtLeast(e.rv, rv)
}
