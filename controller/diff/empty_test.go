package diff_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/controller/diff"
)

// widget wraps spec (JSON) in a custom resource; metadata (JSON members)
// is added to its metadata.
func widget(spec, metadata string) string {
	if metadata != "" {
		metadata = "," + metadata
	}
	return `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"shop"` + metadata + `},"spec":` + spec + `}`
}

// TestEmptyEqualsAbsent checks the class "an empty list or map, null and
// an absent field are one value" in both directions, at several depths,
// after ignore rules emptied a value, and in every comparison mode.
func TestEmptyEqualsAbsent(t *testing.T) {
	dep := func(container string) string {
		return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"shop"},"spec":{"template":{"spec":{"containers":[` + container + `]}}}}`
	}
	annotated := widget(`{"size":1}`, `"annotations":{"example.com/owner":"team-a"}`)
	tests := []struct {
		name          string
		desired, live string
		// applied is the last-applied configuration of the three-way
		// mode; empty means desired
		applied  string
		ignore   []diff.IgnoreRule
		modified bool
	}{
		{name: "[] in Git, null live", desired: widget(`{"items":[]}`, ""), live: widget(`{"items":null}`, "")},
		{name: "{} in Git, null live", desired: widget(`{"obj":{}}`, ""), live: widget(`{"obj":null}`, "")},
		{name: "[] in Git, absent live", desired: widget(`{"items":[]}`, ""), live: widget(`{}`, "")},
		{name: "{} in Git, absent live", desired: widget(`{"obj":{}}`, ""), live: widget(`{}`, "")},
		{name: "null in Git, [] live", desired: widget(`{"items":null}`, ""), live: widget(`{"items":[]}`, "")},
		{name: "absent in Git, [] live", desired: widget(`{}`, ""), live: widget(`{"items":[]}`, "")},
		{name: "absent in Git, {} live", desired: widget(`{}`, ""), live: widget(`{"obj":{}}`, "")},
		{name: "labels {} in Git, labels null live", desired: widget(`{}`, `"labels":{}`), live: widget(`{}`, `"labels":null`)},
		{name: "annotations null in Git, {} live", desired: widget(`{}`, `"annotations":null`), live: widget(`{}`, `"annotations":{}`)},
		{
			name:    "empty list in a container (keyed list element)",
			desired: dep(`{"name":"c","image":"x","args":[],"env":[]}`), live: dep(`{"name":"c","image":"x","args":null}`),
		},
		{name: "empty list in an atomic list element", desired: widget(`{"list":[{"a":[],"b":1}]}`, ""), live: widget(`{"list":[{"a":null,"b":1}]}`, "")},
		{name: "[] against null as list elements", desired: widget(`{"list":[[],1]}`, ""), live: widget(`{"list":[null,1]}`, "")},
		{name: "{} deep inside a map", desired: widget(`{"a":{"b":{"c":{}}}}`, ""), live: widget(`{"a":{"b":{"c":null}}}`, "")},
		{
			name: "Git value emptied by an ignore rule, absent live", desired: annotated, live: widget(`{"size":1}`, ""),
			ignore: []diff.IgnoreRule{{Group: "example.com", Kind: "Widget", JSONPointers: []string{"/metadata/annotations/example.com~1owner"}}},
		},
		{
			name: "Git value emptied by an ignore rule, null live", desired: widget(`{"obj":{"x":1}}`, ""), live: widget(`{"obj":null}`, ""),
			ignore: []diff.IgnoreRule{{Group: "example.com", Kind: "Widget", JSONPointers: []string{"/spec/obj/x"}}},
		},
		{
			name: "live value emptied by an ignore rule, absent from Git but in the last apply", desired: widget(`{"size":1}`, ""), live: annotated,
			applied: annotated,
			ignore:  []diff.IgnoreRule{{Group: "example.com", Kind: "Widget", JQPathExpressions: []string{`.metadata.annotations["example.com/owner"]`}}},
		},
		// what is not empty still counts
		{name: "[] in Git, a live element", desired: widget(`{"items":[]}`, ""), live: widget(`{"items":["a"]}`, ""), applied: widget(`{"items":["a"]}`, ""), modified: true},
		{name: "a Git element, null live", desired: widget(`{"items":["a"]}`, ""), live: widget(`{"items":null}`, ""), modified: true},
		{name: "a Git map, null live", desired: widget(`{"obj":{"x":1}}`, ""), live: widget(`{"obj":null}`, ""), modified: true},
		{name: "{} in Git, [] live", desired: widget(`{"obj":{}}`, ""), live: widget(`{"obj":[]}`, ""), modified: true},
		{
			name: "an element in a list against null", desired: widget(`{"list":[{}]}`, ""), live: widget(`{"list":null}`, ""), modified: true,
		},
	}
	modes := []struct {
		name     string
		threeWay bool
		call     []diff.CallOption
	}{
		{name: "two-way"},
		{name: "three-way", threeWay: true},
		{name: "server-side", call: []diff.CallOption{diff.WithServerSide(true)}},
	}
	for _, tt := range tests {
		for _, mode := range modes {
			t.Run(tt.name+"/"+mode.name, func(t *testing.T) {
				desired, live := decodeObject(tt.desired), decodeObject(tt.live)
				if desired == nil || live == nil {
					t.Fatal("bad test object")
				}
				if mode.threeWay {
					setLastApplied(t, live, tt.applied, desired)
				}
				d := newDiffer(t, diff.Options{Ignore: tt.ignore})
				res, err := d.Diff(t.Context(), desired, live, mode.call...)
				if err != nil {
					t.Fatal(err)
				}
				if res.Modified != tt.modified {
					t.Fatalf("Modified = %v, want %v\n%s", res.Modified, tt.modified, res.Unified())
				}
				verdict, err := d.Diff(t.Context(), desired, live, append(mode.call, diff.VerdictOnly())...)
				if err != nil || verdict.Modified != tt.modified {
					t.Errorf("VerdictOnly: Modified = %v (err %v), want %v", verdict.Modified, err, tt.modified)
				}
				if !tt.modified {
					if diffs := cmp.Diff(res.Live.Object, res.Desired.Object); diffs != "" {
						t.Errorf("normalized objects differ (-live +desired):\n%s", diffs)
					}
				} else if !hasChangedLine(res.Text) {
					t.Errorf("modified without a changed line:\n%s", res.Text)
				}
			})
		}
	}
}

// setLastApplied writes the last-applied annotation onto live: applied
// (JSON) or, when empty, desired.
func setLastApplied(t *testing.T, live *unstructured.Unstructured, applied string, desired *unstructured.Unstructured) {
	t.Helper()
	if applied == "" {
		b, err := json.Marshal(desired.Object)
		if err != nil {
			t.Fatal(err)
		}
		applied = string(b)
	}
	ann := live.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[diff.LastAppliedAnnotation] = applied
	live.SetAnnotations(ann)
}
