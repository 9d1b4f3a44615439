//go:build integration

package resolvers_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
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

// TestLiveResource reads a live object of an application's tree (a Pod
// Git does not declare, and a Secret, masked) with its Events from the
// destination cluster; objects outside the app are NOT_FOUND.
func TestLiveResource(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}}}
	if _, err := cluster.Client.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}, StringData: map[string]string{"password": "hunter2-live"}}
	if _, err := cluster.Client.CoreV1().Secrets(ns).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	now := metav1.NewMicroTime(time.Now())
	for i, reason := range []string{"Scheduled", "Pulled"} {
		ev := &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("web-1.%d", i)},
			EventTime:  metav1.NewMicroTime(now.Add(time.Duration(i) * time.Second)), ReportingController: "test", ReportingInstance: "test",
			Action: "Run", Reason: reason, Note: "pod " + reason, Type: "Normal",
			Regarding: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: "web-1"},
		}
		if _, err := cluster.Client.EventsV1().Events(ns).Create(t.Context(), ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	key := types.NamespacedName{Namespace: ns, Name: "live"}
	if err := states.Put(t.Context(), appstate.State{App: key, ReconciledAt: time.Now(),
		Tree: []appstate.Node{{Version: "v1", Kind: "Pod", Namespace: ns, Name: "web-1"}},
		Managed: []appstate.ManagedResource{
			{Version: "v1", Kind: "Secret", Namespace: ns, Name: "creds", Status: v1alpha1.SyncStatusCodeSynced},
			{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "gone", Status: v1alpha1.SyncStatusCodeOutOfSync},
		}}); err != nil {
		t.Fatal(err)
	}
	createApps(t, ns, appSpec{name: "live"})
	waitCount(t, ns, 1)
	const q = `query($ns: String!, $kind: String!, $name: String!) { application(name: "live", namespace: $ns) {
	  liveResource(group: "", kind: $kind, namespace: $ns, name: $name) { manifest events(first: 10) { reason note } } } }`
	type result struct {
		Application struct {
			LiveResource struct {
				Manifest string
				Events   []struct{ Reason, Note string }
			}
		}
	}
	var got result
	data(t, q, map[string]any{"ns": ns, "kind": "Pod", "name": "web-1"}, &got)
	lr := got.Application.LiveResource
	if !strings.Contains(lr.Manifest, "nginx:1.27") || strings.Contains(lr.Manifest, "managedFields") {
		t.Errorf("Pod manifest:\n%s", lr.Manifest)
	}
	if len(lr.Events) != 2 || lr.Events[0].Reason != "Pulled" || lr.Events[1].Reason != "Scheduled" {
		t.Errorf("Pod events = %+v, want Pulled then Scheduled", lr.Events)
	}
	data(t, q, map[string]any{"ns": ns, "kind": "Secret", "name": "creds"}, &got)
	if m := got.Application.LiveResource.Manifest; !strings.Contains(m, "password: \"++++++++\"") || strings.Contains(m, base64.StdEncoding.EncodeToString([]byte("hunter2-live"))) {
		t.Errorf("Secret manifest not masked:\n%s", m)
	}
	data(t, q, map[string]any{"ns": ns, "kind": "ConfigMap", "name": "gone"}, &got)
	if m := got.Application.LiveResource.Manifest; m != "" {
		t.Errorf("a declared object missing from the cluster: manifest %q, want empty", m)
	}
	if code := errorCode(t, q, map[string]any{"ns": ns, "kind": "Pod", "name": "stranger"}); code != "NOT_FOUND" {
		t.Errorf("an object outside the app: code %q, want NOT_FOUND", code)
	}
}
