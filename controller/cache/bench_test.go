package cache

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// fillDeployments indexes n Deployments of app "a", each with a ReplicaSet
// and two Pods.
func fillDeployments(b *testing.B, c *Cluster, n int) {
	b.Helper()
	for i := range n {
		d, r := fmt.Sprintf("d%d", i), fmt.Sprintf("r%d", i)
		for _, o := range []object{
			{gk: deployGK, name: d, uid: d, labels: appLabel},
			{gk: rsGK, name: r, uid: r, owners: []string{d}},
			{gk: podGK, name: r + "-1", uid: r + "-1", owners: []string{r}},
			{gk: podGK, name: r + "-2", uid: r + "-2", owners: []string{r}},
		} {
			c.observe(nil, o.gk, nil, o.meta(), false)
		}
	}
}

func BenchmarkTree(b *testing.B) {
	c, err := New(Options{Config: offlineConfig})
	if err != nil {
		b.Fatal(err)
	}
	fillDeployments(b, c, 500)
	b.ReportAllocs()
	for b.Loop() {
		if n := len(c.Tree("a")); n != 2000 {
			b.Fatalf("tree has %d nodes", n)
		}
	}
}

func BenchmarkObservePodUpdate(b *testing.B) {
	c, err := New(Options{Config: offlineConfig})
	if err != nil {
		b.Fatal(err)
	}
	fillDeployments(b, c, 500)
	changes := 0
	c.OnChange(func(string, ResourceKey) { changes++ })
	pod := object{gk: schema.GroupKind{Kind: "Pod"}, name: "r7-1", uid: "r7-1", owners: []string{"r7"}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		pod.rv = fmt.Sprint(i)
		c.observe(nil, pod.gk, nil, pod.meta(), false)
	}
	if changes == 0 {
		b.Fatal("no change reported")
	}
}
