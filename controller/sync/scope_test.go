package sync_test

import (
	"testing"

	"github.com/graphcd/graphcd/controller/sync"
)

// DefaultNamespace gives the destination namespace to namespaced objects
// without one, never to cluster-scoped ones, and copies what it changes.
func TestDefaultNamespace(t *testing.T) {
	objs := parse(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: other}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
---
metadata: {name: kindless}
`)
	tests := []struct {
		name      string
		obj       int
		namespace string
		scope     func(group, kind string) bool
		want      string
	}{
		{name: "namespaced kind without a namespace", obj: 0, namespace: "shop", want: "shop"},
		{name: "an object's own namespace stays", obj: 1, namespace: "shop", want: "other"},
		{name: "built-in cluster-scoped kind", obj: 2, namespace: "shop", want: ""},
		{name: "custom resource counts as namespaced", obj: 3, namespace: "shop", want: "shop"},
		{
			name: "custom resource the scope function calls cluster-scoped", obj: 3, namespace: "shop", want: "",
			scope: func(group, kind string) bool { return group == "example.com" && kind == "Widget" },
		},
		{name: "no destination namespace", obj: 0, namespace: "", want: ""},
		{name: "no kind", obj: 4, namespace: "shop", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := objs[tt.obj]
			before := in.GetNamespace()
			got := sync.DefaultNamespace(in, tt.namespace, tt.scope)
			if got.GetNamespace() != tt.want {
				t.Errorf("namespace %q, want %q", got.GetNamespace(), tt.want)
			}
			if in.GetNamespace() != before {
				t.Error("the input object was modified")
			}
			if (got == in) != (tt.want == before) {
				t.Errorf("returned the input = %v, want %v", got == in, tt.want == before)
			}
		})
	}
	if sync.DefaultNamespace(nil, "shop", nil) != nil {
		t.Error("DefaultNamespace(nil) is not nil")
	}
}

// OfflineScope learns scopes from live objects and from CRDs, and falls
// back on the built-in table.
func TestOfflineScope(t *testing.T) {
	manifests := parse(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: clusterissuers.cert-manager.io}
spec:
  group: cert-manager.io
  names: {kind: ClusterIssuer, plural: clusterissuers}
  scope: Cluster
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: issuers.cert-manager.io}
spec:
  group: cert-manager.io
  names: {kind: Issuer, plural: issuers}
  scope: Namespaced
`)
	live := parse(t, `
apiVersion: example.com/v1
kind: Tenant
metadata: {name: blue}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: a}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: b, namespace: shop}
`)
	scope := sync.OfflineScope(manifests, live)
	tests := []struct {
		group, kind string
		cluster     bool
	}{
		{"cert-manager.io", "ClusterIssuer", true},
		{"cert-manager.io", "Issuer", false},
		{"example.com", "Tenant", true},  // a live object without a namespace
		{"example.com", "Widget", false}, // one live object with a namespace settles it
		{"rbac.authorization.k8s.io", "ClusterRole", true},
		{"apps", "Deployment", false},
		{"example.com", "Unknown", false},
	}
	for _, tt := range tests {
		if got := scope(tt.group, tt.kind); got != tt.cluster {
			t.Errorf("%s/%s: cluster-scoped = %v, want %v", tt.group, tt.kind, got, tt.cluster)
		}
	}
}
