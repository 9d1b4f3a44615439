//go:build integration

package resolvers_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/appstate"
)

// TestApplicationResourceActions deletes and patches live objects of an
// application on its destination cluster (the local cluster, as
// in-cluster), and refuses objects that are not the application's.
func TestApplicationResourceActions(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	for _, name := range []string{"settings", "other", "stranger"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	key := types.NamespacedName{Namespace: ns, Name: "owner"}
	if err := states.Put(t.Context(), appstate.State{App: key, ReconciledAt: time.Now(), Managed: []appstate.ManagedResource{
		{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "settings", Status: v1alpha1.SyncStatusCodeSynced},
		{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "other", Status: v1alpha1.SyncStatusCodeSynced},
	}}); err != nil {
		t.Fatal(err)
	}
	createApps(t, ns, appSpec{name: "owner"})
	waitCount(t, ns, 1)
	res := func(name string) map[string]any {
		return map[string]any{"application": map[string]any{"name": "owner", "namespace": ns}, "kind": "ConfigMap", "namespace": ns, "name": name}
	}
	const patch = `mutation($in: ApplicationResourceInput!, $p: String!) { patchApplicationResource(input: $in, patch: $p) }`
	data(t, patch, map[string]any{"in": res("settings"), "p": `{"metadata":{"labels":{"patched":"yes"}}}`}, &map[string]any{})
	cm, err := cluster.Client.CoreV1().ConfigMaps(ns).Get(t.Context(), "settings", metav1.GetOptions{})
	if err != nil || cm.Labels["patched"] != "yes" {
		t.Fatalf("after patch: %v %v", cm.Labels, err)
	}
	const del = `mutation($in: ApplicationResourceInput!) { deleteApplicationResource(input: $in) }`
	data(t, del, map[string]any{"in": res("other")}, &map[string]any{})
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Get(t.Context(), "other", metav1.GetOptions{}); err == nil {
		// Background deletion of a ConfigMap is immediate.
		t.Error("other still exists after delete")
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, q string
		vars    map[string]any
		want    string
	}{
		{"delete an object outside the app", del, map[string]any{"in": res("stranger")}, "NOT_FOUND"},
		{"patch an object outside the app", patch, map[string]any{"in": res("stranger"), "p": `{}`}, "NOT_FOUND"},
		{"patch that is not JSON", patch, map[string]any{"in": res("settings"), "p": `labels: x`}, "BAD_USER_INPUT"},
		{"delete what is gone", del, map[string]any{"in": res("other")}, "NOT_FOUND"},
	} {
		if code := errorCode(t, tt.q, tt.vars); code != tt.want {
			t.Errorf("%s: code %q, want %q", tt.name, code, tt.want)
		}
	}
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Get(t.Context(), "stranger", metav1.GetOptions{}); err != nil {
		t.Errorf("the object outside the app was touched: %v", err)
	}
}
