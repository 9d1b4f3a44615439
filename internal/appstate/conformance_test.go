package appstate_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/appstate"
)

// sampleState returns a state with every field set, for app n.
func sampleState(n int) appstate.State {
	app := types.NamespacedName{Namespace: "graphcd", Name: fmt.Sprintf("app-%d", n)}
	created := time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC)
	return appstate.State{
		App: app, Revision: fmt.Sprintf("%040d", n), ReconciledAt: created.Add(time.Minute),
		Tree: []appstate.Node{
			{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "web", Name: "ui", UID: "u1",
				Health: &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusHealthy}, Sync: v1alpha1.SyncStatusCodeSynced,
				Images: []string{"nginx:1.27"}, CreatedAt: &created, ResourceVersion: "10"},
			{Group: "apps", Version: "v1", Kind: "ReplicaSet", Namespace: "web", Name: "ui-1", UID: "u2",
				ParentRefs: []appstate.Ref{{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "ui", UID: "u1"}}, CreatedAt: &created},
			{Version: "v1", Kind: "Pod", Namespace: "web", Name: "ui-1-x", UID: "u3",
				ParentRefs: []appstate.Ref{{Group: "apps", Kind: "ReplicaSet", Namespace: "web", Name: "ui-1", UID: "u2"}},
				Info:       []appstate.Info{{Name: "Status Reason", Value: "Running"}, {Name: "Containers", Value: "1/1"}},
				Health:     &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusProgressing, Message: "starting"}, CreatedAt: &created},
			{Version: "v1", Kind: "Service", Namespace: "web", Name: "ui", Missing: true,
				Health: &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusMissing}, Sync: v1alpha1.SyncStatusCodeOutOfSync},
		},
		Managed: []appstate.ManagedResource{{
			Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "web", Name: "ui",
			Status: v1alpha1.SyncStatusCodeOutOfSync, Health: &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusHealthy},
			Live: "kind: Deployment\nspec:\n  replicas: 2\n", Desired: "kind: Deployment\nspec:\n  replicas: 1\n",
			Diff: "--- live\n+++ desired\n-  replicas: 2\n+  replicas: 1\n", RequiresPruning: false, Hook: false,
		}},
	}
}

// runConformance checks the behaviour every Store must have.
func runConformance(t *testing.T, newStore func(t *testing.T) appstate.Store) {
	t.Run("absent", func(t *testing.T) {
		s := newStore(t)
		got, err := s.Get(t.Context(), types.NamespacedName{Namespace: "graphcd", Name: "nope"})
		if err != nil || got != nil {
			t.Fatalf("Get of an absent app = %v, %v; want nil, nil", got, err)
		}
		many, err := s.GetMany(t.Context(), nil)
		if err != nil || len(many) != 0 {
			t.Fatalf("GetMany(nil) = %v, %v", many, err)
		}
	})
	t.Run("round trip", func(t *testing.T) {
		s := newStore(t)
		want := sampleState(1)
		if err := s.Put(t.Context(), want); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(t.Context(), want.App)
		if err != nil {
			t.Fatal(err)
		}
		if got == nil {
			t.Fatal("Get after Put = nil")
		}
		if d := cmp.Diff(*got, want); d != "" {
			t.Errorf("Get after Put (-got +want):\n%s", d)
		}
	})
	t.Run("put replaces", func(t *testing.T) {
		s := newStore(t)
		first, second := sampleState(1), sampleState(1)
		second.Revision, second.Tree = "other", nil
		for _, st := range []appstate.State{first, second} {
			if err := s.Put(t.Context(), st); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Get(t.Context(), first.App)
		if err != nil || got == nil {
			t.Fatalf("Get = %v, %v", got, err)
		}
		if d := cmp.Diff(*got, second); d != "" {
			t.Errorf("Get after two Puts (-got +want):\n%s", d)
		}
	})
	t.Run("get many keeps order and holes", func(t *testing.T) {
		s := newStore(t)
		var apps []types.NamespacedName
		want := map[int]appstate.State{}
		for i := range 6 {
			st := sampleState(i)
			apps = append(apps, st.App)
			if i%2 == 0 {
				want[i] = st
				if err := s.Put(t.Context(), st); err != nil {
					t.Fatal(err)
				}
			}
		}
		got, err := s.GetMany(t.Context(), apps)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(apps) {
			t.Fatalf("GetMany returned %d states for %d apps", len(got), len(apps))
		}
		for i, g := range got {
			w, ok := want[i]
			switch {
			case !ok && g != nil:
				t.Errorf("GetMany[%d] = %s, want nil", i, g.App)
			case ok && g == nil:
				t.Errorf("GetMany[%d] = nil, want %s", i, w.App)
			case ok:
				if d := cmp.Diff(*g, w); d != "" {
					t.Errorf("GetMany[%d] (-got +want):\n%s", i, d)
				}
			}
		}
	})
	t.Run("delete", func(t *testing.T) {
		s := newStore(t)
		st := sampleState(1)
		if err := s.Put(t.Context(), st); err != nil {
			t.Fatal(err)
		}
		for range 2 { // deleting twice is fine
			if err := s.Delete(t.Context(), st.App); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := s.Get(t.Context(), st.App); err != nil || got != nil {
			t.Fatalf("Get after Delete = %v, %v", got, err)
		}
	})
	t.Run("returned states are the caller's", func(t *testing.T) {
		s := newStore(t)
		st := sampleState(1)
		if err := s.Put(t.Context(), st); err != nil {
			t.Fatal(err)
		}
		got, _ := s.Get(t.Context(), st.App)
		got.Tree[0].Name = "changed"
		again, _ := s.Get(t.Context(), st.App)
		if again.Tree[0].Name != st.Tree[0].Name {
			t.Errorf("changing a returned state changed the store: %q", again.Tree[0].Name)
		}
	})
}
