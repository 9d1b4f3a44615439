package appstate_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsStayNeutral keeps appstate a leaf between the controller
// (which writes) and the API (which reads): of graphcd it may import only
// api/v1alpha1, so neither side's internals leak into the other.
func TestImportsStayNeutral(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{"k8s.io/apimachinery/", "github.com/redis/go-redis/", "github.com/graphcd/graphcd/api/v1alpha1"}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Split(path, "/")[0], ".") {
				continue // standard library
			}
			ok := false
			for _, a := range allowed {
				ok = ok || strings.HasPrefix(path, a)
			}
			if !ok {
				t.Errorf("%s imports %s; appstate may import only the standard library, apimachinery, go-redis and api/v1alpha1", name, path)
			}
		}
	}
}
