package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// ApplicationSets returns the ApplicationSets of the namespaces the
// catalog serves, ordered by namespace and name. The objects are shared
// with the cache: never modify them.
func (c *Catalog) ApplicationSets(ctx context.Context) ([]*v1alpha1.ApplicationSet, error) {
	var list v1alpha1.ApplicationSetList
	if err := c.cache.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list applicationsets: %w", err)
	}
	out := make([]*v1alpha1.ApplicationSet, 0, len(list.Items))
	for i := range list.Items {
		if c.served(list.Items[i].Namespace) {
			out = append(out, &list.Items[i])
		}
	}
	slices.SortFunc(out, func(a, b *v1alpha1.ApplicationSet) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return out, nil
}

// ApplicationSet returns the ApplicationSet at key, or nil when there is
// none in a namespace the catalog serves. The object is shared with the
// cache: never modify it.
func (c *Catalog) ApplicationSet(ctx context.Context, key types.NamespacedName) (*v1alpha1.ApplicationSet, error) {
	if !c.served(key.Namespace) {
		return nil, nil
	}
	set := &v1alpha1.ApplicationSet{}
	err := c.cache.Get(ctx, key, set, client.UnsafeDisableDeepCopy)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get applicationset %s: %w", key, err)
	}
	return set, nil
}

// ApplicationSetChanges signals each change of the ApplicationSet at key
// (created, changed, deleted) until ctx ends. Signals coalesce: one
// pending signal stands for any number of changes.
func (c *Catalog) ApplicationSetChanges(ctx context.Context, key types.NamespacedName) <-chan struct{} {
	return c.sets.subscribe(ctx, key)
}

// served reports whether the catalog serves the Applications and
// ApplicationSets of namespace.
func (c *Catalog) served(namespace string) bool {
	if c.apps != nil {
		return c.apps.Allowed(namespace)
	}
	return c.namespace == "" || namespace == c.namespace
}

// changes tells the watchers of an object's key that it changed.
type changes struct {
	mu       sync.Mutex
	watchers map[types.NamespacedName][]chan struct{}
}

// watch signals the watchers of each object inf adds, updates or deletes,
// until ctx ends.
func (w *changes) watch(ctx context.Context, inf interface {
	AddEventHandler(toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error)
	RemoveEventHandler(toolscache.ResourceEventHandlerRegistration) error
}) error {
	signal := func(obj any) {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if o, ok := obj.(client.Object); ok {
			w.signal(types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()})
		}
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    signal,
		UpdateFunc: func(_, obj any) { signal(obj) },
		DeleteFunc: signal,
	})
	if err != nil {
		return fmt.Errorf("watch applicationsets: %w", err)
	}
	context.AfterFunc(ctx, func() { _ = inf.RemoveEventHandler(reg) })
	return nil
}

func (w *changes) subscribe(ctx context.Context, key types.NamespacedName) <-chan struct{} {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	w.watchers[key] = append(w.watchers[key], ch)
	w.mu.Unlock()
	context.AfterFunc(ctx, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		ws := slices.DeleteFunc(w.watchers[key], func(c chan struct{}) bool { return c == ch })
		if len(ws) == 0 {
			delete(w.watchers, key)
		} else {
			w.watchers[key] = ws
		}
	})
	return ch
}

func (w *changes) signal(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ch := range w.watchers[key] {
		select {
		case ch <- struct{}{}:
		default: // a change is already pending
		}
	}
}
