package cache

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/graphcd/graphcd/internal/settings"
)

// offlineConfig points at nothing; the caches built with it are fed by hand.
var offlineConfig = &rest.Config{Host: "https://127.0.0.1:1"}

// newOffline returns a Cluster that is never started; tests feed it
// informer events directly. The fixtures track by label.
func newOffline(t *testing.T) (*Cluster, *[]change) {
	t.Helper()
	c, err := New(Options{Config: offlineConfig, TrackingMethod: settings.TrackingLabel})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	var got []change
	c.OnChange(func(app string, key ResourceKey) { got = append(got, change{app: app, key: key}) })
	return c, &got
}

type object struct {
	gk     schema.GroupKind
	name   string
	uid    string
	rv     string
	labels map[string]string
	owners []string
}

func (o object) meta() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: o.name, Namespace: "ns", UID: types.UID(o.uid), ResourceVersion: o.rv, Labels: o.labels,
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
	}}
	if m.ResourceVersion == "" {
		m.ResourceVersion = "1"
	}
	for _, u := range o.owners {
		m.OwnerReferences = append(m.OwnerReferences, metav1.OwnerReference{UID: types.UID(u), Name: "owner"})
	}
	return m
}

var (
	deployGK = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	rsGK     = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	podGK    = schema.GroupKind{Kind: "Pod"}
	cmGK     = schema.GroupKind{Kind: "ConfigMap"}
	appLabel = map[string]string{settings.DefaultInstanceLabelKey: "a"}
)

// webObjects is a Deployment and a Service of app "a" with their
// descendants, children listed before their parents, as informers of
// different kinds may deliver them.
var webObjects = []object{
	{gk: podGK, name: "web-1", uid: "p1", labels: appLabel, owners: []string{"r"}},
	{gk: podGK, name: "web-2", uid: "p2", owners: []string{"r"}},
	{gk: rsGK, name: "web", uid: "r", labels: appLabel, owners: []string{"d"}},
	{gk: deployGK, name: "web", uid: "d", labels: appLabel},
	{gk: endpointSliceGK, name: "web-x", uid: "es", labels: map[string]string{serviceNameLabel: "web", settings.DefaultInstanceLabelKey: "a"}, owners: []string{"s"}},
	{gk: endpointsGK, name: "web", uid: "ep", labels: map[string]string{endpointsManagedByLabel: "endpoint-controller", settings.DefaultInstanceLabelKey: "a"}},
	{gk: serviceGK, name: "web", uid: "s", labels: appLabel},
	{gk: cmGK, name: "other", uid: "cm"},
}

func key(gk schema.GroupKind, name string) ResourceKey {
	return ResourceKey{Group: gk.Group, Kind: gk.Kind, Namespace: "ns", Name: name}
}

func TestIndexManagedAndTree(t *testing.T) {
	c, _ := newOffline(t)
	for _, o := range webObjects {
		c.observe(nil, o.gk, nil, o.meta(), false)
	}

	wantManaged := []ResourceKey{key(serviceGK, "web"), key(deployGK, "web")}
	if diff := cmp.Diff(c.Managed("a"), wantManaged); diff != "" {
		t.Errorf("Managed (-got +want):\n%s", diff)
	}
	want := []Node{
		{ResourceKey: key(serviceGK, "web"), UID: "s"},
		{ResourceKey: key(deployGK, "web"), UID: "d"},
		{ResourceKey: key(endpointsGK, "web"), UID: "ep", ParentUIDs: []string{"s"}},
		{ResourceKey: key(endpointSliceGK, "web-x"), UID: "es", ParentUIDs: []string{"s"}},
		{ResourceKey: key(rsGK, "web"), UID: "r", ParentUIDs: []string{"d"}},
		{ResourceKey: key(podGK, "web-1"), UID: "p1", ParentUIDs: []string{"r"}},
		{ResourceKey: key(podGK, "web-2"), UID: "p2", ParentUIDs: []string{"r"}},
	}
	if diff := cmp.Diff(c.Tree("a"), want); diff != "" {
		t.Errorf("Tree (-got +want):\n%s", diff)
	}
	if got := c.Tree("nobody"); len(got) != 0 {
		t.Errorf("Tree of an unknown app = %v", got)
	}
	for _, tc := range []struct {
		key    ResourceKey
		app    string
		exists bool
	}{
		{key(deployGK, "web"), "a", true},
		{key(podGK, "web-1"), "", true}, // a descendant, even with the label
		{key(cmGK, "other"), "", true},
		{key(cmGK, "absent"), "", false},
	} {
		if app, exists := c.Owner(tc.key); app != tc.app || exists != tc.exists {
			t.Errorf("Owner(%s) = %q, %v; want %q, %v", tc.key, app, exists, tc.app, tc.exists)
		}
	}
}

func TestIndexChanges(t *testing.T) {
	pod := object{gk: podGK, name: "web-2", uid: "p2", rv: "2", owners: []string{"r"}}
	tests := []struct {
		name    string
		old     *object
		obj     object
		deleted bool
		want    []change
	}{
		{"resync of a pod", &webObjects[1], webObjects[1], false, nil},
		{"pod status changed", &webObjects[1], pod, false, []change{{"a", key(podGK, "web-2")}}},
		{"pod deleted", nil, webObjects[1], true, []change{{"a", key(podGK, "web-2")}}},
		{"deployment edited", nil, object{gk: deployGK, name: "web", uid: "d", rv: "2", labels: appLabel}, false, []change{{"a", key(deployGK, "web")}}},
		{"unrelated configmap", nil, object{gk: cmGK, name: "other", uid: "cm", rv: "2"}, false, nil},
		{"new configmap of app b", nil, object{gk: cmGK, name: "b", uid: "b", labels: map[string]string{settings.DefaultInstanceLabelKey: "b"}}, false, []change{{"b", key(cmGK, "b")}}},
		{"deployment moved to app b", nil, object{gk: deployGK, name: "web", uid: "d", rv: "2", labels: map[string]string{settings.DefaultInstanceLabelKey: "b"}}, false, []change{{"a", key(deployGK, "web")}, {"b", key(deployGK, "web")}}},
		{"slice of the service", nil, object{gk: endpointSliceGK, name: "web-x", uid: "es", rv: "2", labels: map[string]string{serviceNameLabel: "web"}}, false, []change{{"a", key(endpointSliceGK, "web-x")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, got := newOffline(t)
			for _, o := range webObjects {
				c.observe(nil, o.gk, nil, o.meta(), false)
			}
			*got = nil
			var old any
			if tt.old != nil {
				old = tt.old.meta()
			}
			var obj any = tt.obj.meta()
			if tt.deleted {
				obj = toolscache.DeletedFinalStateUnknown{Key: "ns/x", Obj: obj}
			}
			c.observe(nil, tt.obj.gk, old, obj, tt.deleted)
			if diff := cmp.Diff(*got, tt.want, cmp.AllowUnexported(change{})); diff != "" {
				t.Errorf("changes (-got +want):\n%s", diff)
			}
		})
	}
}

func TestIndexDropKind(t *testing.T) {
	c, got := newOffline(t)
	for _, o := range webObjects {
		c.observe(nil, o.gk, nil, o.meta(), false)
	}
	*got = nil
	c.mu.Lock()
	changes := c.dropKind(podGK)
	c.mu.Unlock()
	if len(changes) != 2 {
		t.Errorf("changes when Pods go = %v, want two", changes)
	}
	for _, n := range c.Tree("a") {
		if n.Kind == "Pod" {
			t.Errorf("Pod %s still in the tree", n.Name)
		}
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(c.children["r"]) != 0 {
		t.Errorf("ReplicaSet still has children %v", c.children["r"])
	}
}

func TestStripMetadata(t *testing.T) {
	m := object{gk: cmGK, name: "x", uid: "x"}.meta()
	m.Annotations = map[string]string{lastApplied: "{}", "keep": "me"}
	out, err := stripMetadata(m)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*metav1.PartialObjectMetadata)
	if got.ManagedFields != nil {
		t.Errorf("managedFields kept: %v", got.ManagedFields)
	}
	if diff := cmp.Diff(got.Annotations, map[string]string{"keep": "me"}); diff != "" {
		t.Errorf("annotations (-got +want):\n%s", diff)
	}
}

func TestIndexOrphans(t *testing.T) {
	c, _ := newOffline(t)
	var roots []ResourceKey
	c.OnOrphanChange(func(k ResourceKey) { roots = append(roots, k) })
	for _, o := range webObjects {
		c.observe(nil, o.gk, nil, o.meta(), false)
	}
	// Of the web objects only the untracked ConfigMap "other" is a
	// candidate: tracked objects and their descendants never are.
	if diff := cmp.Diff(c.Orphans("ns"), []ResourceKey{key(cmGK, "other")}); diff != "" {
		t.Errorf("Orphans (-got +want):\n%s", diff)
	}
	roots = nil
	stray := object{gk: cmGK, name: "stray", uid: "st", rv: "1"}
	c.observe(nil, cmGK, nil, stray.meta(), false)
	if diff := cmp.Diff(c.Orphans("ns"), []ResourceKey{key(cmGK, "other"), key(cmGK, "stray")}); diff != "" {
		t.Errorf("Orphans (-got +want):\n%s", diff)
	}
	// Adopted by an app: no longer an orphan, and the change is reported.
	adopted := stray
	adopted.rv, adopted.labels = "2", appLabel
	c.observe(nil, cmGK, stray.meta(), adopted.meta(), false)
	if diff := cmp.Diff(c.Orphans("ns"), []ResourceKey{key(cmGK, "other")}); diff != "" {
		t.Errorf("Orphans after adoption (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(roots, []ResourceKey{key(cmGK, "stray"), key(cmGK, "stray")}); diff != "" {
		t.Errorf("orphan changes (-got +want):\n%s", diff)
	}
	if got := c.Orphans("other"); len(got) != 0 {
		t.Errorf("Orphans of another namespace = %v", got)
	}
}
