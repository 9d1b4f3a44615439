package health

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// operatorCase is one entry of testdata/operators/*.yaml: an object with
// the status its operator documents, and the health it must get.
type operatorCase struct {
	Name   string          `json:"name"`
	Want   Result          `json:"want"`
	Object json.RawMessage `json:"object"`
}

// loadOperatorCases reads every testdata/operators/*.yaml, a list of cases
// each, with the objects decoded as the API server would serve them.
func loadOperatorCases(tb testing.TB) map[string][]operatorCase {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "operators", "*.yaml"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no operator fixtures: %v", err)
	}
	out := make(map[string][]operatorCase, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var cases []operatorCase
		if err := yaml.UnmarshalStrict(data, &cases); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".yaml")] = cases
	}
	return out
}

func (c operatorCase) object(tb testing.TB) *unstructured.Unstructured {
	tb.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(c.Object); err != nil {
		tb.Fatalf("%s: %v", c.Name, err)
	}
	return u
}

func TestOperatorChecks(t *testing.T) {
	e := newEngine(t, Options{})
	for file, cases := range loadOperatorCases(t) {
		for _, c := range cases {
			t.Run(file+"/"+c.Name, func(t *testing.T) {
				got, err := e.Check(t.Context(), c.object(t))
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				if got == nil {
					t.Fatal("Check: no health check for this kind")
				}
				if diff := cmp.Diff(*got, c.Want); diff != "" {
					t.Errorf("Check (-got +want):\n%s", diff)
				}
			})
		}
	}
}

// coreGroups hold the kinds builtin_test.go covers with their own fixtures.
var coreGroups = map[string]bool{
	"": true, "apps": true, "extensions": true, "batch": true, "autoscaling": true,
	"networking.k8s.io": true, "apiregistration.k8s.io": true, "graphcd.io": true,
}

// TestOperatorCoverage keeps every operator check honest: each group/kind
// (and each pattern) has a Healthy case and a case that is not Healthy.
func TestOperatorCoverage(t *testing.T) {
	healthy := map[string]bool{}
	other := map[string]bool{}
	for _, cases := range loadOperatorCases(t) {
		for _, c := range cases {
			gk := objectGroupKind(c.object(t))
			keys := []string{gk.String()}
			if _, exact := builtinChecks[gk]; !exact {
				keys = nil
				for _, p := range builtinPatternChecks {
					if wildcardMatch(p.group, gk.group) && wildcardMatch(p.kind, gk.kind) {
						keys = append(keys, p.group+"/"+p.kind)
					}
				}
			}
			for _, k := range keys {
				if c.Want.Status == StatusHealthy {
					healthy[k] = true
				} else {
					other[k] = true
				}
			}
		}
	}
	var want []string
	for gk := range builtinChecks {
		if !coreGroups[gk.group] {
			want = append(want, gk.String())
		}
	}
	for _, p := range builtinPatternChecks {
		want = append(want, p.group+"/"+p.kind)
	}
	for _, k := range want {
		if !healthy[k] {
			t.Errorf("%s: no Healthy case in testdata/operators", k)
		}
		if !other[k] {
			t.Errorf("%s: no case that is not Healthy in testdata/operators", k)
		}
	}
}

// TestBuiltinPatterns: an exact built-in entry wins over a pattern, and a
// pattern check may decline an object of its groups.
func TestBuiltinPatterns(t *testing.T) {
	e := newEngine(t, Options{})
	provider := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider",
		"metadata": map[string]any{"name": "provider-aws"},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Installed", "status": "True"},
			map[string]any{"type": "Healthy", "status": "True", "reason": "HealthyPackageRevision"},
			// A managed resource's Synced False would make it Degraded.
			map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError"},
		}},
	}}
	got, err := e.Check(t.Context(), provider)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, &Result{Status: StatusHealthy, Message: "HealthyPackageRevision"}); diff != "" {
		t.Errorf("Provider (-got +want):\n%s", diff)
	}
	providerConfig := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "aws.upbound.io/v1beta1", "kind": "ProviderConfig",
		"metadata": map[string]any{"name": "default"},
		"spec":     map[string]any{"credentials": map[string]any{"source": "IRSA"}},
		"status":   map[string]any{"users": int64(12)},
	}}
	got, err = e.Check(t.Context(), providerConfig)
	if err != nil || got != nil {
		t.Errorf("ProviderConfig: got %v, %v; want no health check", got, err)
	}
}

// TestLuaOverridesBuiltin: a check from graphcd-cm wins over the built-in
// one, whether it names the kind exactly or by a pattern, and over the
// built-in patterns too.
func TestLuaOverridesBuiltin(t *testing.T) {
	const script = `return {status = "Degraded", message = "from graphcd-cm"}`
	managed := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "s3.aws.upbound.io/v1beta1", "kind": "Bucket",
		"metadata": map[string]any{"name": "b"},
		"spec":     map[string]any{"forProvider": map[string]any{}},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "True"},
		}},
	}}
	tests := []struct {
		name  string
		check LuaCheck
		obj   *unstructured.Unstructured
	}{
		{"exact over exact", LuaCheck{Group: "cert-manager.io", Kind: "Certificate", Script: script}, loadFixture(t, "crd/ready.yaml")},
		{"pattern over exact", LuaCheck{Group: "cert-manager.io", Kind: "*", Script: script}, loadFixture(t, "crd/ready.yaml")},
		{"exact over pattern", LuaCheck{Group: "s3.aws.upbound.io", Kind: "Bucket", Script: script}, managed},
		{"pattern over pattern", LuaCheck{Group: "*.upbound.io", Kind: "*", Script: script}, managed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			builtin, err := newEngine(t, Options{}).Check(t.Context(), tt.obj)
			if err != nil || builtin == nil || builtin.Status != StatusHealthy {
				t.Fatalf("built-in check: %v, %v; want Healthy", builtin, err)
			}
			got, err := newEngine(t, Options{LuaChecks: []LuaCheck{tt.check}}).Check(t.Context(), tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, &Result{Status: StatusDegraded, Message: "from graphcd-cm"}); diff != "" {
				t.Errorf("Check (-got +want):\n%s", diff)
			}
		})
	}
}

// FuzzOperatorChecks feeds arbitrary objects, seeded with the operator
// fixtures, to every operator check, built-in exact and pattern, with no
// Lua check in front; none may panic or return an invalid status.
func FuzzOperatorChecks(f *testing.F) {
	for _, cases := range loadOperatorCases(f) {
		for _, c := range cases {
			f.Add([]byte(c.Object), uint8(0))
		}
	}
	f.Add([]byte(`{"status":{"conditions":[1,"x",null,{"type":"Ready","observedGeneration":"2"}],"byPod":[7,{"errors":[3]}]}}`), uint8(3))
	var kinds []groupKind
	for gk := range builtinChecks {
		if !coreGroups[gk.group] {
			kinds = append(kinds, gk)
		}
	}
	slices.SortFunc(kinds, func(a, b groupKind) int { return strings.Compare(a.String(), b.String()) })
	kinds = append(kinds,
		groupKind{"s3.aws.upbound.io", "Bucket"},
		groupKind{"database.gcp.crossplane.io", "CloudSQLInstance"},
		groupKind{"constraints.gatekeeper.sh", "K8sRequiredLabels"})
	e := newEngine(f, Options{})
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		var m map[string]any
		if json.Unmarshal(data, &m) != nil || m == nil {
			return
		}
		gk := kinds[int(kind)%len(kinds)]
		m["apiVersion"] = gk.group + "/v1"
		m["kind"] = gk.kind
		res, err := e.Check(t.Context(), &unstructured.Unstructured{Object: m})
		if err != nil || res == nil && !strings.Contains(gk.group, "crossplane.io") && !strings.Contains(gk.group, "upbound.io") {
			t.Fatalf("Check %s: %v, %v", gk, res, err)
		}
		if res != nil && !Valid(res.Status) {
			t.Errorf("Check %s returned invalid status %q", gk, res.Status)
		}
	})
}
