package health

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// fuzzKinds are apiVersion/kind pairs the fuzzer can force onto an object so
// that every check sees arbitrary shapes.
var fuzzKinds = [][2]string{
	{"", ""},
	{"apps/v1", "Deployment"},
	{"apps/v1", "StatefulSet"},
	{"apps/v1", "DaemonSet"},
	{"apps/v1", "ReplicaSet"},
	{"v1", "Pod"},
	{"v1", "Service"},
	{"v1", "PersistentVolumeClaim"},
	{"networking.k8s.io/v1", "Ingress"},
	{"batch/v1", "Job"},
	{"batch/v1", "CronJob"},
	{"autoscaling/v1", "HorizontalPodAutoscaler"},
	{"autoscaling/v2", "HorizontalPodAutoscaler"},
	{"apiregistration.k8s.io/v1", "APIService"},
	{"graphcd.io/v1alpha1", "Application"},
	{"cert-manager.io/v1", "Certificate"},
	{"example.com/v1", "Widget"},
}

// FuzzCheck feeds arbitrary JSON objects to every check, built-in and Lua;
// none may panic.
func FuzzCheck(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(js, uint8(0))
	}
	f.Add([]byte(`{"status":{"conditions":[1,"x",null,{"type":7}]},"spec":{"replicas":"3"}}`), uint8(1))
	f.Add([]byte(`{"metadata":{"deletionTimestamp":5,"annotations":[]}}`), uint8(5))

	e, err := New(Options{LuaChecks: []LuaCheck{
		{Group: "cert-manager.io", Kind: "Certificate", Script: certificateScript},
		{Group: "example.com", Kind: "*", UseOpenLibs: true, Script: `
local n = 0
local function walk(v, depth)
  if depth > 20 then return end
  n = n + 1
  if type(v) == "table" then for k, x in pairs(v) do walk(x, depth + 1) end end
end
walk(obj, 0)
return {status = "Healthy", message = tostring(n)}`},
	}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, kind uint8) {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			// UnmarshalJSON wants a kind; fall back to a plain decode so
			// shapes it would reject still reach the checks.
			var m map[string]any
			if json.Unmarshal(data, &m) != nil || m == nil {
				return
			}
			u.Object = m
		}
		if k := fuzzKinds[int(kind)%len(fuzzKinds)]; k[1] != "" {
			u.Object["apiVersion"] = k[0]
			u.Object["kind"] = k[1]
		}
		res, err := e.Check(t.Context(), u)
		if err == nil && res != nil && !Valid(res.Status) {
			t.Errorf("Check returned invalid status %q", res.Status)
		}
	})
}
