//go:build integration

package resolvers_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/appstate"
	"github.com/graphcd/graphcd/internal/eventbus"
)

// state is a controller-like state of app: a Deployment with its
// ReplicaSet and Pod, and the Deployment out of sync.
func state(key types.NamespacedName, image string) appstate.State {
	dep := appstate.Ref{Group: "apps", Kind: "Deployment", Namespace: key.Name, Name: "web", UID: "u-dep"}
	rs := appstate.Ref{Group: "apps", Kind: "ReplicaSet", Namespace: key.Name, Name: "web-5d8f", UID: "u-rs"}
	return appstate.State{
		App: key, Revision: "abc123", ReconciledAt: time.Now().UTC().Truncate(time.Second),
		Tree: []appstate.Node{
			{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: key.Name, Name: "web", UID: "u-dep", Sync: v1alpha1.SyncStatusCodeOutOfSync,
				Health: &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusHealthy}, Images: []string{image}},
			{Group: "apps", Version: "v1", Kind: "ReplicaSet", Namespace: key.Name, Name: "web-5d8f", UID: "u-rs", ParentRefs: []appstate.Ref{dep}},
			{Version: "v1", Kind: "Pod", Namespace: key.Name, Name: "web-5d8f-x", UID: "u-pod", ParentRefs: []appstate.Ref{rs},
				Info: []appstate.Info{{Name: "Status Reason", Value: "Running"}}},
		},
		Managed: []appstate.ManagedResource{
			{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: key.Name, Name: "web", Status: v1alpha1.SyncStatusCodeOutOfSync,
				Live: "replicas: 3\n", Desired: "replicas: 2\n", Diff: "-replicas: 3\n+replicas: 2\n"},
			{Version: "v1", Kind: "Service", Namespace: key.Name, Name: "web", Status: v1alpha1.SyncStatusCodeSynced, Live: "x: 1\n", Desired: "x: 1\n"},
		},
	}
}

func TestResourceTreeAndManagedResources(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	var specs []appSpec
	for i := range 5 {
		name := fmt.Sprintf("app-%d", i)
		specs = append(specs, appSpec{name: name})
		if err := states.Put(t.Context(), state(types.NamespacedName{Namespace: ns, Name: name}, "nginx:1.27")); err != nil {
			t.Fatal(err)
		}
	}
	createApps(t, ns, specs...)
	waitCount(t, ns, 5)
	var got struct {
		Applications struct {
			Nodes []struct {
				Name         string
				ResourceTree *struct {
					Revision string
					Nodes    []struct {
						Kind, Name string
						Sync       *string
						ParentRefs []struct{ Kind, Name string }
						Info       []struct{ Name, Value string }
						Images     []string
					}
				}
				ManagedResources []struct{ Kind, Status, Live, Desired, Diff string }
			}
		}
	}
	before := states.reads(ns)
	data(t, `query($ns: [String!]) { applications(first: 5, filter: {namespaces: $ns}) { nodes { name
	  resourceTree { revision nodes { kind name sync parentRefs { kind name } info { name value } images } }
	  managedResources(filter: {outOfSyncOnly: true}) { kind status live desired diff } } } }`,
		map[string]any{"ns": []string{ns}}, &got)
	// One batch read for the page; a second when a loaded machine makes
	// some fields miss the loader's window. Never one per app.
	if n := states.reads(ns) - before; n < 1 || n > 2 {
		t.Errorf("%d state reads for a page of 5 apps, want 1 (2 at most)", n)
	}
	a := got.Applications.Nodes[2]
	if a.ResourceTree == nil || a.ResourceTree.Revision != "abc123" || len(a.ResourceTree.Nodes) != 3 {
		t.Fatalf("tree of %s = %+v", a.Name, a.ResourceTree)
	}
	pod := a.ResourceTree.Nodes[2]
	if pod.Kind != "Pod" || pod.Sync != nil || pod.ParentRefs[0].Kind != "ReplicaSet" || pod.Info[0].Value != "Running" {
		t.Errorf("pod node = %+v", pod)
	}
	if d := a.ResourceTree.Nodes[0]; d.Sync == nil || *d.Sync != "OutOfSync" || d.Images[0] != "nginx:1.27" {
		t.Errorf("deployment node = %+v", d)
	}
	if m := a.ManagedResources; len(m) != 1 || m[0].Kind != "Deployment" || !strings.Contains(m[0].Diff, "+replicas: 2") {
		t.Errorf("out-of-sync managed resources = %+v", m)
	}
}

func TestResourceTreeSubscription(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	key := types.NamespacedName{Namespace: ns, Name: "tree"}
	createApps(t, ns, appSpec{name: "tree"})
	waitCount(t, ns, 1)
	c := dialWS(t, apiURL, 0)
	c.subscribe("t", `subscription($ns: String) { resourceTree(name: "tree", namespace: $ns) { revision nodes { name images } } }`, map[string]any{"ns": ns})
	type treeResult struct {
		ResourceTree *struct {
			Revision string
			Nodes    []struct {
				Name   string
				Images []string
			}
		}
	}
	var got treeResult
	c.next("t", &got)
	if got.ResourceTree != nil {
		t.Fatalf("tree before the controller wrote one = %+v", got.ResourceTree)
	}
	// The controller writes a tree and announces the comparison.
	st := state(key, "nginx:1.28")
	if err := states.Put(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	_ = events.Publish(t.Context(), eventbus.Event{App: key, Type: eventbus.ReconcileCompleted})
	c.next("t", &got)
	if got.ResourceTree == nil || got.ResourceTree.Nodes[0].Images[0] != "nginx:1.28" {
		t.Fatalf("tree after the write = %+v", got.ResourceTree)
	}
}

// An application subscription's event reads the app's state once for all
// the fields that need it.
func TestApplicationSubscriptionReadsStateOnce(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	key := types.NamespacedName{Namespace: ns, Name: "both"}
	if err := states.Put(t.Context(), state(key, "nginx")); err != nil {
		t.Fatal(err)
	}
	createApps(t, ns, appSpec{name: "both"})
	waitCount(t, ns, 1)
	before := states.reads(ns)
	c := dialWS(t, apiURL, 0)
	c.subscribe("a", `subscription($ns: String) { application(name: "both", namespace: $ns) {
	  resourceTree { nodes { kind } } managedResources { kind } } }`, map[string]any{"ns": ns})
	var got struct {
		Application *struct {
			ResourceTree     struct{ Nodes []struct{ Kind string } }
			ManagedResources []struct{ Kind string }
		}
	}
	c.next("a", &got)
	if got.Application == nil || len(got.Application.ResourceTree.Nodes) == 0 || len(got.Application.ManagedResources) == 0 {
		t.Fatalf("event = %+v", got.Application)
	}
	if n := states.reads(ns) - before; n != 1 {
		t.Errorf("%d state reads for one event, want 1", n)
	}
}

// The tree lists the orphaned resources the controller stored, with
// their count.
func TestResourceTreeOrphans(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	key := types.NamespacedName{Namespace: ns, Name: "orphaned"}
	if err := states.Put(t.Context(), appstate.State{App: key, ReconciledAt: time.Now(), OrphansCount: 1500, Orphans: []appstate.Ref{
		{Kind: "ConfigMap", Namespace: "web", Name: "stray"}, {Group: "apps", Kind: "Deployment", Namespace: "web", Name: "old"},
	}}); err != nil {
		t.Fatal(err)
	}
	createApps(t, ns, appSpec{name: "orphaned"})
	waitCount(t, ns, 1)
	var got struct {
		Application struct {
			ResourceTree struct {
				OrphanedNodes []struct{ Group, Kind, Namespace, Name string }
				OrphanedCount int
			}
		}
	}
	data(t, `query($ns: String) { application(name: "orphaned", namespace: $ns) { resourceTree { orphanedNodes { group kind namespace name } orphanedCount } } }`,
		map[string]any{"ns": ns}, &got)
	tree := got.Application.ResourceTree
	if tree.OrphanedCount != 1500 || len(tree.OrphanedNodes) != 2 || tree.OrphanedNodes[0].Name != "stray" || tree.OrphanedNodes[1].Group != "apps" {
		t.Errorf("orphans %+v", tree)
	}
}
