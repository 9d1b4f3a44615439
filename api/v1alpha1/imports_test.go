package v1alpha1_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsOnlyAPIMachinery keeps the API package a leaf: every graphcd
// package and outside programs import it, so it may depend only on the
// standard library and k8s.io/apimachinery.
func TestImportsOnlyAPIMachinery(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
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
			stdlib := !strings.Contains(strings.Split(path, "/")[0], ".")
			if !stdlib && !strings.HasPrefix(path, "k8s.io/apimachinery/") {
				t.Errorf("%s imports %s; api/v1alpha1 may import only the standard library and k8s.io/apimachinery", name, path)
			}
		}
	}
}
