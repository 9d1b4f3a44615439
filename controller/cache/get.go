package cache

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// maxFullObjects caps the full objects kept; past it Get still works but
// fetches every time.
const maxFullObjects = 10000

// fullObject is a full object cached for a managed key at one version.
type fullObject struct {
	rv  string
	obj *unstructured.Unstructured
}

// Get returns the full live object of key, managed fields included (diff
// rules on managedFieldsManagers read them). Objects
// that belong to or descend from an application are kept until the metadata
// informer sees a new version, so repeated reconciles of unchanged objects
// do not refetch them. The result is the caller's to modify.
func (c *Cluster) Get(ctx context.Context, key ResourceKey) (*unstructured.Unstructured, error) {
	res, err := c.resourceFor(key.GroupKind())
	if err != nil {
		return nil, err
	}
	c.mu.RLock()
	e := c.byKey[key]
	f, ok := c.full[key]
	c.mu.RUnlock()
	if e != nil && ok && f.rv == e.rv {
		return f.obj.DeepCopy(), nil
	}

	ns := key.Namespace
	if !res.namespaced {
		ns = ""
	}
	obj, err := c.dyn.Resource(res.gvr).Namespace(ns).Get(ctx, key.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	c.mu.Lock()
	if e := c.byKey[key]; e != nil && len(c.full) < maxFullObjects && c.related(e) {
		c.full[key] = fullObject{rv: obj.GetResourceVersion(), obj: obj.DeepCopy()}
	}
	c.mu.Unlock()
	return obj, nil
}
