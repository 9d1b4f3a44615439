package directory_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
	"github.com/graphcd/graphcd/reposerver/render/directory"
)

// FuzzJsonnetInputs evaluates a Jsonnet program with arbitrary inputs: a
// top-level argument and an external variable (as strings, with the
// build environment's $VARS expanded in them), and a data file the
// program parses as YAML: nothing panics, the render ends within its
// budget (an input that is costly to evaluate is refused by the limits,
// not run for ever), and what it returns is Kubernetes objects.
//
//	go test -run '^$' -fuzz FuzzJsonnetInputs ./reposerver/render/directory/
func FuzzJsonnetInputs(f *testing.F) {
	root := f.TempDir()
	write(f, filepath.Join(root, "app", "main.jsonnet"), `function(s) [{
  apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'x'},
  data: {s: s, e: std.extVar('e'), y: std.manifestJson(std.parseYaml(importstr 'data.yaml'))},
}]`)
	f.Add("x", "${ARGOCD_APP_NAME}-$$-$UNKNOWN", "a: 1\nb: [1, 2]")
	f.Add("$", "${", "a: &a [*a]")
	f.Add("", "", "a: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: [*c, *c, *c, *c]")
	f.Add("", "", "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: [*g, *g, *g, *g, *g, *g, *g, *g, *g]")
	f.Add("\x00", "\xff", "--- !!binary AAAA\n--- [\n")
	f.Fuzz(func(t *testing.T, tla, extVar, data string) {
		write(t, filepath.Join(root, "app", "data.yaml"), data)
		req := render.Request{
			RepoRoot: root, Path: "app", AppName: "fuzz",
			Limits: render.Limits{MaxManifestSize: 64 << 10, MaxCombinedSize: 256 << 10},
			Source: v1alpha1.ApplicationSource{Directory: &v1alpha1.ApplicationSourceDirectory{
				Include: "main.jsonnet",
				Jsonnet: v1alpha1.ApplicationSourceJsonnet{
					TLAs:    []v1alpha1.JsonnetVar{{Name: "s", Value: tla}},
					ExtVars: []v1alpha1.JsonnetVar{{Name: "e", Value: extVar}},
				},
			}},
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		objs, err := directory.Render(ctx, req)
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a %d-byte data file took the render past 20 s", len(data))
		}
		if err != nil {
			return
		}
		for _, o := range objs {
			if o.GetAPIVersion() == "" || o.GetKind() == "" {
				t.Fatalf("an object without apiVersion or kind: %v", o.Object)
			}
		}
	})
}
