package health

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// loadFixture reads testdata/<name> (one YAML object) as the API server
// would serve it: integers decode as int64.
func loadFixture(tb testing.TB, name string) *unstructured.Unstructured {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(name)))
	if err != nil {
		tb.Fatalf("read fixture: %v", err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		tb.Fatalf("fixture %s: %v", name, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		tb.Fatalf("fixture %s: %v", name, err)
	}
	return u
}

// newEngine builds an Engine or fails the test.
func newEngine(tb testing.TB, opts Options) *Engine {
	tb.Helper()
	e, err := New(opts)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return e
}
