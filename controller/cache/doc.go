// Package cache keeps a live, metadata-only picture of one destination
// cluster for the application controller: which objects exist, which
// application each belongs to, and which objects descend from them.
//
// Start discovers the cluster's API and runs one metadata informer per
// listable kind (minus Events, Leases, review kinds and the configured
// resource.exclusions / resource.inclusions), follows CRDs as they come and
// go, and returns once the initial lists are in:
//
//	c, err := cache.New(cache.Options{Config: restConfig, ClusterURL: url})
//	if err != nil { ... }
//	if err := c.Start(ctx); err != nil { ... }
//	c.OnChange(func(app string, key cache.ResourceKey) { queue.Add(app) })
//	keys := c.Managed("guestbook")     // objects tracked for the app
//	nodes := c.Tree("guestbook")       // plus ReplicaSets, Pods, EndpointSlices
//	live, err := c.Get(ctx, keys[0])   // full object, cached per resourceVersion
//
// An object belongs to an application the way Argo CD 3 decides it. With
// annotation tracking (the default) the tracking id names the application
// and the object itself, so an annotation copied onto another object is
// ignored:
//
//	metadata:
//	  annotations:
//	    argocd.argoproj.io/tracking-id: guestbook:apps/Deployment:default/guestbook-ui
//
// With label tracking the instance label names the application:
//
//	metadata:
//	  labels:
//	    app.kubernetes.io/instance: guestbook
//
// Tracking.Mark writes the same on the objects an application deploys.
//
// As in Argo CD, only objects without ownerReferences are an application's
// own: controllers copy labels onto what they create (Pod templates, the
// Service labels on Endpoints and EndpointSlices), and those copies show up
// in Tree as descendants, not in Managed. Kinds the credentials may not list
// are skipped with a warning.
//
// Options.Namespaces limits the cache to some namespaces, as a cluster
// Secret's namespaces key does: each namespaced kind gets one informer per
// namespace and no cluster-wide list is ever made, so credentials that
// may read only those namespaces do; cluster-scoped kinds are watched only
// with Options.ClusterResources. InScope tells whether an object may be
// managed under those limits:
//
//	c, _ := cache.New(cache.Options{Config: cfg, ClusterURL: url, Namespaces: []string{"web", "db"}})
//	err := c.InScope(schema.GroupKind{Kind: "ConfigMap"}, "kube-system", "x") // *OutOfScopeError
//
// Memory stays bounded: the informers hold only object metadata, with
// managed fields and the last-applied annotation removed; full objects are
// fetched on demand and kept, as JSON, only for objects related to an
// application, until their resourceVersion changes.
package cache
