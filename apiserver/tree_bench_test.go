package apiserver

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appindex"
	"github.com/graphcd/graphcd/internal/appstate"
	"github.com/graphcd/graphcd/resolvers"
)

// treeQuery asks what the console's tree view shows of an application.
const treeQuery = `{"query":"{ application(name: \"big\", namespace: \"apps\") { resourceTree { revision truncated nodes { group version kind namespace name uid parentRefs { kind name uid } health { status message } sync info { name value } images missing createdAt resourceVersion } } managedResources { group kind namespace name status health { status } hook requiresPruning } } }"}`

// BenchmarkResourceTreeQuery serves an application's resource tree of
// 1,000 nodes and its 200 managed resources from memory: what the API adds
// to a tree read from the state store.
func BenchmarkResourceTreeQuery(b *testing.B) {
	key := types.NamespacedName{Namespace: "apps", Name: "big"}
	idx := appindex.New()
	idx.Upsert(&v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}})
	states := appstate.NewMemory()
	if err := states.Put(b.Context(), bigState(key, 1000, 200)); err != nil {
		b.Fatal(err)
	}
	srv, err := New(Options{API: resolvers.Config{Apps: idx, States: states}})
	if err != nil {
		b.Fatal(err)
	}
	h := srv.Handler()
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/api/graphql", strings.NewReader(treeQuery))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK || strings.Contains(w.Body.String(), `"errors"`) {
			b.Fatalf("HTTP %d: %s", w.Code, w.Body.String())
		}
	}
}

// bigState is a tree of nodes Pods, each owned by a ReplicaSet, and
// managed resources.
func bigState(key types.NamespacedName, nodes, managed int) appstate.State {
	created := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	st := appstate.State{App: key, Revision: "0123456789abcdef", ReconciledAt: created}
	for i := range nodes {
		st.Tree = append(st.Tree, appstate.Node{
			Version: "v1", Kind: "Pod", Namespace: "apps", Name: fmt.Sprintf("pod-%d", i), UID: fmt.Sprintf("uid-%d", i),
			ParentRefs: []appstate.Ref{{Group: "apps", Kind: "ReplicaSet", Namespace: "apps", Name: "rs", UID: "uid-rs"}},
			Health:     &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusHealthy},
			Info:       []appstate.Info{{Name: "Status Reason", Value: "Running"}, {Name: "Containers", Value: "1/1"}},
			Images:     []string{"nginx:1.27"}, CreatedAt: &created, ResourceVersion: "42",
		})
	}
	for i := range managed {
		st.Managed = append(st.Managed, appstate.ManagedResource{
			Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "apps", Name: fmt.Sprintf("deploy-%d", i),
			Status: v1alpha1.SyncStatusCodeSynced, Health: &v1alpha1.HealthStatus{Status: v1alpha1.HealthStatusHealthy},
		})
	}
	return st
}
