package cache

import (
	"slices"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
)

// serviceNameLabel links an EndpointSlice to its Service.
const serviceNameLabel = "kubernetes.io/service-name"

// endpointsManagedByLabel marks Endpoints written by the endpoints
// controller, which copies the Service's labels (the instance label
// included) onto them.
const endpointsManagedByLabel = "endpoints.kubernetes.io/managed-by"

var (
	serviceGK       = schema.GroupKind{Kind: "Service"}
	endpointSliceGK = schema.GroupKind{Group: "discovery.k8s.io", Kind: "EndpointSlice"}
	endpointsGK     = schema.GroupKind{Kind: "Endpoints"}
)

// maxOwnerDepth bounds walks up ownerReferences (cycles, odd graphs).
const maxOwnerDepth = 16

// entry is what the cache keeps of one object besides the informer store.
type entry struct {
	key     ResourceKey
	uid     types.UID
	rv      string
	app     string
	owners  []types.UID
	service string // EndpointSlice, generated Endpoints: its Service's name
	created time.Time
}

type uidSet map[types.UID]struct{}

// index relates objects to applications and to each other; Cluster.mu
// guards it.
type index struct {
	byUID    map[types.UID]*entry
	byKey    map[ResourceKey]*entry
	children map[types.UID]uidSet
	slices   map[ResourceKey]uidSet // Service key -> EndpointSlice/Endpoints UIDs
	apps     map[string]map[ResourceKey]struct{}
	// roots holds, per namespace, the top-level objects no application
	// tracks: the candidates for orphaned resources.
	roots map[string]map[ResourceKey]struct{}
	full  map[ResourceKey]fullObject
}

func newIndex() index {
	return index{
		byUID:    map[types.UID]*entry{},
		byKey:    map[ResourceKey]*entry{},
		children: map[types.UID]uidSet{},
		slices:   map[ResourceKey]uidSet{},
		apps:     map[string]map[ResourceKey]struct{}{},
		roots:    map[string]map[ResourceKey]struct{}{},
		full:     map[ResourceKey]fullObject{},
	}
}

// change is one OnChange call to make.
type change struct {
	app string
	key ResourceKey
}

// OnChange registers fn to be called for every add, update or delete of an
// object that belongs to an application or descends (ownerReferences, or a
// Service's EndpointSlices) from one, with that application. fn runs on the
// informer's goroutine and must not block. Resyncs that change nothing
// are not reported, nor are events of objects no application relates to.
func (c *Cluster) OnChange(fn func(app string, key ResourceKey)) {
	c.handlersMu.Lock()
	c.handlers = append(c.handlers, fn)
	c.handlersMu.Unlock()
}

func (c *Cluster) notify(changes []change) {
	if len(changes) == 0 {
		return
	}
	c.handlersMu.RLock()
	hs := c.handlers
	c.handlersMu.RUnlock()
	for _, ch := range changes {
		for _, h := range hs {
			h(ch.app, ch.key)
		}
	}
}

// observe applies an informer event to the index.
// old is the previous object of an update, nil otherwise; w is the watch
// that delivered it (nil in tests).
func (c *Cluster) observe(w *watch, gk schema.GroupKind, old, obj any, deleted bool) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
		deleted = true
	}
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return
	}
	if gk == crdGK {
		// Added, removed, or spec changed (served versions); status changes
		// after creation are covered by the follower's later rounds.
		if o, ok := old.(*metav1.PartialObjectMetadata); !ok || o.Generation != m.Generation {
			c.requestSync()
		}
		if !c.filter.watched(gk) {
			return
		}
	}
	key := ResourceKey{Group: gk.Group, Kind: gk.Kind, Namespace: m.Namespace, Name: m.Name}

	c.mu.Lock()
	if w != nil && w.stopped {
		c.mu.Unlock()
		return
	}
	c.events[gk]++
	apps := map[string]struct{}{}
	root := false
	if prev := c.byUID[m.UID]; prev != nil {
		if !deleted && prev.rv == m.ResourceVersion {
			c.mu.Unlock()
			return // a resync
		}
		c.appsOf(prev, apps)
		root = prev.isRoot()
		c.remove(prev)
	}
	delete(c.full, key)
	if !deleted {
		e := &entry{
			key:     key,
			uid:     m.UID,
			rv:      m.ResourceVersion,
			created: m.CreationTimestamp.Time,
		}
		for _, o := range m.OwnerReferences {
			e.owners = append(e.owners, o.UID)
		}
		switch {
		case gk == endpointSliceGK:
			e.service = m.Labels[serviceNameLabel]
		case gk == endpointsGK && m.Labels[endpointsManagedByLabel] != "":
			e.service = m.Name
		}
		// As in Argo CD, only objects without owners are an application's
		// own: controllers copy labels (pod templates, Service labels onto
		// Endpoints and EndpointSlices) and those copies are descendants.
		if len(e.owners) == 0 && e.service == "" {
			e.app = c.tracking.AppOf(m, gk)
		}
		c.add(e)
		c.appsOf(e, apps)
		root = root || e.isRoot()
	}
	c.mu.Unlock()
	if root {
		c.notifyRoot(key)
	}

	changes := make([]change, 0, len(apps))
	for app := range apps {
		changes = append(changes, change{app: app, key: key})
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].app < changes[j].app })
	c.notify(changes)
}

func (ix *index) add(e *entry) {
	ix.byUID[e.uid] = e
	ix.byKey[e.key] = e
	for _, o := range e.owners {
		if ix.children[o] == nil {
			ix.children[o] = uidSet{}
		}
		ix.children[o][e.uid] = struct{}{}
	}
	if e.service != "" {
		sk := ResourceKey{Kind: "Service", Namespace: e.key.Namespace, Name: e.service}
		if ix.slices[sk] == nil {
			ix.slices[sk] = uidSet{}
		}
		ix.slices[sk][e.uid] = struct{}{}
	}
	if e.app != "" {
		if ix.apps[e.app] == nil {
			ix.apps[e.app] = map[ResourceKey]struct{}{}
		}
		ix.apps[e.app][e.key] = struct{}{}
	}
	if e.isRoot() {
		if ix.roots[e.key.Namespace] == nil {
			ix.roots[e.key.Namespace] = map[ResourceKey]struct{}{}
		}
		ix.roots[e.key.Namespace][e.key] = struct{}{}
	}
}

// isRoot reports whether e is a namespaced top-level object that no
// application tracks.
func (e *entry) isRoot() bool {
	return e.app == "" && len(e.owners) == 0 && e.service == "" && e.key.Namespace != ""
}

func (ix *index) remove(e *entry) {
	delete(ix.byUID, e.uid)
	current := ix.byKey[e.key] == e
	if current {
		delete(ix.byKey, e.key)
	}
	for _, o := range e.owners {
		if kids := ix.children[o]; kids != nil {
			delete(kids, e.uid)
			if len(kids) == 0 {
				delete(ix.children, o)
			}
		}
	}
	if e.service != "" {
		sk := ResourceKey{Kind: "Service", Namespace: e.key.Namespace, Name: e.service}
		if s := ix.slices[sk]; s != nil {
			delete(s, e.uid)
			if len(s) == 0 {
				delete(ix.slices, sk)
			}
		}
	}
	if e.app != "" && current {
		if keys := ix.apps[e.app]; keys != nil {
			delete(keys, e.key)
			if len(keys) == 0 {
				delete(ix.apps, e.app)
			}
		}
	}
	if e.isRoot() && current {
		if keys := ix.roots[e.key.Namespace]; keys != nil {
			delete(keys, e.key)
			if len(keys) == 0 {
				delete(ix.roots, e.key.Namespace)
			}
		}
	}
}

// appsOf adds to apps the application of e, or else those of its managed
// ancestors.
func (ix *index) appsOf(e *entry, apps map[string]struct{}) {
	seen := map[types.UID]bool{}
	var walk func(e *entry, depth int)
	walk = func(e *entry, depth int) {
		if e == nil || seen[e.uid] || depth > maxOwnerDepth {
			return
		}
		seen[e.uid] = true
		if e.app != "" {
			apps[e.app] = struct{}{}
			return
		}
		for _, o := range e.owners {
			walk(ix.byUID[o], depth+1)
		}
		if e.service != "" {
			walk(ix.byKey[ResourceKey{Kind: "Service", Namespace: e.key.Namespace, Name: e.service}], depth+1)
		}
	}
	walk(e, 0)
}

// related reports whether e belongs to or descends from an application.
func (ix *index) related(e *entry) bool {
	apps := map[string]struct{}{}
	ix.appsOf(e, apps)
	return len(apps) > 0
}

// dropKind forgets every object of gk and returns the changes to report.
func (ix *index) dropKind(gk schema.GroupKind) []change {
	var changes []change
	var drop []*entry
	for _, e := range ix.byUID {
		if e.key.Group == gk.Group && e.key.Kind == gk.Kind {
			drop = append(drop, e)
		}
	}
	for _, e := range drop {
		apps := map[string]struct{}{}
		ix.appsOf(e, apps)
		ix.remove(e)
		delete(ix.full, e.key)
		for app := range apps {
			changes = append(changes, change{app: app, key: e.key})
		}
	}
	return changes
}

// Owner reports whether the cache holds an object with key, and the
// application it is tracked to ("" for none). It answers from the index, so
// asking about an object that does not exist costs no API call.
func (c *Cluster) Owner(key ResourceKey) (app string, exists bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e := c.byKey[key]
	if e == nil {
		return "", false
	}
	return e.app, true
}

// Managed returns the keys of the objects that belong to app, sorted.
func (c *Cluster) Managed(app string) []ResourceKey {
	c.mu.RLock()
	keys := make([]ResourceKey, 0, len(c.apps[app]))
	for k := range c.apps[app] {
		keys = append(keys, k)
	}
	c.mu.RUnlock()
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	return keys
}

// Tree returns the objects of app and their descendants, parents before
// their children; siblings are sorted by key.
func (c *Cluster) Tree(app string) []Node {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var queue []*entry
	for k := range c.apps[app] {
		if e := c.byKey[k]; e != nil {
			queue = append(queue, e)
		}
	}
	sortEntries(queue)
	seen := map[types.UID]bool{}
	for _, e := range queue {
		seen[e.uid] = true
	}
	var nodes []Node
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		nodes = append(nodes, c.node(e))
		var kids []*entry
		collect := func(uids uidSet) {
			for uid := range uids {
				if k := c.byUID[uid]; k != nil && !seen[uid] {
					seen[uid] = true
					kids = append(kids, k)
				}
			}
		}
		collect(c.children[e.uid])
		if e.key.GroupKind() == serviceGK {
			collect(c.slices[e.key])
		}
		sortEntries(kids)
		queue = append(queue, kids...)
	}
	return nodes
}

func (c *Cluster) node(e *entry) Node {
	n := Node{ResourceKey: e.key, UID: string(e.uid), CreationTimestamp: e.created}
	for _, o := range e.owners {
		if c.byUID[o] != nil && !slices.Contains(n.ParentUIDs, string(o)) {
			n.ParentUIDs = append(n.ParentUIDs, string(o))
		}
	}
	if e.service != "" {
		s := c.byKey[ResourceKey{Kind: "Service", Namespace: e.key.Namespace, Name: e.service}]
		if s != nil && !slices.Contains(n.ParentUIDs, string(s.uid)) {
			n.ParentUIDs = append(n.ParentUIDs, string(s.uid))
		}
	}
	return n
}

func sortEntries(es []*entry) {
	sort.Slice(es, func(i, j int) bool { return es[i].key.less(es[j].key) })
}
