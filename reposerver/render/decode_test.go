package render_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/reposerver/render"
)

// ids lists objects as kind/name, the shape most decode tests assert.
func ids(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "decode", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDecodeFixtures(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"multi.yaml", []string{"ConfigMap/first", "Deployment/second", "Service/third"}},
		{"list.yaml", []string{"ConfigMap/a", "Secret/b", "ConfigMap/c"}},
		{"objects.json", []string{"ConfigMap/a", "Secret/b"}},
		{"scalars.yaml", []string{"ConfigMap/scalars"}},
		{"merge.yaml", []string{"ConfigMap/merged"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			objs, err := render.Decode(tt.file, readFixture(t, tt.file), render.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ids(objs), tt.want); diff != "" {
				t.Errorf("objects (-got +want):\n%s", diff)
			}
			for _, o := range objs {
				o.DeepCopy() // panics on values that are not JSON-compatible
			}
		})
	}
}

func TestDecodeScalarsFollowYAML11(t *testing.T) {
	objs, err := render.Decode("scalars.yaml", readFixture(t, "scalars.yaml"), render.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got := objs[0].Object["spec"]
	want := map[string]any{
		"yes11":   true,
		"off11":   false,
		"quoted":  "on",
		"int":     int64(42),
		"hex":     int64(31),
		"float":   1.5,
		"big":     1.2345678901234568e+29,
		"null1":   nil,
		"when":    "2024-01-02T03:04:05Z",
		"literal": "line\n",
		"tagged":  "7",
		"custom":  "thing",
		"1":       "one",
	}
	if diff := cmp.Diff(got, any(want)); diff != "" {
		t.Errorf("spec (-got +want):\n%s", diff)
	}
}

func TestDecodeMergeKeys(t *testing.T) {
	objs, err := render.Decode("merge.yaml", readFixture(t, "merge.yaml"), render.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": int64(10), "b": int64(2), "c": int64(30)}
	if diff := cmp.Diff(objs[0].Object["data"], any(want)); diff != "" {
		t.Errorf("data (-got +want):\n%s", diff)
	}
}

func TestDecodeInline(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string
	}{
		{"empty", "", []string{}},
		{"only comments", "# nothing\n---\n# here\n", []string{}},
		{"json null", "null", []string{}},
		{"json stream", `{"apiVersion":"v1","kind":"A","metadata":{"name":"x"}} {"apiVersion":"v1","kind":"B","metadata":{"name":"y"}}`, []string{"A/x", "B/y"}},
		{"yaml flow first", "[1]\n", nil},
		{"bom", "\uFEFFapiVersion: v1\nkind: A\nmetadata: {name: x}\n", []string{"A/x"}},
		{"crlf", "apiVersion: v1\r\nkind: A\r\n---\r\napiVersion: v1\r\nkind: B\r\n", []string{"A/", "B/"}},
		{"directive", "%YAML 1.1\n---\napiVersion: v1\nkind: A\n", []string{"A/"}},
		{"marker with content", "--- {apiVersion: v1, kind: A}\n--- {apiVersion: v1, kind: B}\n", []string{"A/", "B/"}},
		{"typed list with null items", "apiVersion: v1\nkind: PodList\nitems: null\n", []string{}},
		{"kind ending in List without items", "apiVersion: x/v1\nkind: AllowList\nspec: {}\n", []string{"AllowList/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := render.Decode("in.yaml", []byte(tt.data), render.Limits{})
			if tt.want == nil {
				if err == nil {
					t.Fatalf("got %v, want an error", ids(objs))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ids(objs), tt.want); diff != "" {
				t.Errorf("objects (-got +want):\n%s", diff)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	deep := strings.Repeat("[", 100000)
	tests := []struct {
		name     string
		data     string
		limits   render.Limits
		contains []string
		tooLarge bool
	}{
		{
			name:     "scalar document",
			data:     "apiVersion: v1\nkind: A\n---\nhello\n",
			contains: []string{"in.yaml", "document 2", "not an object"},
		},
		{
			name:     "missing apiVersion",
			data:     "kind: A\n",
			contains: []string{"in.yaml", "document 1", "missing apiVersion"},
		},
		{
			name:     "missing kind",
			data:     "apiVersion: v1\nkind: A\n---\n# c\n---\napiVersion: v1\n",
			contains: []string{"document 2 (line 5)", "missing kind"},
		},
		{
			name:     "list item without kind",
			data:     "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n",
			contains: []string{"document 1 (line 1), item 1", "missing kind"},
		},
		{
			name:     "invalid yaml",
			data:     "apiVersion: v1\nkind: [\n",
			contains: []string{"in.yaml", "document 1"},
		},
		{
			name:     "json array of scalars",
			data:     `[1, 2]`,
			contains: []string{"document 1", "not an object"},
		},
		{
			name:     "json object too large",
			data:     `{"apiVersion":"v1","kind":"A","data":"` + strings.Repeat("x", 200) + `"}`,
			limits:   render.Limits{MaxManifestSize: 100},
			contains: []string{"document 1"},
			tooLarge: true,
		},
		{
			name:     "yaml document too large",
			data:     "apiVersion: v1\nkind: A\n---\napiVersion: v1\nkind: B\ndata: " + strings.Repeat("x", 200) + "\n",
			limits:   render.Limits{MaxManifestSize: 100},
			contains: []string{"document 2"},
			tooLarge: true,
		},
		{
			name:     "combined too large",
			data:     strings.Repeat("# padding\n", 20),
			limits:   render.Limits{MaxCombinedSize: 100},
			tooLarge: true,
		},
		{
			name:     "self alias",
			data:     "apiVersion: v1\nkind: A\nx: &a [*a]\n",
			contains: []string{"document 1"},
		},
		{
			name:     "infinity",
			data:     "apiVersion: v1\nkind: A\nx: .inf\n",
			contains: []string{"no JSON form"},
		},
		{name: "deep yaml", data: deep, contains: []string{"document 1"}},
		{name: "deep json", data: "{\"a\":" + deep, contains: []string{"in.yaml"}},
		{
			name:     "collection key",
			data:     "apiVersion: v1\nkind: A\n? [a]\n: b\n",
			contains: []string{"not a scalar"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := render.Decode("in.yaml", []byte(tt.data), tt.limits)
			if err == nil {
				t.Fatalf("got %v, want an error", ids(objs))
			}
			for _, s := range tt.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if got := errors.Is(err, render.ErrTooLarge); got != tt.tooLarge {
				t.Errorf("errors.Is(err, ErrTooLarge) = %v, want %v (%v)", got, tt.tooLarge, err)
			}
		})
	}
}

// TestDecodeAliasBomb checks that a 2 KB document whose aliases expand to
// 10^10 scalars fails with ErrTooLarge, having allocated no more than a
// small multiple of its limit.
func TestDecodeAliasBomb(t *testing.T) {
	data := readFixture(t, "bomb.yaml")
	limits := render.Limits{MaxManifestSize: 1 << 20}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := render.Decode("bomb.yaml", data, limits)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, render.ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
	if !strings.Contains(err.Error(), "bomb.yaml: document 1") {
		t.Errorf("error %q does not name the document", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("allocated %d bytes, want at most 64 MiB", alloc)
	}
}
