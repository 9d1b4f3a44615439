//go:build integration

package console

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/actions"
)

// web is a Deployment of two replicas, which KWOK runs, and a ConfigMap.
const (
	webDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.example.com/web:1.0
`
	webSettings = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: dev\n"
	// setMode is a custom action with a parameter, as graphcd-cm holds it.
	setMode = `discovery.lua: |
  return {["set-mode"] = {params = {{name = "mode", default = "prod"}}}}
definitions:
- name: set-mode
  action.lua: |
    obj.data.mode = actionParams["mode"]
    return obj
`
)

// TestResourceActionsMenu runs resource actions from the resource panel
// in Chromium (see web/e2e/resource-actions.mjs): a restart of a
// Deployment whose Pods KWOK runs, which rolls them (a new ReplicaSet
// whose Pods become Ready, the old one scaled to zero), and a custom Lua
// action of graphcd-cm with a parameter. Each run leaves a
// ResourceActionRan Event on the application naming the admin.
func TestResourceActionsMenu(t *testing.T) {
	if skipReason != "" {
		t.Skip("browser test skipped: " + skipReason)
	}
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "graphcd-cm"}, Data: map[string]string{"resource.customizations.actions.ConfigMap": setMode}}
	base, ns := startServer(t, true, settings)
	repo := serveRepo(t, map[string]string{"web/deployment.yaml": webDeployment, "web/settings.yaml": webSettings})
	kube := newKube(t)
	createDefaultProject(t, kube, ns)
	app := gitApp(ns, "web", "default", repo, "web")
	app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "test"}}
	if err := kube.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	waitApp(t, kube, app, "synced and healthy", func(a *v1alpha1.Application) bool {
		return a.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Status.Health.Status == v1alpha1.HealthStatusHealthy
	})

	runScript(t, "e2e/resource-actions.mjs", base, ns, "GRAPHCD_E2E_NS="+ns)

	dep, err := cluster.Client.AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if dep.Spec.Template.Annotations[actions.RestartedAtAnnotation] == "" {
		t.Fatalf("the pod template has no %s after the restart", actions.RestartedAtAnnotation)
	}
	// The restart rolls the Pods: a second ReplicaSet takes both replicas,
	// Ready, and the first one is scaled to zero.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		state, done := rolled(t, ns)
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Pods did not roll after the restart: %s", state)
		}
		time.Sleep(500 * time.Millisecond)
	}
	cm, err := cluster.Client.CoreV1().ConfigMaps(ns).Get(t.Context(), "settings", metav1.GetOptions{})
	if err != nil || cm.Data["mode"] != "staging" {
		t.Errorf("settings after set-mode: %v %v, want mode staging", cm.Data, err)
	}
	events, err := cluster.Client.EventsV1().Events(ns).List(t.Context(), metav1.ListOptions{FieldSelector: "regarding.kind=Application,regarding.name=web,reason=ResourceActionRan"})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, e := range events.Items {
		notes = append(notes, e.Note)
	}
	for _, want := range []string{"admin ran action restart on resource apps/Deployment/" + ns + "/web", "admin ran action set-mode on resource /ConfigMap/" + ns + "/settings"} {
		if !strings.Contains(strings.Join(notes, "\n"), want) {
			t.Errorf("events %q: none says %q", notes, want)
		}
	}
}

// rolled reports whether the Deployment web rolled after its restart: two
// ReplicaSets, the newer with two Ready replicas, the older with none.
func rolled(t *testing.T, ns string) (string, bool) {
	list, err := cluster.Client.AppsV1().ReplicaSets(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	var state []string
	var newReady, oldGone bool
	for _, rs := range list.Items {
		restarted := rs.Spec.Template.Annotations[actions.RestartedAtAnnotation] != ""
		state = append(state, fmt.Sprintf("%s (restarted %v): %d/%d ready", rs.Name, restarted, rs.Status.ReadyReplicas, *rs.Spec.Replicas))
		if restarted {
			newReady = rs.Status.ReadyReplicas == 2
		} else {
			oldGone = *rs.Spec.Replicas == 0 && rs.Status.Replicas == 0
		}
	}
	return strings.Join(state, "; "), len(list.Items) == 2 && newReady && oldGone
}
