//go:build integration

package cache

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/graphcd/graphcd/internal/settings"
)

// createWeb creates the Deployment "web" with two replicas and the Service
// "web" in front of it, both labelled for app.
func createWeb(t *testing.T, ns, app string) {
	t.Helper()
	ctx := t.Context()
	sel := map[string]string{"run": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: map[string]string{settings.DefaultInstanceLabelKey: app}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
	if _, err := cluster.Client.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: map[string]string{settings.DefaultInstanceLabelKey: app}},
		Spec:       corev1.ServiceSpec{Selector: sel, Ports: []corev1.ServicePort{{Port: 80}}},
	}
	if _, err := cluster.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create service: %v", err)
	}
}

func treeKinds(nodes []Node) []string {
	kinds := make([]string, 0, len(nodes))
	for _, n := range nodes {
		kinds = append(kinds, n.Kind)
	}
	return kinds
}

func TestTreeAndChanges(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	app := "web-" + ns
	c := startCache(t, Options{})
	var rec recorder
	c.OnChange(rec.record)

	createWeb(t, ns, app)
	wantKinds := []string{"Service", "Deployment", "Endpoints", "EndpointSlice", "ReplicaSet", "Pod", "Pod"}
	var tree []Node
	eventually(t, "tree of the deployment", func() bool {
		tree = c.Tree(app)
		return cmp.Equal(treeKinds(tree), wantKinds)
	}, func() string { return fmt.Sprint(tree) })

	// Parents come first, and each child names the parent found before it.
	pos := map[string]int{}
	for i, n := range tree {
		pos[n.UID] = i
		if n.Namespace != ns || n.CreationTimestamp.IsZero() {
			t.Errorf("node %s: namespace %q, created %v", n.ResourceKey, n.Namespace, n.CreationTimestamp)
		}
		if i >= 2 && len(n.ParentUIDs) != 1 {
			t.Errorf("node %s has parents %v, want one", n.ResourceKey, n.ParentUIDs)
		}
		for _, p := range n.ParentUIDs {
			if j, ok := pos[p]; !ok || j >= i {
				t.Errorf("node %s listed before its parent %s", n.ResourceKey, p)
			}
		}
	}
	wantParents := map[string]string{"Endpoints": "Service", "EndpointSlice": "Service", "ReplicaSet": "Deployment", "Pod": "ReplicaSet"}
	for _, n := range tree[2:] {
		if got := tree[pos[n.ParentUIDs[0]]].Kind; got != wantParents[n.Kind] {
			t.Errorf("%s has parent %s, want %s", n.ResourceKey, got, wantParents[n.Kind])
		}
	}

	// An unrelated ConfigMap changes without a report.
	unrelated := createConfigMap(t, ns, "unrelated", nil, nil)
	unrelated.Data["key"] = "changed"
	updated, err := cluster.Client.CoreV1().ConfigMaps(ns).Update(ctx, unrelated, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update configmap: %v", err)
	}
	unrelatedKey := ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "unrelated"}
	eventually(t, "configmap update indexed", func() bool { return c.seen(unrelatedKey, updated.ResourceVersion) })

	// Deleting a Pod of the Deployment reports the app.
	// Labels copied by controllers don't make descendants managed.
	wantManaged := []ResourceKey{
		{Kind: "Service", Namespace: ns, Name: "web"},
		{Group: "apps", Kind: "Deployment", Namespace: ns, Name: "web"},
	}
	if diff := cmp.Diff(c.Managed(app), wantManaged); diff != "" {
		t.Errorf("Managed (-got +want):\n%s", diff)
	}

	pod := tree[5]
	if err := cluster.Client.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatalf("delete pod: %v", err)
	}
	eventually(t, "change for the deleted pod", func() bool {
		return rec.has(func(e change) bool { return e.app == app && e.key == pod.ResourceKey })
	})

	// Editing the Deployment reports the app.
	patch := []byte(`{"metadata":{"annotations":{"edited":"yes"}}}`)
	if _, err := cluster.Client.AppsV1().Deployments(ns).Patch(ctx, "web", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch deployment: %v", err)
	}
	depKey := ResourceKey{Group: "apps", Kind: "Deployment", Namespace: ns, Name: "web"}
	eventually(t, "change for the deployment", func() bool {
		return rec.has(func(e change) bool { return e.app == app && e.key == depKey })
	})

	if rec.has(func(e change) bool { return e.key == unrelatedKey }) {
		t.Error("OnChange reported the unrelated ConfigMap")
	}
	if rec.has(func(e change) bool { return e.app != app && e.key.Namespace == ns }) {
		t.Error("OnChange reported an object of this namespace for another app")
	}

	// The replacement Pod joins the tree.
	eventually(t, "replacement pod", func() bool {
		tree := c.Tree(app)
		pods := 0
		for _, n := range tree {
			if n.Kind == "Pod" && n.Name != pod.Name {
				pods++
			}
		}
		return pods == 2
	})
}

// Deleting the owner drops the whole tree.
func TestTreeFollowsDeletion(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	app := "gone-" + ns
	c := startCache(t, Options{})
	createWeb(t, ns, app)
	eventually(t, "pods in the tree", func() bool { return len(c.Tree(app)) == 7 }, func() string { return fmt.Sprint(c.Tree(app)) })

	fg := metav1.DeletePropagationForeground
	err := cluster.Client.AppsV1().Deployments(ns).Delete(context.Background(), "web", metav1.DeleteOptions{PropagationPolicy: &fg})
	if err != nil {
		t.Fatalf("delete deployment: %v", err)
	}
	eventually(t, "deployment gone from the tree", func() bool {
		return cmp.Equal(treeKinds(c.Tree(app)), []string{"Service", "Endpoints", "EndpointSlice"})
	})
}
