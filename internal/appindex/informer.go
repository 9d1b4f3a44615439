package appindex

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Start watches the Applications of namespace (all namespaces when empty)
// through cfg and keeps a new index in step until ctx ends. The index
// fills in the background; ready is closed once it holds every app the
// first list returned.
func Start(ctx context.Context, cfg *rest.Config, namespace string) (idx *Index, ready <-chan struct{}, err error) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, nil, err
	}
	opts := ctrlcache.Options{
		Scheme: scheme,
		// The API never shows managedFields; not keeping them saves a
		// third of the memory of a large app list.
		DefaultTransform: ctrlcache.TransformStripManagedFields(),
	}
	if namespace != "" {
		opts.DefaultNamespaces = map[string]ctrlcache.Config{namespace: {}}
	}
	c, err := ctrlcache.New(cfg, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("application cache: %w", err)
	}
	informer, err := c.GetInformer(ctx, &v1alpha1.Application{})
	if err != nil {
		return nil, nil, fmt.Errorf("application informer: %w", err)
	}
	idx = New()
	synced := make(chan struct{})
	go func() { _ = c.Start(ctx) }()
	go func() {
		if idx.Watch(ctx, informer) == nil {
			close(synced)
		}
	}()
	return idx, synced, nil
}
