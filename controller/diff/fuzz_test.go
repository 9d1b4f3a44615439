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

// FuzzDiff feeds arbitrary object pairs: Diff must not panic, an object
// never differs from itself in any mode, the verdict-only path agrees
// with the full one, and a modified verdict always comes with a diff text
// that shows a changed line.
func FuzzDiff(f *testing.F) {
	f.Add(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"a"},"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"c","ports":[{"containerPort":80}]}]}}}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"a","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"spec\":{\"x\":1}}"}},"spec":{"replicas":"1","x":2,"template":{"spec":{"containers":[{"name":"c","ports":[{"containerPort":"80"},{"containerPort":80}]}]}}}}`)
	f.Add(`{"apiVersion":"v1","kind":"Secret","stringData":{"a":"b"},"data":{"a":1}}`, `{"apiVersion":"v1","kind":"Secret","data":{"a":"Yg=="},"status":{}}`)
	f.Add(`{"kind":"Service","spec":{"ports":[{"port":"80"},{"port":80}]}}`, `{"kind":"Service","spec":{"ports":[{"port":80}]}}`)
	f.Add(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"r","labels":{}},"rules":[]}`,
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"r","labels":null},"rules":null}`)
	f.Add(`{"apiVersion":"v1","kind":"Secret","data":{"a":"","b":1,"c":null},"stringData":{"d":null}}`,
		`{"apiVersion":"v1","kind":"Secret","data":{"a":null,"b":"","c":"","d":"eA=="}}`)
	f.Add(`{"apiVersion":"v1","kind":"Secret","data":"eA=="}`, `{"apiVersion":"v1","kind":"Secret","data":"eQ=="}`)
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
	f.Fuzz(func(t *testing.T, a, b string) {
		ua, ub := decodeObject(a), decodeObject(b)
		ctx := t.Context()
		for _, serverSide := range []bool{false, true} {
			mode := []diff.CallOption{diff.WithServerSide(serverSide)}
			if ua != nil {
				for _, m := range [][]diff.CallOption{mode, append(mode, diff.VerdictOnly())} {
					res, err := d.Diff(ctx, ua, ua.DeepCopy(), m...)
					if err != nil {
						t.Fatalf("Diff(a, a): %v", err)
					}
					if res.Modified {
						t.Fatalf("Diff(a, a) Modified:\n%s", res.Unified())
					}
				}
			}
			if ua == nil && ub == nil {
				continue
			}
			full, err := d.Diff(ctx, ua, ub, mode...)
			if err != nil {
				continue
			}
			verdict, err := d.Diff(ctx, ua, ub, append(mode, diff.VerdictOnly())...)
			if err != nil {
				t.Fatalf("VerdictOnly failed where the full diff did not: %v", err)
			}
			if verdict.Modified != full.Modified {
				t.Fatalf("server-side %v: VerdictOnly Modified = %v, full Modified = %v\n%s", serverSide, verdict.Modified, full.Modified, full.Unified())
			}
			if full.Modified && !hasChangedLine(full.Unified()) {
				t.Fatalf("server-side %v: Modified with no changed line in the diff:\n%s", serverSide, full.Text)
			}
		}
		if ua != nil && ub != nil {
			if _, err := d.ApplyIgnored(ua, ub); err != nil {
				t.Fatalf("ApplyIgnored: %v", err)
			}
		}
	})
}
