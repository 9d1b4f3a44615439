package actions

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// testNow is the clock of every engine the tests build.
var testNow = time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)

// testScope is the cluster scope the tests assume.
func testScope(group, kind string) bool {
	return (group == "" && kind == "Namespace") || (group == "rbac.authorization.k8s.io" && kind == "ClusterRoleBinding")
}

// newEngine builds an engine with custom actions and the test clock.
func newEngine(t testing.TB, custom ...Custom) *Engine {
	t.Helper()
	e, err := New(Options{Custom: custom, ClusterScoped: testScope, Now: func() time.Time { return testNow }, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// objects reads testdata/objects.yaml, by name.
func objects(t testing.TB) map[string]*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile("testdata/objects.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(j); err != nil {
			t.Fatal(err)
		}
		out[u.GetName()] = u
	}
}
