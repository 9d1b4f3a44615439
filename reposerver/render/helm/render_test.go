package helm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestRenderLikeHelmTemplate(t *testing.T) {
	root := testRepo(t)
	objs, err := Render(t.Context(), appRequest(root, nil), ChartSource{})
	if err != nil {
		t.Fatal(err)
	}
	// CRDs first, then manifests and hooks, each in Helm's install order
	// (by kind); NOTES.txt never appears.
	want := []string{
		"CustomResourceDefinition/widgets.example.com",
		"ConfigMap/guestbook-common",
		"ConfigMap/guestbook-app",
		"Deployment/guestbook-app",
		"Pod/guestbook-app-test",
		"Job/guestbook-app-migrate",
	}
	if diff := cmp.Diff(ids(objs), want); diff != "" {
		t.Errorf("objects (-got +want):\n%s", diff)
	}
	hook := find(t, objs, "Job", "guestbook-app-migrate").GetAnnotations()
	wantHook := map[string]string{
		"helm.sh/hook":               "pre-install,pre-upgrade",
		"helm.sh/hook-weight":        "-5",
		"helm.sh/hook-delete-policy": "before-hook-creation",
	}
	if diff := cmp.Diff(hook, wantHook); diff != "" {
		t.Errorf("hook annotations (-got +want):\n%s", diff)
	}
	data := configData(t, objs, "guestbook-app")
	if data["namespace"] != "guestbook-ns" {
		t.Errorf("namespace = %q, want the destination namespace", data["namespace"])
	}
	if data["helmignored"] != "true" {
		t.Errorf("files matched by .helmignore are visible to the chart")
	}
	// The dependency sees the parent's values for it.
	if got := configData(t, objs, "guestbook-common")["greeting"]; got != "hello from app" {
		t.Errorf("dependency greeting = %q", got)
	}
}

func TestRenderValuesPrecedence(t *testing.T) {
	root := testRepo(t)
	tests := []struct {
		name string
		helm *v1alpha1.ApplicationSourceHelm
		want map[string]string // subset of the ConfigMap's data
	}{
		{
			name: "chart defaults",
			want: map[string]string{"replicas": "1", "message": "default", "tag": "1.0"},
		},
		{
			name: "one values file",
			helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"values-prod.yaml"}},
			want: map[string]string{"replicas": "3", "message": "prod", "tag": "1.0"},
		},
		{
			name: "later values file wins",
			helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"values-prod.yaml", "values-extra.yaml"}},
			want: map[string]string{"replicas": "3", "message": "extra", "tag": "2.0"},
		},
		{
			name: "order reversed",
			helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"values-extra.yaml", "values-prod.yaml"}},
			want: map[string]string{"replicas": "3", "message": "prod", "tag": "2.0"},
		},
		{
			name: "inline values over values files",
			helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"values-prod.yaml"}, Values: "message: inline\n"},
			want: map[string]string{"replicas": "3", "message": "inline"},
		},
		{
			name: "valuesObject wins over values",
			helm: &v1alpha1.ApplicationSourceHelm{
				Values:       "message: inline\nreplicaCount: 7\n",
				ValuesObject: &runtime.RawExtension{Raw: []byte(`{"message":"object"}`)},
			},
			want: map[string]string{"replicas": "1", "message": "object"},
		},
		{
			name: "parameters over inline values",
			helm: &v1alpha1.ApplicationSourceHelm{
				ValueFiles: []string{"values-prod.yaml"},
				Values:     "message: inline\n",
				Parameters: []v1alpha1.HelmParameter{{Name: "message", Value: "param"}},
			},
			want: map[string]string{"replicas": "3", "message": "param"},
		},
		{
			name: "values file path through a subdirectory and back",
			helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"templates/../values-prod.yaml"}},
			want: map[string]string{"message": "prod"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Render(t.Context(), appRequest(root, tc.helm), ChartSource{})
			if err != nil {
				t.Fatal(err)
			}
			data := configData(t, objs, "guestbook-app")
			got := map[string]string{}
			for k := range tc.want {
				got[k] = data[k]
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("values (-got +want):\n%s", diff)
			}
		})
	}
}

func TestRenderParameters(t *testing.T) {
	root := testRepo(t)
	tests := []struct {
		name   string
		params []v1alpha1.HelmParameter
		want   map[string]string
	}{
		{
			name:   "set parses types",
			params: []v1alpha1.HelmParameter{{Name: "replicaCount", Value: "5"}, {Name: "enabled", Value: "false"}},
			want:   map[string]string{"replicas": "5", "replicasType": "int64", "enabled": "false", "enabledType": "bool"},
		},
		{
			name: "forceString keeps strings",
			params: []v1alpha1.HelmParameter{
				{Name: "replicaCount", Value: "5", ForceString: true},
				{Name: "enabled", Value: "false", ForceString: true},
			},
			want: map[string]string{"replicas": "5", "replicasType": "string", "enabled": "false", "enabledType": "string"},
		},
		{
			name: "forceString applies after plain set",
			params: []v1alpha1.HelmParameter{
				{Name: "replicaCount", Value: "9", ForceString: true},
				{Name: "replicaCount", Value: "4"},
			},
			want: map[string]string{"replicas": "9", "replicasType": "string"},
		},
		{
			name:   "comma stays in one value",
			params: []v1alpha1.HelmParameter{{Name: "message", Value: "a,b"}},
			want:   map[string]string{"message": "a,b"},
		},
		{
			name:   "braces make a list",
			params: []v1alpha1.HelmParameter{{Name: "list", Value: "{x,y}"}},
			want:   map[string]string{"list": "x;y"},
		},
		{
			name:   "nested key, floats stay strings as with --set",
			params: []v1alpha1.HelmParameter{{Name: "image.tag", Value: "3.1"}},
			want:   map[string]string{"tag": "3.1", "tagType": "string"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := &v1alpha1.ApplicationSourceHelm{Parameters: tc.params}
			objs, err := Render(t.Context(), appRequest(root, h), ChartSource{})
			if err != nil {
				t.Fatal(err)
			}
			data := configData(t, objs, "guestbook-app")
			got := map[string]string{}
			for k := range tc.want {
				got[k] = data[k]
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("data (-got +want):\n%s", diff)
			}
		})
	}
}

// Parameter values, value file paths and file parameter paths expand the
// build environment, as in Argo CD: the resolved revision reaches a value,
// and $$ stays a literal "$".
func TestRenderBuildEnvironment(t *testing.T) {
	root := testRepo(t)
	writeFile(t, filepath.Join(root, "apps", "app", "values-guestbook.yaml"), "image:\n  tag: from-guestbook-values\n")
	writeFile(t, filepath.Join(root, "apps", "app", "files", "guestbook.txt"), "the guestbook's file\n")
	h := &v1alpha1.ApplicationSourceHelm{
		ValueFiles: []string{"values-${ARGOCD_APP_NAME}.yaml"},
		Parameters: []v1alpha1.HelmParameter{
			{Name: "message", Value: "$ARGOCD_APP_NAME@${ARGOCD_APP_REVISION_SHORT} costs $$5"},
			{Name: "enabled", Value: "$ARGOCD_APP_NAMESPACE", ForceString: true},
		},
		FileParameters: []v1alpha1.HelmFileParameter{{Name: "fromFile", Path: "files/$ARGOCD_APP_NAME.txt"}},
	}
	req := appRequest(root, h)
	req.Revision = "0123456789abcdef0123456789abcdef01234567"
	objs, err := Render(t.Context(), req, ChartSource{})
	if err != nil {
		t.Fatal(err)
	}
	data := configData(t, objs, "guestbook-app")
	want := map[string]string{
		"message":  "guestbook@0123456 costs $5",
		"enabled":  "guestbook-ns",
		"tag":      "from-guestbook-values",
		"fromFile": "the guestbook's file\n",
	}
	got := map[string]string{}
	for k := range want {
		got[k] = data[k]
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("data (-got +want):\n%s", diff)
	}
}

func TestRenderFileParameters(t *testing.T) {
	root := testRepo(t)
	h := &v1alpha1.ApplicationSourceHelm{FileParameters: []v1alpha1.HelmFileParameter{{Name: "fromFile", Path: "files/motd.txt"}}}
	objs, err := Render(t.Context(), appRequest(root, h), ChartSource{})
	if err != nil {
		t.Fatal(err)
	}
	if got := configData(t, objs, "guestbook-app")["fromFile"]; got != "hello from a file\n" {
		t.Errorf("fromFile = %q", got)
	}

	for _, p := range []string{"../../../outside.txt", "/etc/hostname"} {
		h := &v1alpha1.ApplicationSourceHelm{FileParameters: []v1alpha1.HelmFileParameter{{Name: "fromFile", Path: p}}}
		_, err := Render(t.Context(), appRequest(root, h), ChartSource{})
		if !errors.Is(err, render.ErrOutsideRoot) {
			t.Errorf("file parameter %q: err = %v, want ErrOutsideRoot", p, err)
		}
	}
}

func TestRenderReleaseNameAndNamespace(t *testing.T) {
	root := testRepo(t)
	tests := []struct {
		name          string
		helm          *v1alpha1.ApplicationSourceHelm
		destNamespace string
		wantConfigMap string
		wantNamespace string
	}{
		{name: "application defaults", destNamespace: "dest", wantConfigMap: "guestbook-app", wantNamespace: "dest"},
		{
			name:          "helm overrides",
			helm:          &v1alpha1.ApplicationSourceHelm{ReleaseName: "rel", Namespace: "other"},
			destNamespace: "dest",
			wantConfigMap: "rel-app",
			wantNamespace: "other",
		},
		{name: "no namespace anywhere", wantConfigMap: "guestbook-app", wantNamespace: "default"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := appRequest(root, tc.helm)
			req.Namespace = tc.destNamespace
			objs, err := Render(t.Context(), req, ChartSource{})
			if err != nil {
				t.Fatal(err)
			}
			if got := configData(t, objs, tc.wantConfigMap)["namespace"]; got != tc.wantNamespace {
				t.Errorf(".Release.Namespace = %q, want %q", got, tc.wantNamespace)
			}
		})
	}
}

func TestRenderSkipCrdsAndTests(t *testing.T) {
	root := testRepo(t)
	tests := []struct {
		name string
		helm *v1alpha1.ApplicationSourceHelm
		want []string
	}{
		{
			name: "skipCrds",
			helm: &v1alpha1.ApplicationSourceHelm{SkipCrds: true},
			want: []string{"ConfigMap/guestbook-app", "ConfigMap/guestbook-common", "Deployment/guestbook-app", "Job/guestbook-app-migrate", "Pod/guestbook-app-test"},
		},
		{
			name: "skipTests keeps other hooks",
			helm: &v1alpha1.ApplicationSourceHelm{SkipTests: true},
			want: []string{"ConfigMap/guestbook-app", "ConfigMap/guestbook-common", "CustomResourceDefinition/widgets.example.com", "Deployment/guestbook-app", "Job/guestbook-app-migrate"},
		},
		{
			name: "both",
			helm: &v1alpha1.ApplicationSourceHelm{SkipCrds: true, SkipTests: true},
			want: []string{"ConfigMap/guestbook-app", "ConfigMap/guestbook-common", "Deployment/guestbook-app", "Job/guestbook-app-migrate"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Render(t.Context(), appRequest(root, tc.helm), ChartSource{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sortedIDs(objs), tc.want); diff != "" {
				t.Errorf("objects (-got +want):\n%s", diff)
			}
		})
	}
}

func TestRenderCapabilities(t *testing.T) {
	root := testRepo(t)
	const sm = "monitoring.coreos.com/v1/ServiceMonitor"
	tests := []struct {
		name           string
		helm           *v1alpha1.ApplicationSourceHelm
		reqKube        string
		reqAPIs        []string
		wantKube       string
		wantModern     bool
		wantServiceMon bool
	}{
		{name: "request kube version", reqKube: "1.29.3", wantKube: "v1.29.3"},
		{name: "request kube version with v", reqKube: "v1.31.0", wantKube: "v1.31.0", wantModern: true},
		{name: "helm kubeVersion wins", helm: &v1alpha1.ApplicationSourceHelm{KubeVersion: "1.32.1"}, reqKube: "1.28.0", wantKube: "v1.32.1", wantModern: true},
		{name: "request API versions", reqKube: "1.30.0", reqAPIs: []string{sm}, wantKube: "v1.30.0", wantModern: true, wantServiceMon: true},
		{name: "helm apiVersions win", helm: &v1alpha1.ApplicationSourceHelm{APIVersions: []string{"example.com/v1"}}, reqKube: "1.30.0", reqAPIs: []string{sm}, wantKube: "v1.30.0", wantModern: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := appRequest(root, tc.helm)
			req.KubeVersion, req.APIVersions = tc.reqKube, tc.reqAPIs
			objs, err := Render(t.Context(), req, ChartSource{})
			if err != nil {
				t.Fatal(err)
			}
			data := configData(t, objs, "guestbook-app")
			_, modern := data["modern"]
			hasSM := strings.Contains(strings.Join(ids(objs), " "), "ServiceMonitor/")
			got := []any{data["kubeVersion"], modern, hasSM}
			want := []any{tc.wantKube, tc.wantModern, tc.wantServiceMon}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("[kubeVersion modern serviceMonitor] (-got +want):\n%s", diff)
			}
		})
	}
}

func TestRenderValueFilesRefused(t *testing.T) {
	root := testRepo(t)
	// The links live beside the chart, not in it: a link in the chart
	// that leaves the repository fails the chart load itself.
	values := filepath.Join(root, "apps", "values")
	writeFile(t, filepath.Join(values, "shared.yaml"), "message: shared\n")
	symlink(t, "../../../outside.txt", filepath.Join(values, "leak.yaml"))
	symlink(t, filepath.Join(filepath.Dir(root), "outside.txt"), filepath.Join(values, "leak-abs.yaml"))
	symlink(t, "shared.yaml", filepath.Join(values, "inside.yaml"))

	tests := []struct {
		file    string
		ignore  bool
		wantErr error  // checked with errors.Is when set
		wantMsg string // checked with strings.Contains when set
	}{
		{file: "../../../outside.txt", wantErr: render.ErrOutsideRoot},
		{file: "../../../../etc/passwd", wantErr: render.ErrOutsideRoot},
		{file: "/etc/passwd", wantErr: render.ErrOutsideRoot},
		{file: "../values/leak.yaml", wantErr: render.ErrOutsideRoot},
		{file: "../values/leak-abs.yaml", wantErr: render.ErrOutsideRoot},
		{file: "../values/leak.yaml", ignore: true, wantErr: render.ErrOutsideRoot},
		{file: "missing.yaml", wantErr: fs.ErrNotExist},
		{file: "missing.yaml", ignore: true},
		{file: "../values/inside.yaml"},
		{file: "../values/shared.yaml"},
		// Another source's value file comes only through FetchedFiles.
		{file: "$values/apps/app/values-prod.yaml", wantErr: fs.ErrNotExist},
		{file: "$values/apps/app/values-prod.yaml", ignore: true},
		{file: "https://example.com/values.yaml", wantMsg: "did not fetch"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			h := &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{tc.file}, IgnoreMissingValueFiles: tc.ignore}
			_, err := Render(t.Context(), appRequest(root, h), ChartSource{})
			if checkErr(t, err, tc.wantErr, tc.wantMsg) && err != nil {
				t.Errorf("err = %v, want none", err)
			}
			if err != nil && strings.Contains(err.Error(), filepath.Dir(root)) {
				t.Errorf("error shows a host path: %v", err)
			}
		})
	}
}

// Value files of another source ($ref/path) come from the request's
// FetchedFiles, in their place among the chart's own; one that is missing
// fails the render unless missing value files are ignored.
func TestRenderRefValueFiles(t *testing.T) {
	root := testRepo(t)
	h := &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"values-prod.yaml", "$values/envs/prod.yaml", "$ARGOCD_APP_NAME/../values-extra.yaml"}}
	req := appRequest(root, h)
	req.FetchedFiles = map[string][]byte{"$values/envs/prod.yaml": []byte("message: from-values-repo\nimage:\n  tag: \"9.9\"\n")}
	objs, err := Render(t.Context(), req, ChartSource{})
	if err != nil {
		t.Fatal(err)
	}
	// $ARGOCD_APP_NAME is the build environment, not a ref: it expands
	// to the app's name, a directory that is not there, and ".." leaves
	// it again.
	data := configData(t, objs, "guestbook-app")
	if data["replicas"] != "3" || data["message"] != "extra" || data["tag"] != "2.0" {
		t.Errorf("data = %v, want replicas 3 from values-prod.yaml, message and tag from values-extra.yaml, the last file", data)
	}

	h.ValueFiles = []string{"values-prod.yaml", "$values/envs/prod.yaml"}
	objs, err = Render(t.Context(), req, ChartSource{})
	if err != nil {
		t.Fatal(err)
	}
	if data := configData(t, objs, "guestbook-app"); data["replicas"] != "3" || data["message"] != "from-values-repo" || data["tag"] != "9.9" {
		t.Errorf("data = %v, want replicas 3 and the values repository's message and tag", data)
	}

	h.ValueFiles = []string{"$values/envs/missing.yaml"}
	if _, err := Render(t.Context(), req, ChartSource{}); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "$values/envs/missing.yaml") {
		t.Errorf("missing ref file: err = %v, want one naming the file", err)
	}
	h.IgnoreMissingValueFiles = true
	if _, err := Render(t.Context(), req, ChartSource{}); err != nil {
		t.Errorf("missing ref file, ignored: %v", err)
	}
}

// ReadRefFile reads inside the ref's checkout only.
func TestReadRefFile(t *testing.T) {
	root := testRepo(t)
	writeFile(t, filepath.Join(root, "envs", "prod.yaml"), "message: prod\n")
	writeFile(t, filepath.Join(root, "envs", "guestbook.yaml"), "message: guestbook\n")
	symlink(t, "../../outside.txt", filepath.Join(root, "envs", "leak.yaml"))
	symlink(t, "prod.yaml", filepath.Join(root, "envs", "alias.yaml"))
	if err := os.Mkdir(filepath.Join(root, "envs", "dir.yaml"), 0o750); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(root, "envs", "big.yaml")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxValuesFileSize+1); err != nil {
		t.Fatal(err)
	}
	env := render.BuildEnv{"ARGOCD_APP_NAME": "guestbook"}
	for _, tc := range []struct {
		name    string
		want    string
		wantErr error
		wantMsg string
	}{
		{name: "$values/envs/prod.yaml", want: "message: prod\n"},
		{name: "$values/./envs/../envs/alias.yaml", want: "message: prod\n"},
		{name: "$values/envs/$ARGOCD_APP_NAME.yaml", want: "message: guestbook\n"},
		{name: "$values/envs/missing.yaml", wantErr: fs.ErrNotExist},
		{name: "$values/../outside.txt", wantErr: render.ErrOutsideRoot},
		{name: "$values/envs/../../outside.txt", wantErr: render.ErrOutsideRoot},
		{name: "$values//etc/passwd", wantErr: render.ErrOutsideRoot},
		{name: "$values/envs/leak.yaml", wantErr: render.ErrOutsideRoot},
		{name: "$values/envs/big.yaml", wantErr: render.ErrTooLarge},
		{name: "$values/envs/dir.yaml", wantMsg: "not a regular file"},
		{name: "$values/https://example.com/v.yaml", wantMsg: "not a URL"},
		{name: "envs/prod.yaml", wantMsg: "does not name another source"},
		{name: "$ARGOCD_APP_NAME/prod.yaml", wantMsg: "does not name another source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := ReadRefFile(root, tc.name, env)
			switch {
			case !checkErr(t, err, tc.wantErr, tc.wantMsg):
			case err != nil:
				t.Errorf("err = %v", err)
			case string(data) != tc.want:
				t.Errorf("read %q, want %q", data, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), filepath.Dir(root)) {
				t.Errorf("error shows a host path: %v", err)
			}
		})
	}
}

func TestRefValueFiles(t *testing.T) {
	src := v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{
		"values.yaml", "$values/a.yaml", "$ARGOCD_APP_NAME/b.yaml", "${ARGOCD_APP_NAME}/c.yaml", "$values/d.yaml", "$other/e.yaml", "$nopath",
	}}}
	got := RefValueFiles(src)
	want := map[string][]string{"$values": {"$values/a.yaml", "$values/d.yaml"}, "$other": {"$other/e.yaml"}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("RefValueFiles (-got +want):\n%s", diff)
	}
	if got := RefValueFiles(v1alpha1.ApplicationSource{}); got != nil {
		t.Errorf("no Helm options: %v", got)
	}
}

func TestRenderChartSymlinks(t *testing.T) {
	t.Run("inside the repository", func(t *testing.T) {
		root := testRepo(t)
		writeFile(t, filepath.Join(root, "shared", "extra.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n")
		symlink(t, "../../../shared/extra.yaml", filepath.Join(root, "apps", "app", "templates", "shared.yaml"))
		objs, err := Render(t.Context(), appRequest(root, nil), ChartSource{})
		if err != nil {
			t.Fatal(err)
		}
		find(t, objs, "ConfigMap", "shared")
	})
	t.Run("template leaves the repository", func(t *testing.T) {
		root := testRepo(t)
		symlink(t, "../../../../outside.txt", filepath.Join(root, "apps", "app", "templates", "leak.yaml"))
		_, err := Render(t.Context(), appRequest(root, nil), ChartSource{})
		if !errors.Is(err, render.ErrOutsideRoot) {
			t.Errorf("err = %v, want ErrOutsideRoot", err)
		}
	})
	t.Run("file dependency leaves the repository", func(t *testing.T) {
		root := testRepo(t)
		writeFile(t, filepath.Join(root, "apps", "app", "Chart.yaml"),
			"apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: common\n  version: 0.1.0\n  repository: file://../../../common\n")
		_, err := Render(t.Context(), appRequest(root, nil), ChartSource{})
		if !errors.Is(err, render.ErrOutsideRoot) {
			t.Errorf("err = %v, want ErrOutsideRoot", err)
		}
	})
	t.Run("app path leaves the repository", func(t *testing.T) {
		root := testRepo(t)
		req := appRequest(root, nil)
		req.Path = "../repo/apps/app"
		_, err := Render(t.Context(), req, ChartSource{})
		if !errors.Is(err, render.ErrOutsideRoot) {
			t.Errorf("err = %v, want ErrOutsideRoot", err)
		}
	})
}

func TestRenderErrors(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(t *testing.T, root string)
		helm    *v1alpha1.ApplicationSourceHelm
		wantMsg string
	}{
		{
			name:    "helm v2",
			helm:    &v1alpha1.ApplicationSourceHelm{Version: "v2"},
			wantMsg: "only v3",
		},
		{
			name: "template fails",
			mutate: func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, "apps", "app", "templates", "bad.yaml"), "{{ fail \"chart refuses\" }}\n")
			},
			wantMsg: "chart refuses",
		},
		{
			name: "endless include recursion",
			mutate: func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, "apps", "app", "templates", "loop.yaml"), "{{ define \"loop\" }}{{ include \"loop\" . }}{{ end }}{{ include \"loop\" . }}\n")
			},
			wantMsg: "nested reference name",
		},
		{
			name: "dependency without repository",
			mutate: func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, "apps", "app", "Chart.yaml"),
					"apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: nowhere\n  version: 1.0.0\n")
			},
			wantMsg: `dependency "nowhere"`,
		},
		{
			name: "remote dependency without cache",
			mutate: func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, "apps", "app", "Chart.yaml"),
					"apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: redis\n  version: 1.0.0\n  repository: https://charts.example.com\n")
			},
			wantMsg: "no dependency cache directory",
		},
		{
			name:    "invalid kube version",
			helm:    &v1alpha1.ApplicationSourceHelm{KubeVersion: "not-a-version"},
			wantMsg: "kube version",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := testRepo(t)
			if tc.mutate != nil {
				tc.mutate(t, root)
			}
			_, err := Render(t.Context(), appRequest(root, tc.helm), ChartSource{})
			if err == nil || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("err = %v, want one containing %q", err, tc.wantMsg)
			}
		})
	}
}

func TestRenderOutputLimits(t *testing.T) {
	root := testRepo(t)
	req := appRequest(root, nil)
	req.Limits = render.Limits{MaxCombinedSize: 512}
	_, err := Render(t.Context(), req, ChartSource{})
	if !errors.Is(err, render.ErrTooLarge) {
		t.Errorf("err = %v, want ErrTooLarge", err)
	}
}

func TestRenderConcurrently(t *testing.T) {
	root := testRepo(t)
	errs := make(chan error, 4)
	for i := range 4 {
		go func() {
			h := &v1alpha1.ApplicationSourceHelm{ReleaseName: fmt.Sprintf("r%d", i)}
			objs, err := Render(t.Context(), appRequest(root, h), ChartSource{})
			if err == nil && len(objs) != 6 {
				err = fmt.Errorf("release r%d: %d objects", i, len(objs))
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestRenderCanceled(t *testing.T) {
	root := testRepo(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := Render(ctx, appRequest(root, nil), ChartSource{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestRenderPulledChartDir(t *testing.T) {
	// A chart outside any checkout (as Pull leaves it) is its own tree.
	root := testRepo(t)
	dir := filepath.Join(root, "libs", "common")
	writeFile(t, filepath.Join(dir, "values-alt.yaml"), "greeting: alt\n")
	req := render.Request{
		Source:    v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"values-alt.yaml"}}},
		AppName:   "lib",
		Namespace: "ns",
	}
	objs, err := Render(t.Context(), req, ChartSource{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := configData(t, objs, "lib-common")["greeting"]; got != "alt" {
		t.Errorf("greeting = %q, want alt", got)
	}
	req.Source.Helm.ValueFiles = []string{"../../apps/app/values.yaml"}
	if _, err := Render(t.Context(), req, ChartSource{Dir: dir}); !errors.Is(err, render.ErrOutsideRoot) {
		t.Errorf("value file outside the pulled chart: err = %v, want ErrOutsideRoot", err)
	}
}
