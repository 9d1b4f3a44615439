// Package catalog is the API server's in-memory view of graphcd's own
// objects — Applications (indexed by appindex), ApplicationSets and
// AppProjects — kept by one informer cache, so that reads never cost a
// Kubernetes request.
package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appindex"
)

// AppNamespaces says which namespaces' Applications the catalog holds
// (project.AppNamespaces implements it).
type AppNamespaces interface {
	// Allowed reports whether the Applications of namespace are served.
	Allowed(namespace string) bool
	// Watch returns the namespaces to watch, or nil to watch every
	// namespace and keep those Allowed.
	Watch() []string
}

// Catalog answers reads of Applications, ApplicationSets and AppProjects
// from memory.
type Catalog struct {
	// Apps is the index of Applications.
	Apps  *appindex.Index
	cache ctrlcache.Cache
	// namespace is where AppProjects live; "" means every namespace.
	namespace string
	// apps selects the namespaces of the Applications and
	// ApplicationSets; nil: namespace.
	apps AppNamespaces
	// sets signals changes of ApplicationSets to their watchers.
	sets changes
}

// Start watches the AppProjects of namespace (all namespaces when empty)
// and the Applications and ApplicationSets of apps (those of namespace
// when nil) through cfg
// until ctx ends. The catalog fills in the background, once graphcd's
// CRDs are served; ready is closed when it holds everything the first
// lists returned.
func Start(ctx context.Context, cfg *rest.Config, namespace string, apps AppNamespaces) (c *Catalog, ready <-chan struct{}, err error) {
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
	// Applications of graphcd's namespace alone need no watch of their own.
	if names := appsWatch(apps); apps != nil && !slices.Equal(names, []string{namespace}) {
		watch := map[string]ctrlcache.Config{metav1.NamespaceAll: {}}
		if names != nil {
			watch = map[string]ctrlcache.Config{}
			for _, n := range names {
				watch[n] = ctrlcache.Config{}
			}
		}
		opts.ByObject = map[client.Object]ctrlcache.ByObject{
			&v1alpha1.Application{}:    {Namespaces: watch},
			&v1alpha1.ApplicationSet{}: {Namespaces: watch},
		}
		// Per-object namespaces make the cache ask whether Applications
		// are namespaced when it is built, which discovery cannot answer
		// before graphcd's CRDs are installed; graphcd's own kinds need
		// no discovery.
		opts.Mapper = ownKinds()
	}
	cache, err := ctrlcache.New(cfg, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("object cache: %w", err)
	}
	c = &Catalog{Apps: appindex.New(), cache: cache, namespace: namespace, apps: apps, sets: changes{watchers: map[types.NamespacedName][]chan struct{}{}}}
	synced := make(chan struct{})
	go func() { _ = cache.Start(ctx) }()
	go func() {
		if c.watch(ctx) == nil {
			close(synced)
		}
	}()
	return c, synced, nil
}

// appsWatch is apps.Watch(), nil for no apps.
func appsWatch(apps AppNamespaces) []string {
	if apps == nil {
		return nil
	}
	return apps.Watch()
}

// ownKinds maps graphcd's kinds without asking the API server. Their
// list kinds are mapped too: a cache over several namespaces (the
// --application-namespaces case) asks the mapper whether the list passed
// to List is namespaced.
func ownKinds() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper([]schema.GroupVersion{v1alpha1.GroupVersion})
	for _, kind := range []string{"Application", "ApplicationSet", "AppProject"} {
		m.Add(v1alpha1.GroupVersion.WithKind(kind), meta.RESTScopeNamespace)
		m.Add(v1alpha1.GroupVersion.WithKind(kind+"List"), meta.RESTScopeNamespace)
	}
	return m
}

// crdRetry is how often the catalog looks again for graphcd's CRDs when the
// server started before they were installed.
const crdRetry = 2 * time.Second

// watch registers the informers, waiting for the CRDs if they are not
// served yet, and returns once everything is loaded or ctx ends.
func (c *Catalog) watch(ctx context.Context) error {
	for {
		apps, err := c.cache.GetInformer(ctx, &v1alpha1.Application{})
		if err == nil {
			_, err = c.cache.GetInformer(ctx, &v1alpha1.AppProject{})
		}
		var sets ctrlcache.Informer
		if err == nil {
			sets, err = c.cache.GetInformer(ctx, &v1alpha1.ApplicationSet{})
		}
		if err == nil {
			if err := c.Apps.Watch(ctx, servedOnly{apps, c.apps}); err != nil {
				return err
			}
			if err := c.sets.watch(ctx, servedOnly{sets, c.apps}); err != nil {
				return err
			}
			if !c.cache.WaitForCacheSync(ctx) {
				return context.Cause(ctx)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(crdRetry):
		}
	}
}

// servedOnly passes on the events of the Applications in the namespaces
// apps allows: with globs the informer watches every namespace.
type servedOnly struct {
	ctrlcache.Informer
	apps AppNamespaces
}

func (s servedOnly) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	if s.apps == nil {
		return s.Informer.AddEventHandler(h)
	}
	return s.Informer.AddEventHandler(toolscache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			o, ok := obj.(client.Object)
			return ok && s.apps.Allowed(o.GetNamespace())
		},
		Handler: h,
	})
}

// Projects returns every AppProject, ordered by name. The objects are
// shared with the cache: never modify them.
func (c *Catalog) Projects(ctx context.Context) ([]*v1alpha1.AppProject, error) {
	var list v1alpha1.AppProjectList
	if err := c.cache.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	out := make([]*v1alpha1.AppProject, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	slices.SortFunc(out, func(a, b *v1alpha1.AppProject) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return out, nil
}

// Project returns the AppProject name, or nil when there is none. A
// catalog of every namespace returns the first of that name.
func (c *Catalog) Project(ctx context.Context, name string) (*v1alpha1.AppProject, error) {
	if c.namespace == "" {
		all, err := c.Projects(ctx)
		if err != nil {
			return nil, err
		}
		if i := slices.IndexFunc(all, func(p *v1alpha1.AppProject) bool { return p.Name == name }); i >= 0 {
			return all[i], nil
		}
		return nil, nil
	}
	p := &v1alpha1.AppProject{}
	err := c.cache.Get(ctx, types.NamespacedName{Namespace: c.namespace, Name: name}, p, client.UnsafeDisableDeepCopy)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get project %s: %w", name, err)
	}
	return p, nil
}

// WatchProjects calls set with every AppProject the catalog holds and then
// with each one added or changed, and remove with the name of each one
// deleted, until ctx ends. It returns once the projects present at the
// start have been given to set. The objects are shared with the cache:
// never modify them.
func (c *Catalog) WatchProjects(ctx context.Context, set func(*v1alpha1.AppProject), remove func(name string)) error {
	inf, err := c.cache.GetInformer(ctx, &v1alpha1.AppProject{})
	if err != nil {
		return fmt.Errorf("watch projects: %w", err)
	}
	project := func(obj any) *v1alpha1.AppProject {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		p, _ := obj.(*v1alpha1.AppProject)
		return p
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if p := project(obj); p != nil {
				set(p)
			}
		},
		UpdateFunc: func(_, obj any) {
			if p := project(obj); p != nil {
				set(p)
			}
		},
		DeleteFunc: func(obj any) {
			if p := project(obj); p != nil {
				remove(p.Name)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watch projects: %w", err)
	}
	go func() {
		<-ctx.Done()
		_ = inf.RemoveEventHandler(reg)
	}()
	if !toolscache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		return context.Cause(ctx)
	}
	return nil
}
