package sync_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/controller/sync"
)

// benchApps builds n apps' worth of objects, five per app in the app's
// namespace, in waves: ServiceAccount and Secret (-1), ConfigMap (0),
// Deployment and Service (1). live holds the same objects, as after a
// first sync, plus one stale ConfigMap per ten apps to prune.
func benchApps(n int) (desired, live []*unstructured.Unstructured) {
	obj := func(apiVersion, kind, ns, name, wave string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{
				"name": name, "namespace": ns,
				"labels":      map[string]any{"app.kubernetes.io/instance": ns},
				"annotations": map[string]any{sync.AnnotationSyncWave: wave},
			},
		}}
	}
	for i := range n {
		ns := fmt.Sprintf("app-%04d", i)
		desired = append(desired,
			obj("v1", "ServiceAccount", ns, "web", "-1"),
			obj("v1", "Secret", ns, "web-credentials", "-1"),
			obj("v1", "ConfigMap", ns, "web-config", "0"),
			obj("apps/v1", "Deployment", ns, "web", "1"),
			obj("v1", "Service", ns, "web", "1"),
		)
		if i%10 == 0 {
			live = append(live, obj("v1", "ConfigMap", ns, "web-config-old", "0"))
		}
	}
	for _, d := range desired {
		live = append(live, d.DeepCopy())
	}
	return desired, live
}

// BenchmarkPlan plans 500 apps' worth of resources (2,500 desired, 2,550
// live) in one sync, with pruning: the planner's cost per sync.
func BenchmarkPlan(b *testing.B) {
	desired, live := benchApps(500)
	opts := sync.Options{Prune: true, SyncOptions: []string{"ApplyOutOfSyncOnly=true"}, OutOfSync: func(sync.Key) bool { return true }}
	b.ReportAllocs()
	for b.Loop() {
		plan, err := sync.Build(desired, live, opts)
		if err != nil || len(plan.Tasks) != 2550 || len(plan.Errors) != 0 {
			b.Fatalf("plan: %v, %d tasks, %d errors", err, len(plan.Tasks), len(plan.Errors))
		}
	}
}
