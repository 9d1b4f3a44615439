package diff_test

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/controller/diff"
)

func decodeObject(doc string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if u.UnmarshalJSON([]byte(doc)) != nil {
		var obj map[string]any
		if json.Unmarshal([]byte(doc), &obj) != nil || obj == nil {
			return nil
		}
		return &unstructured.Unstructured{Object: obj}
	}
	return u
}

// FuzzDiff feeds arbitrary object pairs: Diff must not panic, and an
// object never differs from itself in any mode.
func FuzzDiff(f *testing.F) {
	f.Add(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"a"},"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"c","ports":[{"containerPort":80}]}]}}}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"a","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"spec\":{\"x\":1}}"}},"spec":{"replicas":"1","x":2,"template":{"spec":{"containers":[{"name":"c","ports":[{"containerPort":"80"},{"containerPort":80}]}]}}}}`)
	f.Add(`{"apiVersion":"v1","kind":"Secret","stringData":{"a":"b"},"data":{"a":1}}`, `{"apiVersion":"v1","kind":"Secret","data":{"a":"Yg=="},"status":{}}`)
	f.Add(`{"kind":"Service","spec":{"ports":[{"port":"80"},{"port":80}]}}`, `{"kind":"Service","spec":{"ports":[{"port":80}]}}`)
	// a live field named "" when the last apply holds no such key
	f.Add(`{"kind":"ConfigMap","metadata":{"name":"a"}}`,
		`{"kind":"ConfigMap","metadata":{"name":"a","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}},"":{"":1}}`)
	d, err := diff.New(diff.Options{Ignore: []diff.IgnoreRule{{
		Group: "*", Kind: "*",
		JSONPointers:          []string{"/spec/replicas", "/spec/template/spec/containers/0/ports/1"},
		JQPathExpressions:     []string{`.metadata.labels[]?`, `.spec.template.spec.containers[]? | select(.name == "c") | .image`},
		ManagedFieldsManagers: []string{"hpa"},
	}}})
	if err != nil {
		f.Fatal(err)
	}
	modes := [][]diff.CallOption{nil, {diff.VerdictOnly()}, {diff.WithServerSide(true)}, {diff.WithServerSide(true), diff.VerdictOnly()}}
	f.Fuzz(func(t *testing.T, a, b string) {
		ua, ub := decodeObject(a), decodeObject(b)
		ctx := t.Context()
		for _, mode := range modes {
			if ua != nil {
				res, err := d.Diff(ctx, ua, ua.DeepCopy(), mode...)
				if err != nil {
					t.Fatalf("Diff(a, a): %v", err)
				}
				if res.Modified {
					t.Fatalf("Diff(a, a) Modified:\n%s", res.Unified())
				}
			}
			if ua != nil || ub != nil {
				if res, err := d.Diff(ctx, ua, ub, mode...); err == nil {
					res.Unified()
				}
			}
		}
		if ua != nil && ub != nil {
			if _, err := d.ApplyIgnored(ua, ub); err != nil {
				t.Fatalf("ApplyIgnored: %v", err)
			}
		}
	})
}
