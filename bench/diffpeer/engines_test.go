package diffpeer

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/controller/diff/difftest"
)

// TestAgreement reports how often the engines agree on "modified" over
// the benchmark corpus. Disagreement is logged, never a failure; an error
// of either engine, or an engine changing its inputs, is.
func TestAgreement(t *testing.T) {
	pairs := difftest.Corpus(240, 1)
	d, err := NewGraphcd()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Compare(t.Context(), d, pairs)
	if err != nil {
		t.Fatal(err)
	}
	n := len(rep.Verdicts)
	t.Logf("engines agree on %d/%d pairs (%.1f%%); match the corpus: graphcd %d/%d, gitops-engine %d/%d",
		rep.Agree, n, rep.AgreementPercent(), rep.GraphcdRight, n, rep.PeerRight, n)
	for _, v := range rep.Disagreements() {
		t.Logf("  %s: %s", v.Name, v.Reason)
	}

	fresh := difftest.Corpus(240, 1)
	for i := range pairs {
		if !reflect.DeepEqual(pairs[i].Desired.Object, fresh[i].Desired.Object) ||
			!reflect.DeepEqual(pairs[i].Live.Object, fresh[i].Live.Object) {
			t.Errorf("%s: an engine changed its inputs", pairs[i].Name)
		}
	}
}

// TestEnginesOnPlainPairs checks the harness on pairs every engine must
// get right, so that the agreement figure measures the engines and not
// the harness.
func TestEnginesOnPlainPairs(t *testing.T) {
	applied := func() map[string]any {
		return map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "app", "namespace": "default"},
			"data":     map[string]any{"a": "1", "b": "2"},
		}
	}
	live := func(change func(map[string]any)) *unstructured.Unstructured {
		o := applied()
		raw, err := (&unstructured.Unstructured{Object: applied()}).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		o["metadata"].(map[string]any)["annotations"] = map[string]any{difftest.LastApplied: string(raw)}
		o["metadata"].(map[string]any)["uid"] = "0b6c8c3e-0000-4000-8000-000000000001"
		o["metadata"].(map[string]any)["resourceVersion"] = "42"
		if change != nil {
			change(o)
		}
		return &unstructured.Unstructured{Object: o}
	}
	desired := func(change func(map[string]any)) *unstructured.Unstructured {
		o := applied()
		if change != nil {
			change(o)
		}
		return &unstructured.Unstructured{Object: o}
	}
	tests := []struct {
		name          string
		desired, live *unstructured.Unstructured
		want          bool
	}{
		{name: "unchanged", desired: desired(nil), live: live(nil), want: false},
		{name: "value changed in git", desired: desired(func(o map[string]any) {
			o["data"].(map[string]any)["a"] = "changed"
		}), live: live(nil), want: true},
		{name: "key removed from git", desired: desired(func(o map[string]any) {
			delete(o["data"].(map[string]any), "b")
		}), live: live(nil), want: true},
		{name: "drift in the cluster", desired: desired(nil), live: live(func(o map[string]any) {
			o["data"].(map[string]any)["a"] = "edited"
		}), want: true},
		{name: "not yet created", desired: desired(nil), live: nil, want: true},
	}
	d, err := NewGraphcd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := d.Diff(t.Context(), tt.desired, tt.live)
			if err != nil {
				t.Fatal(err)
			}
			p, err := PeerDiff(tt.desired, tt.live, PeerOptions()...)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{"graphcd": g.Modified, "gitops-engine": p.Modified}
			want := map[string]bool{"graphcd": tt.want, "gitops-engine": tt.want}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("modified (-got +want):\n%s", diff)
			}
		})
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, p := range difftest.Corpus(12, 2) {
		if err := JSONRoundTrip(p); err != nil {
			t.Fatal(err)
		}
	}
}
