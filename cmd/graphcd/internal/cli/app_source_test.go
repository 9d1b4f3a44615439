package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

// runSourceEdit runs app set's or app unset's source flags on spec (JSON)
// and returns the spec after them.
func runSourceEdit(t *testing.T, unset bool, spec string, args ...string) (map[string]any, error) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(spec), &m); err != nil {
		t.Fatal(err)
	}
	c := &cobra.Command{Use: "x"}
	var position int
	c.Flags().IntVar(&position, "source-position", 0, "")
	var set sourceSetFlags
	var del sourceUnsetFlags
	if unset {
		del.add(c.Flags())
	} else {
		set.add(c.Flags())
	}
	if err := c.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	if unset {
		src, err := chooseSource(m, position)
		if err != nil {
			return nil, err
		}
		return m, del.edit(src)
	}
	edits, err := set.edits(c)
	if err != nil {
		return nil, err
	}
	err = specEdit{source: edits, position: position}.apply(m)
	if d, ok := m["destination"].(map[string]any); ok && len(d) == 0 {
		delete(m, "destination") // apply keeps a destination, made when missing
	}
	return m, err
}

func TestSourceEdits(t *testing.T) {
	for _, tc := range []struct {
		name    string
		unset   bool
		spec    string
		args    []string
		want    string
		wantErr string
	}{
		{name: "helm parameters merge by name",
			spec: `{"source":{"repoURL":"r","helm":{"parameters":[{"name":"a","value":"1"},{"name":"b","value":"2"}]}}}`,
			args: []string{"-p", "a=10", "--helm-set-string", "c=007", "--helm-set-file", "cert=certs/ca.pem", "--parameter", "d=x=y"},
			want: `{"source":{"repoURL":"r","helm":{"parameters":[{"name":"a","value":"10"},{"name":"b","value":"2"},{"name":"d","value":"x=y"},{"name":"c","value":"007","forceString":true}],"fileParameters":[{"name":"cert","path":"certs/ca.pem"}]}}}`},
		{name: "helm options",
			spec: `{"source":{"repoURL":"r","chart":"c"}}`,
			args: []string{"--values", "a.yaml", "--values", "b.yaml", "--release-name", "rel", "--helm-version", "v3", "--helm-skip-crds", "--ignore-missing-value-files", "--helm-pass-credentials"},
			want: `{"source":{"repoURL":"r","chart":"c","helm":{"valueFiles":["a.yaml","b.yaml"],"releaseName":"rel","version":"v3","skipCrds":true,"ignoreMissingValueFiles":true,"passCredentials":true}}}`},
		{name: "kustomize options",
			spec: `{"source":{"repoURL":"r","kustomize":{"images":["nginx:1.25","redis:7"]}}}`,
			args: []string{"--kustomize-image", "nginx=nginx:1.27", "--kustomize-image", "registry:5000/app:v2", "--nameprefix", "p-", "--namesuffix", "-s",
				"--kustomize-replica", "web=3", "--kustomize-namespace", "ns", "--kustomize-version", "v5", "--kustomize-common-label", "team=web", "--kustomize-common-annotation", "a=b=c"},
			want: `{"source":{"repoURL":"r","kustomize":{"images":["redis:7","nginx=nginx:1.27","registry:5000/app:v2"],"namePrefix":"p-","nameSuffix":"-s",
				"replicas":[{"name":"web","count":3}],"namespace":"ns","version":"v5","commonLabels":{"team":"web"},"commonAnnotations":{"a":"b=c"}}}}`},
		{name: "directory and jsonnet",
			spec: `{"source":{"repoURL":"r"}}`,
			args: []string{"--directory-recurse", "--directory-include", "*.yaml", "--directory-exclude", "test/*", "--jsonnet-tla-str", "env=prod", "--jsonnet-tla-code", "n=1+1",
				"--jsonnet-ext-var-str", "x=y", "--jsonnet-ext-var-code", "z={}", "--jsonnet-libs", "vendor"},
			want: `{"source":{"repoURL":"r","directory":{"recurse":true,"include":"*.yaml","exclude":"test/*","jsonnet":{"tlas":[{"name":"env","value":"prod","code":false},{"name":"n","value":"1+1","code":true}],
				"extVars":[{"name":"x","value":"y","code":false},{"name":"z","value":"{}","code":true}],"libs":["vendor"]}}}}`},
		{name: "plugin env in the second source",
			spec: `{"sources":[{"repoURL":"a"},{"repoURL":"b","plugin":{"name":"p","env":[{"name":"A","value":"1"}]}}]}`,
			args: []string{"--source-position", "2", "--plugin-env", "A=2", "--plugin-env", "B=3"},
			want: `{"sources":[{"repoURL":"a"},{"repoURL":"b","plugin":{"name":"p","env":[{"name":"A","value":"2"},{"name":"B","value":"3"}]}}]}`},
		{name: "multi-source needs a position", spec: `{"sources":[{"repoURL":"a"},{"repoURL":"b"}]}`,
			args: []string{"--plugin-env", "A=2"}, wantErr: "--source-position 1..2"},
		{name: "position beyond a single source", spec: `{"source":{"repoURL":"a"}}`,
			args: []string{"--source-position", "2", "--nameprefix", "x"}, wantErr: "single source"},
		{name: "bad parameter", spec: `{"source":{}}`, args: []string{"-p", "novalue"}, wantErr: "want NAME=VALUE"},
		{name: "bad replica", spec: `{"source":{}}`, args: []string{"--kustomize-replica", "web=many"}, wantErr: "want NAME=COUNT"},
		{name: "bad values file", spec: `{"source":{}}`, args: []string{"--values-literal-file", "/no/such/file"}, wantErr: "--values-literal-file"},

		{name: "unset helm", unset: true,
			spec: `{"source":{"repoURL":"r","helm":{"valueFiles":["a.yaml","b.yaml"],"values":"x: 1","parameters":[{"name":"a","value":"1"},{"name":"b","value":"2"}],"fileParameters":[{"name":"a","path":"p"}],"passCredentials":true,"ignoreMissingValueFiles":true,"releaseName":"rel"}}}`,
			args: []string{"--values", "a.yaml", "--values-literal", "-p", "a", "--pass-credentials", "--ignore-missing-value-files"},
			want: `{"source":{"repoURL":"r","helm":{"valueFiles":["b.yaml"],"parameters":[{"name":"b","value":"2"}],"releaseName":"rel"}}}`},
		{name: "unset drops an empty helm block", unset: true,
			spec: `{"source":{"repoURL":"r","helm":{"parameters":[{"name":"a","value":"1"}]}}}`, args: []string{"-p", "a"},
			want: `{"source":{"repoURL":"r"}}`},
		{name: "unset kustomize", unset: true,
			spec: `{"source":{"repoURL":"r","kustomize":{"images":["nginx=nginx:1.27","redis:7"],"namePrefix":"p-","nameSuffix":"-s","version":"v5","namespace":"ns","replicas":[{"name":"web","count":3}],"commonLabels":{"a":"b"}}}}`,
			args: []string{"--kustomize-image", "nginx", "--nameprefix", "--namesuffix", "--kustomize-version", "--kustomize-namespace", "--kustomize-replica", "web"},
			want: `{"source":{"repoURL":"r","kustomize":{"images":["redis:7"],"commonLabels":{"a":"b"}}}}`},
		{name: "unset plugin env and ref", unset: true,
			spec: `{"sources":[{"repoURL":"a","ref":"values"},{"repoURL":"b","plugin":{"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]}}]}`,
			args: []string{"--source-position", "2", "--plugin-env", "A"},
			want: `{"sources":[{"repoURL":"a","ref":"values"},{"repoURL":"b","plugin":{"env":[{"name":"B","value":"2"}]}}]}`},
		{name: "unset ref", unset: true,
			spec: `{"sources":[{"repoURL":"a","ref":"values"},{"repoURL":"b"}]}`, args: []string{"--source-position", "1", "--ref"},
			want: `{"sources":[{"repoURL":"a"},{"repoURL":"b"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := runSourceEdit(t, tc.unset, tc.spec, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			// Compare as JSON values: numbers the edits set are ints.
			raw, _ := json.Marshal(got)
			var gotJSON map[string]any
			if err := json.Unmarshal(raw, &gotJSON); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(gotJSON, want); d != "" {
				t.Errorf("spec (-got +want):\n%s", d)
			}
		})
	}
}

func TestImageName(t *testing.T) {
	for in, want := range map[string]string{
		"nginx": "nginx", "nginx:1.27": "nginx", "nginx=nginx:1.27": "nginx", "nginx@sha256:abc": "nginx",
		"registry:5000/app:v2": "registry:5000/app", "registry:5000/app": "registry:5000/app",
	} {
		if got := imageName(in); got != want {
			t.Errorf("imageName(%q) = %q, want %q", in, got, want)
		}
	}
}
