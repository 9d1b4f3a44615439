package appset

import (
	"context"
	"maps"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// resourcesEvery bounds how often a set's status.resources is written
// when only its Applications' sync and health changed: a thousand
// Applications syncing change it every moment, and each write carries
// them all.
const resourcesEvery = 10 * time.Second

// generations remembers each set's last full generation, to tell a
// reconcile that only its Applications' sync or health status changed
// (nothing its generators or template read) from one that must generate
// again.
type generations struct {
	mu sync.Mutex
	// clusters counts the cluster Secret changes.
	clusters uint64
	// apps counts, per set, the changes of its Applications that a
	// generation must see (spec, metadata, creation, deletion).
	apps map[types.NamespacedName]uint64
	last map[types.NamespacedName]generation
}

// generation is what a full generation of a set saw.
type generation struct {
	setGeneration    int64
	annotations      map[string]string
	labels           map[string]string
	clusters, apps   uint64
	due              time.Time // the next periodic generation; zero: none
	ok               bool      // generated and written without a failure
	resourcesWritten time.Time
}

func (g *generations) clusterChanged() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.clusters++
}

func (g *generations) appChanged(set types.NamespacedName) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.apps == nil {
		g.apps = map[types.NamespacedName]uint64{}
	}
	g.apps[set]++
}

// counters are what a generation starting now sees: the cluster and the
// set's Application changes so far.
func (g *generations) counters(key types.NamespacedName) (clusters, apps uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.clusters, g.apps[key]
}

// generated records a full generation of set that started when the
// counters were clusters and apps (changes during it generate again); ok
// when nothing failed, every the periodic generation's interval.
func (g *generations) generated(set *v1alpha1.ApplicationSet, clusters, apps uint64, ok bool, every time.Duration) {
	key := types.NamespacedName{Namespace: set.Namespace, Name: set.Name}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.last == nil {
		g.last = map[types.NamespacedName]generation{}
	}
	rec := generation{setGeneration: set.Generation, annotations: withoutRefresh(set.Annotations), labels: maps.Clone(set.Labels),
		clusters: clusters, apps: apps, ok: ok, resourcesWritten: time.Now()}
	if every > 0 {
		rec.due = time.Now().Add(every)
	}
	g.last[key] = rec
}

// withoutRefresh is a set's annotations but RefreshAnnotation, which a
// generation removes after serving it.
func withoutRefresh(annotations map[string]string) map[string]string {
	out := maps.Clone(annotations)
	delete(out, RefreshAnnotation)
	return out
}

func (g *generations) forget(key types.NamespacedName) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.last, key)
	delete(g.apps, key)
}

// statusOnly reports whether set needs no generation, only its
// resources followed: its last generation succeeded, and since then
// neither the set, nor the clusters, nor its Applications' specs changed,
// and no periodic generation is due. A RollingSync always generates: it
// moves on as its Applications turn Healthy.
func (g *generations) statusOnly(set *v1alpha1.ApplicationSet) (generation, bool) {
	key := types.NamespacedName{Namespace: set.Namespace, Name: set.Name}
	g.mu.Lock()
	defer g.mu.Unlock()
	rec, seen := g.last[key]
	switch {
	case !seen, !rec.ok, isRolling(set), rec.setGeneration != set.Generation,
		!maps.Equal(rec.annotations, withoutRefresh(set.Annotations)), !maps.Equal(rec.labels, set.Labels),
		rec.clusters != g.clusters, rec.apps != g.apps[key],
		!rec.due.IsZero() && !time.Now().Before(rec.due):
		return generation{}, false
	}
	return rec, true
}

// resourcesWrote records a write of set's resources.
func (g *generations) resourcesWrote(key types.NamespacedName) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if rec, ok := g.last[key]; ok {
		rec.resourcesWritten = time.Now()
		g.last[key] = rec
	}
}

// followResources writes the set's status.resources from its
// Applications as they are, at most every resourcesEvery, and keeps the
// periodic generation rec says is due.
func (r *Reconciler) followResources(ctx context.Context, set *v1alpha1.ApplicationSet, rec generation) (ctrl.Result, error) {
	key := types.NamespacedName{Namespace: set.Namespace, Name: set.Name}
	untilDue := time.Duration(0)
	if !rec.due.IsZero() {
		untilDue = time.Until(rec.due)
	}
	if wait := time.Until(rec.resourcesWritten.Add(resourcesEvery)); wait > 0 {
		if untilDue > 0 {
			wait = min(wait, untilDue)
		}
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	var owned v1alpha1.ApplicationList
	if err := r.client.List(ctx, &owned, client.InNamespace(set.Namespace), client.MatchingFields{ownerIndex: string(set.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, err
	}
	next := set.Status.DeepCopy()
	next.Resources = resources(owned.Items, nil)
	next.ResourcesCount = int64(len(next.Resources))
	if len(next.Resources) > maxStatusEntries {
		next.Resources = next.Resources[:maxStatusEntries]
	}
	if !equality.Semantic.DeepEqual(set.Status.Resources, next.Resources) || set.Status.ResourcesCount != next.ResourcesCount {
		set = set.DeepCopy()
		set.Status = *next
		if err := r.client.Status().Update(ctx, set); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		r.gens.resourcesWrote(key)
	}
	return ctrl.Result{RequeueAfter: untilDue}, nil
}
