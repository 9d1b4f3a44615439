package actions

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// BenchmarkDiscover500 discovers the actions of a 500-resource tree: one
// in five objects each a Deployment, StatefulSet, CronJob, ConfigMap (a
// custom Lua discovery) and Service (no actions). One iteration is the
// whole tree.
func BenchmarkDiscover500(b *testing.B) {
	objs := objects(b)
	e := newEngine(b, configMapActions)
	kinds := []*unstructured.Unstructured{objs["web"], objs["db"], objs["report"], objs["settings"], objs["settings"].DeepCopy()}
	kinds[4].SetKind("Service")
	tree := make([]*unstructured.Unstructured, 500)
	for i := range tree {
		tree[i] = kinds[i%len(kinds)].DeepCopy()
		tree[i].SetName(fmt.Sprintf("%s-%d", tree[i].GetName(), i))
	}
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		for _, obj := range tree {
			if _, err := e.Discover(ctx, obj); err != nil {
				b.Fatal(err)
			}
		}
	}
}
