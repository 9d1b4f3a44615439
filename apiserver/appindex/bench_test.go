package appindex

import (
	"fmt"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// BenchmarkPage measures one 500-app page out of 10,000 apps: the first
// page by name, a later page by health, and a filtered page.
func BenchmarkPage(b *testing.B) {
	x := New()
	health := []v1alpha1.HealthStatusCode{v1alpha1.HealthStatusHealthy, v1alpha1.HealthStatusDegraded, v1alpha1.HealthStatusProgressing}
	for i := range 10_000 {
		x.Upsert(app("graphcd", fmt.Sprintf("app-%05d", i), withHealth(health[i%len(health)])))
	}
	mid, err := x.Page(Query{First: 500, Order: Order{Field: OrderHealth}})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		q    Query
	}{
		{"first-by-name", Query{First: MaxFirst}},
		{"next-by-health", Query{First: MaxFirst, Order: Order{Field: OrderHealth}, After: mid.EndCursor}},
		{"filtered-search", Query{First: MaxFirst, Filter: Filter{Search: "app-0", Health: []v1alpha1.HealthStatusCode{v1alpha1.HealthStatusDegraded}}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := x.Page(bc.q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
