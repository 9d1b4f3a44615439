package appindex

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/repourl"
)

// Index is the in-memory view of the Applications. It is safe for
// concurrent use. The zero value is not usable; call New.
type Index struct {
	mu sync.RWMutex
	// byKey finds an app's entry; sorted holds the same entries ordered
	// by (namespace, name), which is the default order and the tie-break
	// of every other order.
	byKey  map[types.NamespacedName]*entry
	sorted []*entry
	// watchers are signalled when the app of their key changes.
	watchers map[types.NamespacedName][]chan struct{}
}

// entry is one app with the values filters and orders read, computed once
// when the app changes rather than on every query.
type entry struct {
	app *v1alpha1.Application
	key types.NamespacedName
	// sync and health are the app's, Unknown when not compared yet.
	sync         v1alpha1.SyncStatusCode
	health       v1alpha1.HealthStatusCode
	lowerName    string
	syncRank     int
	healthRank   int
	lastDeployed int64 // Unix nanoseconds; 0 when never deployed
	repos        []string
	autoSync     bool
}

// New returns an empty index.
func New() *Index {
	return &Index{byKey: map[types.NamespacedName]*entry{}, watchers: map[types.NamespacedName][]chan struct{}{}}
}

// Informer is the part of an informer Watch needs (client-go's
// SharedIndexInformer and controller-runtime's cache.Informer have it).
type Informer interface {
	AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error)
}

// Watch keeps the index in step with informer and returns once the index
// holds every app the informer had listed, or when ctx ends.
func (x *Index) Watch(ctx context.Context, informer Informer) error {
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { x.upsertObject(obj) },
		UpdateFunc: func(_, obj any) { x.upsertObject(obj) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if app, ok := obj.(*v1alpha1.Application); ok {
				x.Delete(types.NamespacedName{Namespace: app.Namespace, Name: app.Name})
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watch applications: %w", err)
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		return fmt.Errorf("watch applications: %w", context.Cause(ctx))
	}
	return nil
}

func (x *Index) upsertObject(obj any) {
	if app, ok := obj.(*v1alpha1.Application); ok {
		x.Upsert(app)
	}
}

// Upsert adds app or replaces the app of the same namespace and name. The
// index keeps app itself: do not modify it afterwards.
func (x *Index) Upsert(app *v1alpha1.Application) {
	e := newEntry(app)
	x.mu.Lock()
	defer x.mu.Unlock()
	defer x.signal(e.key)
	if old, ok := x.byKey[e.key]; ok {
		*old = *e // same position in sorted: the name did not change
		return
	}
	x.byKey[e.key] = e
	i, _ := slices.BinarySearchFunc(x.sorted, e.key, compareEntryKey)
	x.sorted = slices.Insert(x.sorted, i, e)
}

// Delete removes the app with key, if present.
func (x *Index) Delete(key types.NamespacedName) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, ok := x.byKey[key]; !ok {
		return
	}
	defer x.signal(key)
	delete(x.byKey, key)
	if i, found := slices.BinarySearchFunc(x.sorted, key, compareEntryKey); found {
		x.sorted = slices.Delete(x.sorted, i, i+1)
	}
}

// Changes returns a channel that receives a value after the app with key
// is created, changed or deleted, until ctx ends. Changes coalesce: one
// value may stand for several; read the app with Get after each.
func (x *Index) Changes(ctx context.Context, key types.NamespacedName) <-chan struct{} {
	ch := make(chan struct{}, 1)
	x.mu.Lock()
	x.watchers[key] = append(x.watchers[key], ch)
	x.mu.Unlock()
	context.AfterFunc(ctx, func() {
		x.mu.Lock()
		defer x.mu.Unlock()
		ws := slices.DeleteFunc(x.watchers[key], func(c chan struct{}) bool { return c == ch })
		if len(ws) == 0 {
			delete(x.watchers, key)
		} else {
			x.watchers[key] = ws
		}
	})
	return ch
}

// signal tells the watchers of key that it changed. x.mu is held.
func (x *Index) signal(key types.NamespacedName) {
	for _, ch := range x.watchers[key] {
		select {
		case ch <- struct{}{}:
		default: // a change is already pending
		}
	}
}

// Get returns the app with key, or nil.
func (x *Index) Get(key types.NamespacedName) *v1alpha1.Application {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if e, ok := x.byKey[key]; ok {
		return e.app
	}
	return nil
}

// Len returns the number of apps.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.sorted)
}

func compareEntryKey(e *entry, key types.NamespacedName) int {
	return compareKeys(e.key, key)
}

func compareKeys(a, b types.NamespacedName) int {
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

func newEntry(app *v1alpha1.Application) *entry {
	e := &entry{
		app:       app,
		key:       types.NamespacedName{Namespace: app.Namespace, Name: app.Name},
		lowerName: strings.ToLower(app.Name),
		sync:      cmp.Or(app.Status.Sync.Status, v1alpha1.SyncStatusCodeUnknown),
		health:    cmp.Or(app.Status.Health.Status, v1alpha1.HealthStatusUnknown),
	}
	e.syncRank, e.healthRank = SyncRank(e.sync), HealthRank(e.health)
	if h := app.Status.History; len(h) > 0 {
		e.lastDeployed = h[len(h)-1].DeployedAt.UnixNano()
	}
	if s := app.Spec.Source; s != nil {
		e.repos = append(e.repos, repourl.Normalize(s.RepoURL))
	}
	for _, s := range app.Spec.Sources {
		e.repos = append(e.repos, repourl.Normalize(s.RepoURL))
	}
	if p := app.Spec.SyncPolicy; p != nil && p.Automated != nil {
		e.autoSync = p.Automated.Enabled == nil || *p.Automated.Enabled
	}
	return e
}

// SyncRank orders sync statuses so that the ones needing attention come
// first: OutOfSync, Unknown (and anything unrecognised), Synced.
func SyncRank(s v1alpha1.SyncStatusCode) int {
	switch s {
	case v1alpha1.SyncStatusCodeOutOfSync:
		return 0
	case v1alpha1.SyncStatusCodeSynced:
		return 2
	default:
		return 1
	}
}

// HealthRank orders health statuses worst first: Degraded, Missing,
// Unknown (and anything unrecognised), Progressing, Suspended, Healthy.
func HealthRank(h v1alpha1.HealthStatusCode) int {
	switch h {
	case v1alpha1.HealthStatusDegraded:
		return 0
	case v1alpha1.HealthStatusMissing:
		return 1
	case v1alpha1.HealthStatusProgressing:
		return 3
	case v1alpha1.HealthStatusSuspended:
		return 4
	case v1alpha1.HealthStatusHealthy:
		return 5
	default:
		return 2
	}
}
