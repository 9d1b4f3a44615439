package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// An app another shard takes over loses its comparison, cluster and
// announcement but keeps the version last written; an app that is gone
// loses everything. Claimed apps are told apart from the others in the
// order asked.
func TestAppMemory(t *testing.T) {
	web := types.NamespacedName{Namespace: "graphcd", Name: "web"}
	db := types.NamespacedName{Namespace: "graphcd", Name: "db"}
	m := newAppMemory()
	remember := func() {
		m.setState(web, &AppState{Revision: "abc"})
		m.wrote(&v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: web.Namespace, Name: web.Name, ResourceVersion: "7"}})
		m.announce(web, announcedStatus{}, announcedStatus{sync: v1alpha1.SyncStatusCodeSynced})
		m.claim(web, InClusterServer)
		m.compared(web, true)
	}

	remember()
	if m.behind(web, "7") || !m.behind(web, "6") || m.behind(db, "1") {
		t.Error("behind does not compare with the version last written")
	}
	if m.onCluster(web, "https://other.example.com") || !m.onCluster(web, InClusterServer) || !m.onCluster(db, "https://other.example.com") {
		t.Error("onCluster does not follow the claimed cluster")
	}
	local, rest := m.claimed([]types.NamespacedName{db, web})
	if diff := cmp.Diff([][]types.NamespacedName{local, rest}, [][]types.NamespacedName{{web}, {db}}); diff != "" {
		t.Errorf("claimed (-got +want):\n%s", diff)
	}

	if n := m.compared(web, true); n != 2 {
		t.Errorf("compared counted %d failures in a row, want 2", n)
	}
	m.release(web)
	if n := m.compared(web, true); n != 1 {
		t.Errorf("release kept the failures: %d counted after one more", n)
	}
	if m.state(web) != nil || !m.onCluster(web, "https://other.example.com") || !m.behind(web, "6") {
		t.Error("release: want the state and cluster dropped and the version kept")
	}
	if was := m.announce(web, announcedStatus{health: v1alpha1.HealthStatusHealthy}, announcedStatus{}); was.health != v1alpha1.HealthStatusHealthy {
		t.Errorf("release kept the last announcement: %+v", was)
	}

	remember()
	m.forget(web)
	if m.state(web) != nil || m.behind(web, "6") || !m.onCluster(web, "https://other.example.com") {
		t.Error("forget kept something of the app")
	}
	if n := m.compared(web, true); n != 1 {
		t.Errorf("forget kept the failures: %d counted after one more", n)
	}
	if n := m.compared(web, false); n != 0 || m.compared(web, true) != 1 {
		t.Error("a comparison that succeeded did not end the failures in a row")
	}
}
