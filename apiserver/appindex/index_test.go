package appindex

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// app builds an Application; opts adjust it.
func app(ns, name string, opts ...func(*v1alpha1.Application)) *v1alpha1.Application {
	a := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", TargetRevision: "HEAD"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: name},
		},
	}
	a.Status.Sync.Status = v1alpha1.SyncStatusCodeSynced
	a.Status.Health.Status = v1alpha1.HealthStatusHealthy
	for _, o := range opts {
		o(a)
	}
	return a
}

func withSync(s v1alpha1.SyncStatusCode) func(*v1alpha1.Application) {
	return func(a *v1alpha1.Application) { a.Status.Sync.Status = s }
}

func withHealth(h v1alpha1.HealthStatusCode) func(*v1alpha1.Application) {
	return func(a *v1alpha1.Application) { a.Status.Health.Status = h }
}

func names(p Page) []string {
	out := make([]string, len(p.Items))
	for i, a := range p.Items {
		out[i] = a.Name
	}
	return out
}

func mustPage(t *testing.T, x *Index, q Query) Page {
	t.Helper()
	p, err := x.Page(q)
	if err != nil {
		t.Fatalf("Page(%+v): %v", q, err)
	}
	return p
}

func TestFilters(t *testing.T) {
	enabled, disabled := true, false
	x := New()
	x.Upsert(app("graphcd", "alpha", withSync(v1alpha1.SyncStatusCodeOutOfSync)))
	x.Upsert(app("graphcd", "beta", withHealth(v1alpha1.HealthStatusDegraded), func(a *v1alpha1.Application) {
		a.Spec.Project = "team-a"
		a.Labels = map[string]string{"team": "a", "env": "prod"}
		a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}
	}))
	x.Upsert(app("graphcd", "gamma", func(a *v1alpha1.Application) {
		a.Spec.Destination = v1alpha1.ApplicationDestination{Name: "prod-eu", Namespace: "web"}
		a.Spec.Source = nil
		a.Spec.Sources = []v1alpha1.ApplicationSource{{RepoURL: "https://Git.example.com/Other/", TargetRevision: "v1.2.0"}}
		a.Labels = map[string]string{"team": "b"}
		a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Enabled: &disabled}}
	}))
	x.Upsert(app("tenant", "delta", func(a *v1alpha1.Application) { a.Spec.Project = "" }))

	sel, err := labels.Parse("team in (a,b),env!=dev")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		filter Filter
		want   []string
	}{
		{"all", Filter{}, []string{"alpha", "beta", "gamma", "delta"}},
		{"app namespace", Filter{Namespaces: []string{"tenant"}}, []string{"delta"}},
		{"project, empty means default", Filter{Projects: []string{"default"}}, []string{"alpha", "gamma", "delta"}},
		{"sync", Filter{Sync: []v1alpha1.SyncStatusCode{v1alpha1.SyncStatusCodeOutOfSync}}, []string{"alpha"}},
		{"health any of", Filter{Health: []v1alpha1.HealthStatusCode{v1alpha1.HealthStatusDegraded, v1alpha1.HealthStatusMissing}}, []string{"beta"}},
		{"labels", Filter{Labels: sel}, []string{"beta", "gamma"}},
		{"cluster by name", Filter{Clusters: []string{"prod-eu"}}, []string{"gamma"}},
		{"cluster by server", Filter{Clusters: []string{"https://kubernetes.default.svc"}}, []string{"alpha", "beta", "delta"}},
		{"destination namespace", Filter{DestinationNamespaces: []string{"web", "alpha"}}, []string{"alpha", "gamma"}},
		{"repo normalised, multi-source", Filter{Repos: []string{"https://git.example.com/other.git"}}, []string{"gamma"}},
		{"target revision", Filter{TargetRevisions: []string{"v1.2.0"}}, []string{"gamma"}},
		{"auto-sync on", Filter{AutoSync: &enabled}, []string{"beta"}},
		{"auto-sync off includes disabled", Filter{AutoSync: &disabled}, []string{"alpha", "gamma", "delta"}},
		{"search is a case-insensitive substring", Filter{Search: "ELT"}, []string{"delta"}},
		{"and across fields", Filter{Projects: []string{"default"}, Search: "a"}, []string{"alpha", "gamma", "delta"}},
		{"no match", Filter{Projects: []string{"nope"}}, []string{}},
		{"allow hides apps", Filter{Allow: func(a *v1alpha1.Application) bool { return a.Spec.Project != "team-a" }}, []string{"alpha", "gamma", "delta"}},
		{"allow and search", Filter{Search: "a", Allow: func(a *v1alpha1.Application) bool { return a.Name != "gamma" }}, []string{"alpha", "beta", "delta"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustPage(t, x, Query{First: 10, Filter: tt.filter})
			// Namespace "graphcd" sorts before "tenant".
			if diff := cmp.Diff(names(p), tt.want); diff != "" {
				t.Errorf("names (-got +want):\n%s", diff)
			}
			if p.TotalCount != len(tt.want) {
				t.Errorf("TotalCount = %d, want %d", p.TotalCount, len(tt.want))
			}
		})
	}
}

func TestOrders(t *testing.T) {
	x := New()
	deployed := func(sec int64) func(*v1alpha1.Application) {
		return func(a *v1alpha1.Application) {
			a.Status.History = []v1alpha1.RevisionHistory{{ID: 1, DeployedAt: metav1.NewTime(time.Unix(sec, 0))}}
		}
	}
	x.Upsert(app("ns", "a", withHealth(v1alpha1.HealthStatusHealthy), deployed(30)))
	x.Upsert(app("ns", "b", withHealth(v1alpha1.HealthStatusDegraded), withSync(v1alpha1.SyncStatusCodeOutOfSync), deployed(10)))
	x.Upsert(app("ns", "c", withHealth(v1alpha1.HealthStatusProgressing), withSync(v1alpha1.SyncStatusCodeUnknown)))
	x.Upsert(app("ns", "d", withHealth(v1alpha1.HealthStatusDegraded), deployed(20)))

	tests := []struct {
		order Order
		want  []string
	}{
		{Order{}, []string{"a", "b", "c", "d"}},
		{Order{Field: OrderName, Desc: true}, []string{"d", "c", "b", "a"}},
		{Order{Field: OrderSync}, []string{"b", "c", "a", "d"}},
		{Order{Field: OrderHealth}, []string{"b", "d", "c", "a"}},
		{Order{Field: OrderHealth, Desc: true}, []string{"a", "c", "d", "b"}},
		{Order{Field: OrderLastDeployed}, []string{"c", "b", "d", "a"}},
		{Order{Field: OrderLastDeployed, Desc: true}, []string{"a", "d", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s desc=%v", tt.order.Field, tt.order.Desc), func(t *testing.T) {
			// Page through two at a time: the cursors must join the pages
			// into the whole order.
			var got []string
			q := Query{First: 2, Order: tt.order}
			for range 10 {
				p := mustPage(t, x, q)
				got = append(got, names(p)...)
				if !p.HasNextPage {
					break
				}
				q.After = p.EndCursor
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("order (-got +want):\n%s", diff)
			}
		})
	}
}

// TestPagesStableUnderChanges checks that apps created and deleted before
// the cursor while a client pages through do not shift later pages.
func TestPagesStableUnderChanges(t *testing.T) {
	x := New()
	for i := range 10 {
		x.Upsert(app("ns", fmt.Sprintf("app-%02d", i)))
	}
	first := mustPage(t, x, Query{First: 4})
	if diff := cmp.Diff(names(first), []string{"app-00", "app-01", "app-02", "app-03"}); diff != "" {
		t.Fatalf("first page (-got +want):\n%s", diff)
	}
	if first.HasPreviousPage || !first.HasNextPage || first.TotalCount != 10 {
		t.Fatalf("first page flags: prev=%v next=%v total=%d", first.HasPreviousPage, first.HasNextPage, first.TotalCount)
	}
	// Before the next page: an app is created before the cursor, the app
	// the cursor names is deleted, and one is created after it.
	x.Upsert(app("ns", "app-00a"))
	x.Delete(types.NamespacedName{Namespace: "ns", Name: "app-03"})
	x.Upsert(app("ns", "app-04a"))

	second := mustPage(t, x, Query{First: 4, After: first.EndCursor})
	if diff := cmp.Diff(names(second), []string{"app-04", "app-04a", "app-05", "app-06"}); diff != "" {
		t.Errorf("second page (-got +want):\n%s", diff)
	}
	if !second.HasPreviousPage || !second.HasNextPage || second.TotalCount != 11 {
		t.Errorf("second page flags: prev=%v next=%v total=%d", second.HasPreviousPage, second.HasNextPage, second.TotalCount)
	}
	// An update keeps the app's place and shows the new state.
	x.Upsert(app("ns", "app-05", withSync(v1alpha1.SyncStatusCodeOutOfSync)))
	third := mustPage(t, x, Query{First: 1, After: second.Cursor(1)})
	if got := third.Items[0]; got.Name != "app-05" || got.Status.Sync.Status != v1alpha1.SyncStatusCodeOutOfSync {
		t.Errorf("after update: %s %s, want app-05 OutOfSync", got.Name, got.Status.Sync.Status)
	}
	if x.Len() != 11 {
		t.Errorf("Len = %d, want 11", x.Len())
	}
}

func TestBadQueries(t *testing.T) {
	x := New()
	x.Upsert(app("ns", "a"))
	x.Upsert(app("ns", "b"))
	byName := mustPage(t, x, Query{First: 1})
	tests := []struct {
		name string
		q    Query
	}{
		{"first too large", Query{First: MaxFirst + 1}},
		{"negative first", Query{First: -1}},
		{"unknown order", Query{First: 1, Order: Order{Field: "SIZE"}}},
		{"cursor not base64", Query{First: 1, After: "!!"}},
		{"cursor not JSON", Query{First: 1, After: "bm90IGpzb24"}},
		{"cursor of another order", Query{First: 1, After: byName.EndCursor, Order: Order{Field: OrderHealth}}},
		{"cursor too long", Query{First: 1, After: string(make([]byte, 2*maxCursorLen))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := x.Page(tt.q)
			if !errors.Is(err, ErrBadQuery) {
				t.Fatalf("err = %v, want ErrBadQuery", err)
			}
		})
	}
}

func TestGetAndDelete(t *testing.T) {
	x := New()
	a := app("ns", "a")
	x.Upsert(a)
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	if got := x.Get(key); got != a {
		t.Fatalf("Get = %v, want the app stored", got)
	}
	x.Delete(key)
	x.Delete(key) // twice is harmless
	if x.Get(key) != nil || x.Len() != 0 {
		t.Errorf("app still there after Delete")
	}
	if p := mustPage(t, x, Query{First: 5}); len(p.Items) != 0 || p.HasNextPage || p.EndCursor != "" {
		t.Errorf("empty index page = %+v", p)
	}
}

func TestChanges(t *testing.T) {
	x := New()
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	ctx, cancel := context.WithCancel(t.Context())
	ch := x.Changes(ctx, key)
	x.Upsert(app("ns", "other"))
	select {
	case <-ch:
		t.Fatal("signalled for another app")
	default:
	}
	x.Upsert(app("ns", "a"))
	x.Upsert(app("ns", "a", withSync(v1alpha1.SyncStatusCodeOutOfSync))) // coalesces
	<-ch
	select {
	case <-ch:
		t.Fatal("two signals for changes made before the first was read")
	default:
	}
	x.Delete(key)
	<-ch
	cancel()
	for x.watcherCount(key) != 0 { // AfterFunc runs asynchronously
		runtime.Gosched()
	}
}

func (x *Index) watcherCount(key types.NamespacedName) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.watchers[key])
}
