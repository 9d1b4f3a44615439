package sync

import (
	"context"

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
