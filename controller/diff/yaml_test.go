package diff

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// readBack decodes YAML with sigs.k8s.io/yaml and re-encodes v through
// JSON so both sides have the same number types.
func readBack(t testing.TB, out []byte, v any) (got, want any) {
	t.Helper()
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatalf("sigs.k8s.io/yaml cannot read our output: %v\n%s", err, out)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	return got, want
}

func TestEncodeYAMLReadsBack(t *testing.T) {
	strs := []string{
		"", "plain", "true", "False", "yes", "NO", "on", "~", "null", "1", "1.5", "-1", "0x1F", "1e3", "1_000",
		"100m", "1.5Gi", "30s", "2026-01-02", "1:30", "a: b", "a #b", "#x", "- x", "[x]", "{x}", "*x", "&x", "!x",
		"|x", ">x", "'x'", `"x"`, "%x", "@x", "`x", " lead", "trail ", "tab\tin", "multi\nline", "multi\nline\n",
		"multi\nline\n\n\n", "\nleading newline", "  indented\nfirst", "a\n  indented\nb", "a\n \nb", "a\r\nb",
		"\x00ctl", "é unicode", "line\u2028sep", "25%", "/etc/passwd", "http://x.example/y?z=1", "x,y",
		strings.Repeat("long", 100),
	}
	for _, s := range strs {
		for _, v := range []any{
			map[string]any{"k": s},
			map[string]any{s: "v"},
			[]any{s},
			map[string]any{"l": []any{map[string]any{"a": s, "b": []any{s, []any{s}}}}},
		} {
			got, want := readBack(t, encodeYAML(v), v)
			if diffs := cmp.Diff(got, want); diffs != "" {
				t.Errorf("value %q (-got +want):\n%s\n%s", s, diffs, encodeYAML(v))
			}
		}
	}
	for _, v := range []any{
		map[string]any{}, []any{}, map[string]any{"e": map[string]any{}, "l": []any{}, "n": nil, "b": true,
			"i": int64(-3), "f": 1.25, "big": 1e22, "whole": float64(7), "ll": []any{[]any{}, map[string]any{}}},
	} {
		got, want := readBack(t, encodeYAML(v), v)
		if diffs := cmp.Diff(got, want); diffs != "" {
			t.Errorf("(-got +want):\n%s\n%s", diffs, encodeYAML(v))
		}
	}
}

func TestEncodeYAMLShape(t *testing.T) {
	v := map[string]any{
		"b": []any{map[string]any{"name": "x", "ports": []any{int64(80)}}},
		"a": map[string]any{"script": "echo 1\necho 2\n", "cpu": "100m"},
	}
	want := "a:\n  cpu: 100m\n  script: |\n    echo 1\n    echo 2\nb:\n- name: x\n  ports:\n  - 80\n"
	if diffs := cmp.Diff(string(encodeYAML(v)), want); diffs != "" {
		t.Errorf("(-got +want):\n%s", diffs)
	}
}

func FuzzEncodeYAML(f *testing.F) {
	f.Add(`{"a":"b","c":[1,"x\ny",{"d":null}]}`)
	f.Add(`{"s":"  lead\ntrail  \n\n"}`)
	f.Fuzz(func(t *testing.T, doc string) {
		var v any
		if json.Unmarshal([]byte(doc), &v) != nil {
			return
		}
		got, want := readBack(t, encodeYAML(v), v)
		if !cmp.Equal(got, want) {
			t.Fatalf("round trip differs:\n%s", cmp.Diff(got, want))
		}
	})
}

func TestUnified(t *testing.T) {
	a := strings.Split("a b c d e f g h i j k l m n", " ")
	b := strings.Split("a b X d e f g h i j k l n o", " ")
	want := `--- live
+++ desired
@@ -1,6 +1,6 @@
 a
 b
-c
+X
 d
 e
 f
@@ -10,5 +10,5 @@
 j
 k
 l
-m
 n
+o
`
	if diffs := cmp.Diff(unified(a, b, "live", "desired"), want); diffs != "" {
		t.Errorf("(-got +want):\n%s", diffs)
	}
	if got := unified(nil, []string{"x"}, "live", "desired"); got != "--- live\n+++ desired\n@@ -0,0 +1 @@\n+x\n" {
		t.Errorf("creation diff = %q", got)
	}
	if got := unified(a, a, "live", "desired"); got != "--- live\n+++ desired\n" {
		t.Errorf("equal inputs = %q", got)
	}
}

// TestLineDiffIsMinimalAndValid checks that applying the edit script to a
// gives b, on inputs past the edit-distance cap too.
func TestLineDiffIsValid(t *testing.T) {
	mk := func(n, every int, tag string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "line" + string(rune('a'+i%26))
			if every > 0 && i%every == 0 {
				out[i] += tag
			}
		}
		return out
	}
	for _, tc := range []struct{ a, b []string }{
		{mk(50, 7, "x"), mk(60, 5, "y")},
		{mk(3000, 2, "x"), mk(3000, 3, "y")},
		{nil, mk(3, 0, "")},
		{mk(3, 0, ""), nil},
	} {
		var gotA, gotB []string
		for _, e := range lineDiff(tc.a, tc.b) {
			if e.op != '+' {
				gotA = append(gotA, e.line)
			}
			if e.op != '-' {
				gotB = append(gotB, e.line)
			}
		}
		if !cmp.Equal(gotA, tc.a) || !cmp.Equal(gotB, tc.b) {
			t.Errorf("edit script does not reproduce inputs (len %d, %d)", len(tc.a), len(tc.b))
		}
	}
}
