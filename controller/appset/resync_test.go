package appset

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// After a successful generation only a change of its Applications'
// status leaves the set to followResources; anything a generation reads
// generates again.
func TestStatusOnly(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "set"}
	newSet := func() *v1alpha1.ApplicationSet {
		return &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "set", Generation: 3, Annotations: map[string]string{"a": "b"}}}
	}
	generated := func(g *generations, ok bool, every time.Duration) {
		c, a := g.counters(key)
		g.generated(newSet(), c, a, ok, every)
	}
	tests := []struct {
		name   string
		change func(g *generations, set *v1alpha1.ApplicationSet)
		want   bool
	}{
		{"nothing changed", func(*generations, *v1alpha1.ApplicationSet) {}, true},
		{"refresh served", func(_ *generations, s *v1alpha1.ApplicationSet) { s.Annotations[RefreshAnnotation] = "true" }, true},
		{"spec", func(_ *generations, s *v1alpha1.ApplicationSet) { s.Generation++ }, false},
		{"annotation", func(_ *generations, s *v1alpha1.ApplicationSet) { s.Annotations["a"] = "c" }, false},
		{"label", func(_ *generations, s *v1alpha1.ApplicationSet) { s.Labels = map[string]string{"l": "v"} }, false},
		{"a cluster", func(g *generations, _ *v1alpha1.ApplicationSet) { g.clusterChanged() }, false},
		{"an Application's spec", func(g *generations, _ *v1alpha1.ApplicationSet) { g.appChanged(key) }, false},
		{"another set's Application", func(g *generations, _ *v1alpha1.ApplicationSet) {
			g.appChanged(types.NamespacedName{Namespace: "ns", Name: "other"})
		}, true},
		{"a RollingSync", func(_ *generations, s *v1alpha1.ApplicationSet) {
			s.Spec.Strategy = &v1alpha1.ApplicationSetStrategy{Type: rollingSync}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g generations
			generated(&g, true, time.Hour)
			set := newSet()
			tt.change(&g, set)
			if _, got := g.statusOnly(set); got != tt.want {
				t.Errorf("statusOnly = %v, want %v", got, tt.want)
			}
		})
	}
	var g generations
	if _, ok := g.statusOnly(newSet()); ok {
		t.Error("a set never generated is status-only")
	}
	generated(&g, false, time.Hour)
	if _, ok := g.statusOnly(newSet()); ok {
		t.Error("a failed generation is not retried")
	}
	generated(&g, true, time.Nanosecond)
	time.Sleep(time.Millisecond)
	if _, ok := g.statusOnly(newSet()); ok {
		t.Error("a due periodic generation is skipped")
	}
	g.forget(key)
	if _, ok := g.statusOnly(newSet()); ok {
		t.Error("a forgotten set is status-only")
	}
}
