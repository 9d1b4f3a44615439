package diff_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/controller/diff"
)

// bytesAllocated reports the heap bytes f allocates.
func bytesAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLargeObject diffs a ConfigMap with 10k annotations and a 10 MB
// value, and checks that neither the verdict nor the normalized objects
// copy the big value or the annotation map.
func TestLargeObject(t *testing.T) {
	const big = 10 << 20
	mk := func(extra string) *unstructured.Unstructured {
		ann := make(map[string]any, 10_001)
		for i := range 10_000 {
			ann[fmt.Sprintf("example.com/annotation-%05d", i)] = fmt.Sprintf("value-%d", i)
		}
		if extra != "" {
			ann["example.com/extra"] = extra
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "big", "namespace": "prod", "annotations": ann},
			"data":     map[string]any{"blob": strings.Repeat("x", big), "small": "1"},
		}}
	}
	desired, live := mk("wanted"), mk("")
	same := mk("wanted")
	d := newDiffer(t, diff.Options{})
	ctx := t.Context()

	var res *diff.Result
	var err error
	for _, tc := range []struct {
		name          string
		desired, live *unstructured.Unstructured
		opts          []diff.CallOption
		modified      bool
	}{
		{name: "verdict, modified", desired: desired, live: live, opts: []diff.CallOption{diff.VerdictOnly()}, modified: true},
		{name: "verdict, equal", desired: desired, live: same, opts: []diff.CallOption{diff.VerdictOnly()}},
		{name: "objects, modified", desired: desired, live: live, opts: []diff.CallOption{diff.WithoutText()}, modified: true},
		{name: "objects, equal", desired: desired, live: same},
	} {
		n := bytesAllocated(func() { res, err = d.Diff(ctx, tc.desired, tc.live, tc.opts...) })
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if res.Modified != tc.modified {
			t.Errorf("%s: Modified = %v, want %v", tc.name, res.Modified, tc.modified)
		}
		if n > big/4 {
			t.Errorf("%s: allocated %d bytes, want far less than the %d-byte value", tc.name, n, big)
		}
	}

	res, err = d.Diff(ctx, desired, live)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "+    example.com/extra: wanted\n") {
		t.Errorf("Text lacks the added annotation (%d bytes)", len(res.Text))
	}
}
