package health

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Run with: go test -run '^$' -bench . -benchmem -count 5 ./controller/health/

func BenchmarkBuiltin(b *testing.B) {
	for _, fixture := range []string{"deployment/healthy.yaml", "pod/running-ready.yaml"} {
		b.Run(fixture, func(b *testing.B) {
			e := newEngine(b, Options{})
			obj := loadFixture(b, fixture)
			ctx := context.Background()
			for b.Loop() {
				if _, err := e.Check(ctx, obj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOperator runs the operator checks: a few kinds alone, and
// every object of testdata/operators in turn, reported per object.
func BenchmarkOperator(b *testing.B) {
	e := newEngine(b, Options{})
	ctx := context.Background()
	var all []*unstructured.Unstructured
	byName := map[string]*unstructured.Unstructured{}
	for file, cases := range loadOperatorCases(b) {
		for _, c := range cases {
			obj := c.object(b)
			all = append(all, obj)
			byName[file+"/"+c.Name] = obj
		}
	}
	for _, name := range []string{"certmanager/certificate issued", "argo/rollout healthy", "crossplane/managed resource of an upbound.io provider, available", "policy/constraint enforced with violations"} {
		obj := byName[name]
		if obj == nil {
			b.Fatalf("no case %q", name)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := e.Check(ctx, obj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("all", func(b *testing.B) {
		for b.Loop() {
			for _, obj := range all {
				if _, err := e.Check(ctx, obj); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(all)), "ns/object")
	})
}

func BenchmarkLua(b *testing.B) {
	e := newEngine(b, Options{LuaChecks: []LuaCheck{{Group: "cert-manager.io", Kind: "Certificate", Script: certificateScript}}})
	obj := loadFixture(b, "crd/ready.yaml")
	ctx := context.Background()
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			if res, err := e.Check(ctx, obj); err != nil || res.Status != StatusHealthy {
				b.Fatal(res, err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if res, err := e.Check(ctx, obj); err != nil || res.Status != StatusHealthy {
					b.Error(res, err)
					return
				}
			}
		})
	})
}

// BenchmarkLuaFreshVM is what a check costs without the pool: a new Lua
// state per call, as Argo CD does.
func BenchmarkLuaFreshVM(b *testing.B) {
	checks, err := compileLuaChecks([]LuaCheck{{Group: "cert-manager.io", Kind: "Certificate", Script: certificateScript}})
	if err != nil {
		b.Fatal(err)
	}
	check := checks.find(groupKind{"cert-manager.io", "Certificate"})
	obj := loadFixture(b, "crd/ready.yaml")
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		vm := newLuaVM()
		res, _, err := vm.run(ctx, check, obj)
		vm.close()
		cancel()
		if err != nil || res.Status != StatusHealthy {
			b.Fatal(res, err)
		}
	}
}
