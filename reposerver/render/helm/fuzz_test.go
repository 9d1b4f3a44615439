package helm

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// FuzzValues renders the test chart with arbitrary inline values, a --set
// parameter and a value file name: nothing panics out of Render, every
// object has apiVersion and kind, and no value file outside the
// repository is read (the file beside it never shows in the output).
//
//	go test -run '^$' -fuzz FuzzValues ./reposerver/render/helm/
func FuzzValues(f *testing.F) {
	root := testRepo(f)
	// The chart shows every value it was given, so a value read from a
	// file outside the repository would be seen.
	writeFile(f, filepath.Join(root, "apps", "app", "templates", "values.yaml"),
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: values}\ndata: {values: {{ toJson .Values | quote }}}\n")
	f.Add("replicas: 3\nimage: {tag: x}", "image.tag", "v1", false, "values-prod.yaml")
	f.Add("a: &a [*a, *a]\nb: *a", "a[0]", "{x}", true, "../../../outside.txt")
	f.Add("{", "x[999999999]", "1", false, "/etc/passwd")
	f.Add("- list", "a.b\\.c", "[1,2", true, "$ref/values.yaml")
	f.Add("nameOverride: '{{ .Release.Name }}'", "fullnameOverride", "", false, "https://example.com/v.yaml")
	f.Fuzz(func(t *testing.T, values, name, value string, forceString bool, valueFile string) {
		h := &v1alpha1.ApplicationSourceHelm{
			Values:     values,
			Parameters: []v1alpha1.HelmParameter{{Name: name, Value: value, ForceString: forceString}},
			ValueFiles: []string{valueFile},
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		objs, err := Render(ctx, appRequest(root, h), ChartSource{})
		if err != nil {
			return
		}
		for _, o := range objs {
			if o.GetAPIVersion() == "" || o.GetKind() == "" {
				t.Fatalf("an object without apiVersion or kind: %v", o.Object)
			}
			b, err := json.Marshal(o.Object)
			if err != nil {
				t.Fatalf("an object does not marshal: %v", err)
			}
			if strings.Contains(string(b), "outside the repository") {
				t.Fatalf("value file %q read outside the repository: %s", valueFile, b)
			}
		}
	})
}
