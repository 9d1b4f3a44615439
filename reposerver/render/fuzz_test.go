package render_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/graphcd/graphcd/reposerver/render"
)

// FuzzDecode feeds arbitrary streams to Decode with small limits: it must
// never panic, must return objects only without an error, must report
// oversized input with ErrTooLarge, and every object must carry apiVersion
// and kind and deep-copy cleanly (no non-JSON values).
//
//	go test -run '^$' -fuzz FuzzDecode ./reposerver/render/
func FuzzDecode(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "decode", "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("a: &a [*a]"))
	f.Add([]byte(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"A"}]}`))
	f.Add([]byte("--- |\n---\n...\n%YAML 1.2\n---\n<<: {a: 1}\n"))

	limits := render.Limits{MaxManifestSize: 4 << 10, MaxCombinedSize: 16 << 10}
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := render.Decode("fuzz.yaml", data, limits)
		if int64(len(data)) > limits.MaxCombinedSize && !errors.Is(err, render.ErrTooLarge) {
			t.Fatalf("%d bytes over the combined limit: got %v, want ErrTooLarge", len(data), err)
		}
		if err != nil {
			if objs != nil {
				t.Fatalf("got %d objects with error %v", len(objs), err)
			}
			return
		}
		for i, o := range objs {
			if o.GetAPIVersion() == "" || o.GetKind() == "" {
				t.Fatalf("object %d lacks apiVersion or kind: %v", i, o.Object)
			}
			if _, err := o.MarshalJSON(); err != nil {
				t.Fatalf("object %d does not marshal: %v", i, err)
			}
			o.DeepCopy()
		}
	})
}
