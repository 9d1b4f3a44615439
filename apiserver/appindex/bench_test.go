package appindex

import (
	"fmt"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/project"
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

// BenchmarkPage50Namespaces is BenchmarkPage with the 10,000 apps spread
// over graphcd's namespace and 49 tenant namespaces (apps in any
// namespace), each page filtered as the API filters it: by
// AppNamespaces.Admits, the test resolvers runs on every app of a list
// and every delivered event (the served namespaces, a glob, and the
// project's sourceNamespaces through a project.Cache). The project
// lookup, a cache Get in the API, is a map lookup here. one-namespace
// asks for the apps of one tenant namespace.
func BenchmarkPage50Namespaces(b *testing.B) {
	x := New()
	health := []v1alpha1.HealthStatusCode{v1alpha1.HealthStatusHealthy, v1alpha1.HealthStatusDegraded, v1alpha1.HealthStatusProgressing}
	for i := range 10_000 {
		ns := "graphcd"
		if n := i % 50; n > 0 {
			ns = fmt.Sprintf("team-%02d", n)
		}
		a := app(ns, fmt.Sprintf("app-%05d", i), withHealth(health[i%len(health)]))
		a.Spec.Project = "tenants"
		x.Upsert(a)
	}
	served, err := project.CompileAppNamespaces("graphcd", []string{"team-*"})
	if err != nil {
		b.Fatal(err)
	}
	proj := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{SourceNamespaces: []string{"team-*"}}}
	proj.Namespace, proj.Name, proj.UID, proj.Generation = "graphcd", "tenants", "tenants-uid", 1
	projects := map[string]*v1alpha1.AppProject{proj.Name: proj}
	var compiled project.Cache
	admits := func(a *v1alpha1.Application) bool {
		return served.Admits(a.Namespace, func() (*project.Rules, error) {
			p := projects[a.Spec.Project]
			if p == nil {
				return nil, nil
			}
			return compiled.Rules(p)
		})
	}
	allow := func() func(*v1alpha1.Application) bool { return admits }
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
		{"one-namespace", Query{First: MaxFirst, Filter: Filter{Namespaces: []string{"team-07"}}}},
	} {
		for _, f := range []struct {
			name  string
			allow func() func(*v1alpha1.Application) bool
		}{
			// every: a filter that lets every app through (as RBAC
			// for an admin): the scan every filtered page pays.
			{"every", func() func(*v1alpha1.Application) bool { return func(*v1alpha1.Application) bool { return true } }},
			{"admission", allow},
		} {
			b.Run(bc.name+"/"+f.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					q := bc.q
					q.Filter.Allow = f.allow() // one per request, as the API makes it
					if _, err := x.Page(q); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
