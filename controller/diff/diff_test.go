package diff_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/controller/diff"
)

// loadObject reads testdata/<dir>/<name>.yaml as the unstructured decoder
// would (integers as int64).
func loadObject(t *testing.T, dir, name string) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", dir, name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatalf("%s/%s: %v", dir, name, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatalf("%s/%s: %v", dir, name, err)
	}
	return u
}

func loadPair(t *testing.T, dir string) (desired, live *unstructured.Unstructured) {
	t.Helper()
	return loadObject(t, dir, "desired"), loadObject(t, dir, "live")
}

func newDiffer(t *testing.T, opts diff.Options) *diff.Differ {
	t.Helper()
	d, err := diff.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return d
}

// hasChangedLine reports whether a unified diff shows at least one
// removed or added line below its "--- live" / "+++ desired" header.
func hasChangedLine(text string) bool {
	lines := strings.Split(text, "\n")
	if len(lines) < 2 {
		return false
	}
	for _, line := range lines[2:] {
		if strings.HasPrefix(line, "-") || strings.HasPrefix(line, "+") {
			return true
		}
	}
	return false
}

func TestDiffFixtures(t *testing.T) {
	tests := []struct {
		name     string
		fixture  string
		opts     diff.Options
		call     []diff.CallOption
		modified bool
		// text lines the unified diff must contain (only when modified)
		textHas []string
	}{
		{name: "server defaults and injected sidecar ignored (three-way)", fixture: "defaults"},
		{
			name: "field removed from desired but in last-applied is a change", fixture: "three-way-removal",
			modified: true, textHas: []string{"-  drop: old", "   added-by-operator: x"},
		},
		{name: "without last-applied, fields only in live are ignored", fixture: "two-way"},
		{name: "an empty map in last-applied (kubectl apply's annotations: {}) removes nothing", fixture: "empty-last-applied"},
		{
			name: "list element removed from desired but in last-applied is a change", fixture: "keyed-removal",
			modified: true, textHas: []string{"-        - name: A"},
		},
		{name: "quantities, int-or-string ports canonical", fixture: "quantities"},
		{name: "durations of known CRDs canonical, status dropped", fixture: "certificate"},
		{name: "Secret stringData equals data", fixture: "secret-stringdata"},
		{name: "nulls and empty collections ask for nothing", fixture: "nulls"},
		{name: "ClusterRole rules: [] in Git equals live rules: null", fixture: "role-empty-rules"},
		{
			name: "ClusterRole rules: [] equals null server-side", fixture: "role-empty-rules",
			call: []diff.CallOption{diff.WithServerSide(true)},
		},
		{name: "empty lists and maps at every level equal null or absent live fields", fixture: "empty-collections"},
		{name: "absent or null in Git equals an empty live list or map", fixture: "empty-live"},
		{
			name: "absent or null in Git equals an empty live list or map server-side", fixture: "empty-live",
			call: []diff.CallOption{diff.WithServerSide(true)},
		},
		{name: "Secret values empty in Git equal null live values", fixture: "secret-empty-values"},
		{
			name: "Secret values empty in Git equal null live values server-side", fixture: "secret-empty-values",
			call: []diff.CallOption{diff.WithServerSide(true)},
		},
		{name: "extra element of an atomic list", fixture: "tolerations", modified: true,
			textHas: []string{"-  - effect: NoExecute"}},
		{
			name: "jq path expression drops list element by content", fixture: "tolerations",
			opts: diff.Options{Ignore: []diff.IgnoreRule{{
				Kind:              "Pod",
				JQPathExpressions: []string{`.spec.tolerations[] | select(.key == "node.kubernetes.io/not-ready")`},
			}}},
		},
		{name: "replicas changed by HPA", fixture: "hpa-replicas", modified: true,
			textHas: []string{"-  replicas: 7", "+  replicas: 2"}},
		{
			name: "json pointer ignores replicas", fixture: "hpa-replicas",
			opts: diff.Options{Ignore: []diff.IgnoreRule{{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}}},
		},
		{
			name: "managedFieldsManagers ignores fields the HPA owns", fixture: "hpa-replicas",
			opts: diff.Options{Ignore: []diff.IgnoreRule{{Group: "*", Kind: "*", ManagedFieldsManagers: []string{"kube-controller-manager"}}}},
		},
		{
			name: "other managers do not hide changes", fixture: "hpa-replicas", modified: true,
			opts: diff.Options{Ignore: []diff.IgnoreRule{{Group: "*", Kind: "*", ManagedFieldsManagers: []string{"someone-else"}}}},
		},
		{
			name: "wildcard group and kind glob", fixture: "hpa-replicas",
			opts: diff.Options{Ignore: []diff.IgnoreRule{{Group: "app*", Kind: "Deploy*", JSONPointers: []string{"/spec/replicas"}}}},
		},
		{
			name: "empty group means core only", fixture: "hpa-replicas", modified: true,
			opts: diff.Options{Ignore: []diff.IgnoreRule{{Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}}},
		},
		{
			name: "empty kind matches any kind", fixture: "hpa-replicas",
			opts: diff.Options{Ignore: []diff.IgnoreRule{{Group: "apps", JSONPointers: []string{"/spec/replicas"}}}},
		},
		{
			name: "name must match", fixture: "hpa-replicas", modified: true,
			opts: diff.Options{Ignore: []diff.IgnoreRule{{Group: "apps", Kind: "Deployment", Name: "other", JSONPointers: []string{"/spec/replicas"}}}},
		},
		{
			name: "namespace must match", fixture: "hpa-replicas", modified: true,
			opts: diff.Options{Ignore: []diff.IgnoreRule{{Group: "apps", Kind: "Deployment", Namespace: "dev", JSONPointers: []string{"/spec/replicas"}}}},
		},
		{
			name: "name and namespace match", fixture: "hpa-replicas",
			opts: diff.Options{Ignore: []diff.IgnoreRule{{Group: "apps", Kind: "Deployment", Name: "api", Namespace: "prod", JSONPointers: []string{"/spec/replicas"}}}},
		},
		{
			name: "server-side: fields only in live are changes", fixture: "server-side", modified: true,
			opts: diff.Options{ServerSide: true}, textHas: []string{"-  sessionAffinity: None"},
		},
		{name: "legacy mode on the same pair: defaults ignored", fixture: "server-side"},
		{
			name: "server-side per call", fixture: "server-side", modified: true,
			call: []diff.CallOption{diff.WithServerSide(true)},
		},
		{
			name: "status kept for listed kinds", fixture: "certificate", modified: true,
			opts: diff.Options{Normalize: diff.NormalizeOptions{KeepStatusKinds: []schema.GroupKind{{Group: "cert-manager.io", Kind: "Certificate"}}}},
			call: []diff.CallOption{diff.WithServerSide(true)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			desired, live := loadPair(t, tt.fixture)
			d := newDiffer(t, tt.opts)
			res, err := d.Diff(t.Context(), desired, live, tt.call...)
			if err != nil {
				t.Fatalf("Diff: %v", err)
			}
			if res.Modified != tt.modified {
				t.Fatalf("Modified = %v, want %v\n%s", res.Modified, tt.modified, res.Unified())
			}
			verdict, err := d.Diff(t.Context(), desired, live, append(tt.call, diff.VerdictOnly())...)
			if err != nil || verdict.Modified != tt.modified {
				t.Errorf("VerdictOnly: Modified = %v (err %v), want %v", verdict.Modified, err, tt.modified)
			}
			if !tt.modified {
				if res.Text != "" {
					t.Errorf("Text of an unmodified object = %q", res.Text)
				}
				if diffs := cmp.Diff(res.Live.Object, res.Desired.Object); diffs != "" {
					t.Errorf("normalized objects differ (-live +desired):\n%s", diffs)
				}
			}
			for _, line := range tt.textHas {
				if !strings.Contains(res.Text, line+"\n") {
					t.Errorf("Text lacks %q:\n%s", line, res.Text)
				}
			}
		})
	}
}

func TestDiffInputsUntouched(t *testing.T) {
	desired, live := loadPair(t, "defaults")
	wantD, wantL := desired.DeepCopy(), live.DeepCopy()
	d := newDiffer(t, diff.Options{Ignore: []diff.IgnoreRule{{Group: "*", Kind: "*",
		JSONPointers: []string{"/spec/template/spec/containers/0"}, ManagedFieldsManagers: []string{"kubectl-client-side-apply"}}}})
	if _, err := d.Diff(t.Context(), desired, live); err != nil {
		t.Fatal(err)
	}
	if diffs := cmp.Diff(desired.Object, wantD.Object); diffs != "" {
		t.Errorf("desired mutated (-got +want):\n%s", diffs)
	}
	if diffs := cmp.Diff(live.Object, wantL.Object); diffs != "" {
		t.Errorf("live mutated (-got +want):\n%s", diffs)
	}
}

func TestNormalizedObjects(t *testing.T) {
	desired, live := loadPair(t, "defaults")
	res, err := newDiffer(t, diff.Options{}).Diff(t.Context(), desired, live)
	if err != nil {
		t.Fatal(err)
	}
	meta := res.Live.Object["metadata"].(map[string]any)
	for _, gone := range []string{"managedFields", "uid", "resourceVersion", "generation", "creationTimestamp"} {
		if _, ok := meta[gone]; ok {
			t.Errorf("normalized live keeps metadata.%s", gone)
		}
	}
	if _, ok := meta["annotations"].(map[string]any)[diff.LastAppliedAnnotation]; ok {
		t.Error("normalized live keeps the last-applied annotation")
	}
	if _, ok := res.Live.Object["status"]; ok {
		t.Error("normalized live keeps status")
	}
	if got := res.Desired.Object["spec"].(map[string]any)["progressDeadlineSeconds"]; got != int64(600) {
		t.Errorf("predicted live lacks the server default: progressDeadlineSeconds = %v", got)
	}
}

func TestMissingAndExtraneous(t *testing.T) {
	desired, live := loadPair(t, "two-way")
	annotated := live.DeepCopy()
	annotated.SetAnnotations(map[string]string{diff.CompareOptionsAnnotation: "IgnoreExtraneous"})
	tests := []struct {
		name                         string
		opts                         diff.Options
		call                         []diff.CallOption
		desired, live                *unstructured.Unstructured
		modified, missing, extrancus bool
	}{
		{name: "missing", desired: desired, modified: true, missing: true},
		{name: "extraneous", live: live, modified: true, extrancus: true},
		{name: "extraneous, annotated", live: annotated, extrancus: true},
		{name: "extraneous, option", live: live, opts: diff.Options{IgnoreExtraneous: true}, extrancus: true},
		{name: "extraneous, call option", live: live, call: []diff.CallOption{diff.IgnoreExtraneous()}, extrancus: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := newDiffer(t, tt.opts).Diff(t.Context(), tt.desired, tt.live, tt.call...)
			if err != nil {
				t.Fatal(err)
			}
			got := [3]bool{res.Modified, res.Missing, res.Extraneous}
			if want := [3]bool{tt.modified, tt.missing, tt.extrancus}; got != want {
				t.Errorf("(Modified, Missing, Extraneous) = %v, want %v", got, want)
			}
		})
	}
	if _, err := newDiffer(t, diff.Options{}).Diff(t.Context(), nil, nil); err == nil {
		t.Error("Diff(nil, nil) did not fail")
	}
}

func TestNewRejectsInvalidRules(t *testing.T) {
	tests := []struct {
		name string
		rule diff.IgnoreRule
	}{
		{name: "pointer without slash", rule: diff.IgnoreRule{Kind: "*", JSONPointers: []string{"spec/replicas"}}},
		{name: "bad pointer escape", rule: diff.IgnoreRule{Kind: "*", JSONPointers: []string{"/metadata/a~2b"}}},
		{name: "empty pointer", rule: diff.IgnoreRule{Kind: "*", JSONPointers: []string{""}}},
		{name: "jq syntax", rule: diff.IgnoreRule{Kind: "*", JQPathExpressions: []string{".spec.["}}},
		{name: "jq unknown function", rule: diff.IgnoreRule{Kind: "*", JQPathExpressions: []string{"nosuchfunc(1)"}}},
		{name: "bad kind glob", rule: diff.IgnoreRule{Kind: "[Deploy"}},
		{name: "empty manager", rule: diff.IgnoreRule{Kind: "*", ManagedFieldsManagers: []string{""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := diff.New(diff.Options{Ignore: []diff.IgnoreRule{tt.rule}})
			if err == nil {
				t.Fatal("New accepted an invalid rule")
			}
			if !strings.Contains(err.Error(), "ignoreDifferences[0]") {
				t.Errorf("error %q does not name the rule", err)
			}
		})
	}
}

func TestCompareOptions(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		annotation string
		want       diff.ObjectCompareOptions
	}{
		{annotation: "", want: diff.ObjectCompareOptions{}},
		{annotation: "IgnoreExtraneous", want: diff.ObjectCompareOptions{IgnoreExtraneous: true}},
		{annotation: "ServerSideDiff=true", want: diff.ObjectCompareOptions{ServerSideDiff: &yes}},
		{annotation: "ServerSideDiff=false, IgnoreExtraneous", want: diff.ObjectCompareOptions{ServerSideDiff: &no, IgnoreExtraneous: true}},
		{annotation: "IncludeMutationWebhook=true,ServerSideDiff=true", want: diff.ObjectCompareOptions{ServerSideDiff: &yes, IncludeMutationWebhook: true}},
		{annotation: "Unknown=1,IgnoreExtraneous=false", want: diff.ObjectCompareOptions{}},
	}
	for _, tt := range tests {
		t.Run(tt.annotation, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{}}
			obj.SetAnnotations(map[string]string{diff.CompareOptionsAnnotation: tt.annotation})
			if diffs := cmp.Diff(diff.Compare(obj), tt.want); diffs != "" {
				t.Errorf("Compare (-got +want):\n%s", diffs)
			}
			ie, ssd := diff.CompareOptions(obj)
			if ie != tt.want.IgnoreExtraneous || ssd != (tt.want.ServerSideDiff != nil && *tt.want.ServerSideDiff) {
				t.Errorf("CompareOptions = %v, %v", ie, ssd)
			}
		})
	}
	if got := diff.Compare(nil); got != (diff.ObjectCompareOptions{}) {
		t.Errorf("Compare(nil) = %+v", got)
	}
}
