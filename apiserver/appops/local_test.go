package appops

import (
	"fmt"
	"strings"
	"testing"
)

func TestCheckLocalManifests(t *testing.T) {
	cm := func(name string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q}}`, name)
	}
	many := make([]string, MaxLocalManifests+1)
	for i := range many {
		many[i] = cm(fmt.Sprint("c", i))
	}
	big := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata: {k: " + strings.Repeat("x", MaxLocalManifestBytes) + "}\n"
	for _, tc := range []struct {
		name      string
		manifests []string
		wantErr   string
	}{
		{"json and yaml", []string{cm("a"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n", "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"}, ""},
		{"too many", many, "at most 250"},
		{"too big", []string{big}, "KiB in all"},
		{"a stream", []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"}, "manifests[0]: one object"},
		{"not an object", []string{cm("a"), "[1, 2]"}, "manifests[1]: not a YAML or JSON object"},
		{"no kind", []string{`{"apiVersion":"v1","metadata":{"name":"a"}}`}, "want an object with apiVersion, kind and metadata.name"},
		{"no name", []string{`{"apiVersion":"v1","kind":"ConfigMap"}`}, "metadata.name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckLocalManifests(tc.manifests)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
			}
		})
	}
}
