package diffpeer

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/controller/diff/difftest"
)

// A cert-manager server writes durations in Go's long form; graphcd
// compares them by meaning, gitops-engine by text.
func TestCompareExplainsDisagreement(t *testing.T) {
	applied := map[string]any{
		"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec":     map[string]any{"secretName": "web-tls", "duration": "2160h"},
	}
	raw, err := json.Marshal(applied)
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]any{
		"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
		"metadata": map[string]any{"name": "web", "namespace": "default",
			"annotations": map[string]any{difftest.LastApplied: string(raw)}},
		"spec": map[string]any{"secretName": "web-tls", "duration": "2160h0m0s"},
	}
	pairs := []difftest.Pair{{
		Name:    "cert",
		Desired: &unstructured.Unstructured{Object: applied},
		Live:    &unstructured.Unstructured{Object: live},
	}}
	d, err := NewGraphcd()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Compare(t.Context(), d, pairs)
	if err != nil {
		t.Fatal(err)
	}
	want := []Verdict{{
		Name: "cert", Want: false, Graphcd: false, Peer: true,
		Reason: `only gitops-engine reports a change (corpus: unchanged) at /spec/duration ("2160h0m0s" -> "2160h")`,
	}}
	if diff := cmp.Diff(rep.Disagreements(), want); diff != "" {
		t.Errorf("disagreements (-got +want):\n%s", diff)
	}
	if got := rep.AgreementPercent(); got != 0 {
		t.Errorf("agreement = %v%%, want 0%%", got)
	}
}

func TestDiffPaths(t *testing.T) {
	tests := []struct {
		name       string
		live, pred any
		showValues bool
		want       []string
	}{
		{name: "equal", live: map[string]any{"a": 1.0}, pred: map[string]any{"a": 1.0}},
		{name: "nested value", live: map[string]any{"s": map[string]any{"x": "1"}},
			pred: map[string]any{"s": map[string]any{"x": "2"}}, showValues: true,
			want: []string{`/s/x ("1" -> "2")`}},
		{name: "added key, values hidden", live: map[string]any{},
			pred: map[string]any{"data": map[string]any{"password": "c2VjcmV0"}},
			want: []string{"/data"}},
		{name: "list element", live: []any{"a", "b"}, pred: []any{"a", "c"}, showValues: true,
			want: []string{`/1 ("b" -> "c")`}},
		{name: "list length", live: []any{"a"}, pred: []any{"a", "b"},
			want: []string{"/"}},
		{name: "escaped key", live: map[string]any{"a/b~c": 1.0}, pred: map[string]any{"a/b~c": 2.0},
			want: []string{"/a~1b~0c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			diffPaths(tt.live, tt.pred, "", tt.showValues, &got)
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("paths (-got +want):\n%s", diff)
			}
		})
	}
}
