package directory_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
	"github.com/graphcd/graphcd/reposerver/render/directory"
)

// repo copies testdata/repo into a temporary directory (so tests can add
// links, hidden directories and large files) and returns its path and the
// directory that holds it.
func repo(t testing.TB) (root, base string) {
	t.Helper()
	base = t.TempDir()
	root = filepath.Join(base, "repo")
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", "repo"))); err != nil {
		t.Fatal(err)
	}
	return root, base
}

func write(t testing.TB, file, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// names lists objects as kind/name, in order.
func names(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

func TestRender(t *testing.T) {
	root, _ := repo(t)
	// Git cannot commit a .git directory: make one here.
	write(t, filepath.Join(root, "apps", "plain", ".git", "config.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: in-dot-git}\n")

	plainTop := []string{
		"Deployment/json-deploy",                       // deploy.json
		"ServiceAccount/list-sa", "Secret/list-secret", // list.yml
		"ConfigMap/multi-a", "Service/multi-b", // multi.yaml
	}
	tests := []struct {
		name string
		path string
		dir  *v1alpha1.ApplicationSourceDirectory
		want []string
	}{
		{name: "top level only", path: "apps/plain", want: plainTop},
		{
			name: "recurse",
			path: "apps/plain",
			dir:  &v1alpha1.ApplicationSourceDirectory{Recurse: true},
			want: append(append([]string{}, plainTop...), "ConfigMap/nested-deep", "ConfigMap/nested-inner"),
		},
		{
			name: "recurse from the repository root with a path of ./",
			path: "./apps/plain/nested",
			dir:  &v1alpha1.ApplicationSourceDirectory{Recurse: true},
			want: []string{"ConfigMap/nested-deep", "ConfigMap/nested-inner"},
		},
		{
			name: "include yaml, exclude a file and a directory (Argo CD's example)",
			path: "apps/filter",
			dir:  &v1alpha1.ApplicationSourceDirectory{Recurse: true, Include: "*.yaml", Exclude: "{config.json,env-usw2/*}"},
			want: []string{"ConfigMap/deployment-yaml", "ConfigMap/env-use2-configmap-yaml"},
		},
		{
			name: "include a brace list",
			path: "apps/filter",
			dir:  &v1alpha1.ApplicationSourceDirectory{Recurse: true, Include: "{*.yml,*.yaml}"},
			want: []string{"ConfigMap/deployment-yaml", "ConfigMap/env-use2-configmap-yaml", "ConfigMap/env-usw2-configmap-yaml", "ConfigMap/extra-yml"},
		},
		{
			name: "include one directory",
			path: "apps/filter",
			dir:  &v1alpha1.ApplicationSourceDirectory{Recurse: true, Include: "env-use2/*"},
			want: []string{"ConfigMap/env-use2-configmap-yaml"},
		},
		{
			name: "include without recurse sees no subdirectory",
			path: "apps/filter",
			dir:  &v1alpha1.ApplicationSourceDirectory{Include: "env-use2/*"},
			want: []string{},
		},
		{
			name: "character class and ?",
			path: "apps/filter",
			dir:  &v1alpha1.ApplicationSourceDirectory{Recurse: true, Include: "[de]*.y?ml", Exclude: "env-us?2/*"},
			want: []string{"ConfigMap/deployment-yaml"},
		},
		{
			name: "exclude wins over include",
			path: "apps/filter",
			dir:  &v1alpha1.ApplicationSourceDirectory{Recurse: true, Include: "*.yaml", Exclude: "*"},
			want: []string{},
		},
		{
			name: "jsonnet with extVars, TLAs and libs",
			path: "apps/jsonnet",
			dir: &v1alpha1.ApplicationSourceDirectory{Jsonnet: v1alpha1.ApplicationSourceJsonnet{
				ExtVars: []v1alpha1.JsonnetVar{{Name: "env", Value: "prod"}, {Name: "app", Value: "$ARGOCD_APP_NAME"}},
				TLAs:    []v1alpha1.JsonnetVar{{Name: "replicas", Value: "3", Code: true}, {Name: "tier", Value: "frontend"}},
				Libs:    []string{"libs/jsonnet"},
			}},
			want: []string{
				"Secret/jsonnet-list-a", "Secret/jsonnet-list-b", // list.jsonnet
				"ConfigMap/settings-prod", "Deployment/web", // main.jsonnet
				"Service/jsonnet-object", // object.jsonnet
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := render.Request{
				RepoRoot: root,
				Path:     tt.path,
				Source:   v1alpha1.ApplicationSource{Directory: tt.dir},
				AppName:  "guestbook",
			}
			objs, err := directory.Render(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(names(objs), tt.want); diff != "" {
				t.Errorf("objects (-got +want):\n%s", diff)
			}
		})
	}
}

func TestRenderJsonnetValues(t *testing.T) {
	root, _ := repo(t)
	req := render.Request{
		RepoRoot: root,
		Path:     "apps/jsonnet",
		AppName:  "guestbook",
		Source: v1alpha1.ApplicationSource{Directory: &v1alpha1.ApplicationSourceDirectory{
			Include: "main.jsonnet",
			Jsonnet: v1alpha1.ApplicationSourceJsonnet{
				ExtVars: []v1alpha1.JsonnetVar{{Name: "env", Value: "prod"}, {Name: "app", Value: "${ARGOCD_APP_NAME}-$$-$UNKNOWN"}},
				TLAs:    []v1alpha1.JsonnetVar{{Name: "replicas", Value: "1 + 2", Code: true}, {Name: "tier", Value: "frontend"}},
				Libs:    []string{"/libs/jsonnet"},
			},
		}},
	}
	objs, err := directory.Render(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	got := []any{objs[0].Object["data"], objs[1].Object["spec"], objs[1].GetLabels()}
	want := []any{
		map[string]any{"greeting": "hello", "app": "guestbook-$-", "tier": "frontend"},
		map[string]any{"replicas": int64(3)},
		map[string]string{"app.kubernetes.io/name": "web"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("values (-got +want):\n%s", diff)
	}
}

func TestRenderErrors(t *testing.T) {
	root, base := repo(t)
	write(t, filepath.Join(base, "outside.yaml"), "apiVersion: v1\nkind: Secret\nmetadata: {name: stolen}\n")
	write(t, filepath.Join(base, "outside", "x.yaml"), "apiVersion: v1\nkind: Secret\nmetadata: {name: stolen}\n")
	write(t, filepath.Join(base, "outside.libsonnet"), "{}")
	symlink(t, filepath.Join(base, "outside.yaml"), filepath.Join(root, "apps", "link-file", "stolen.yaml"))
	symlink(t, "../../../outside", filepath.Join(root, "apps", "link-dir", "sub"))
	symlink(t, "../../../outside.libsonnet", filepath.Join(root, "apps", "link-import", "lib.libsonnet"))
	write(t, filepath.Join(root, "apps", "link-import", "main.jsonnet"), "import 'lib.libsonnet'\n")
	symlink(t, filepath.Join(base, "outside"), filepath.Join(root, "apps", "link-app"))

	tests := []struct {
		name     string
		path     string
		dir      *v1alpha1.ApplicationSourceDirectory
		contains []string
		is       error
	}{
		{
			name:     "invalid YAML names the file",
			path:     "apps/bad",
			contains: []string{"apps/bad/invalid.yaml", "document 1"},
		},
		{
			name:     "invalid JSON names the file",
			path:     "apps/badjson",
			contains: []string{"apps/badjson/broken.json"},
		},
		{
			name:     "a JSON file that is not a manifest",
			path:     "apps/filter",
			contains: []string{"apps/filter/config.json", "missing apiVersion"},
		},
		{
			name:     "symlinked file out of the repository",
			path:     "apps/link-file",
			contains: []string{"apps/link-file/stolen.yaml"},
			is:       render.ErrOutsideRoot,
		},
		{
			name:     "symlinked directory out of the repository",
			path:     "apps/link-dir",
			dir:      &v1alpha1.ApplicationSourceDirectory{Recurse: true},
			contains: []string{"apps/link-dir/sub"},
			is:       render.ErrOutsideRoot,
		},
		{
			name: "symlinked app directory out of the repository",
			path: "apps/link-app",
			is:   render.ErrOutsideRoot,
		},
		{
			name: "app path climbing out",
			path: "../outside",
			is:   render.ErrOutsideRoot,
		},
		{
			name:     "jsonnet import of ../ out of the repository",
			path:     "apps/escape-rel",
			contains: []string{"apps/escape-rel/main.jsonnet", "../../../outside.libsonnet"},
			is:       render.ErrOutsideRoot,
		},
		{
			name:     "jsonnet importstr of /etc/passwd",
			path:     "apps/escape-abs",
			contains: []string{"apps/escape-abs/main.jsonnet", "/etc/passwd", "absolute"},
			is:       render.ErrOutsideRoot,
		},
		{
			name:     "jsonnet import through a symlink out of the repository",
			path:     "apps/link-import",
			contains: []string{"apps/link-import/main.jsonnet", "lib.libsonnet"},
			is:       render.ErrOutsideRoot,
		},
		{
			name: "jsonnet library path out of the repository",
			path: "apps/jsonnet",
			dir: &v1alpha1.ApplicationSourceDirectory{Jsonnet: v1alpha1.ApplicationSourceJsonnet{
				Libs: []string{"../outside"},
			}},
			contains: []string{"directory.jsonnet.libs", "../outside"},
			is:       render.ErrOutsideRoot,
		},
		{
			name:     "jsonnet error",
			path:     "apps/jsonnet",
			dir:      &v1alpha1.ApplicationSourceDirectory{Include: "main.jsonnet"},
			contains: []string{"apps/jsonnet/main.jsonnet:", "Undefined external variable"},
		},
		{
			name:     "alias bomb",
			path:     "apps/bomb",
			contains: []string{"apps/bomb/bomb.yaml", "document 1"},
			is:       render.ErrTooLarge,
		},
		{
			name:     "invalid include",
			path:     "apps/plain",
			dir:      &v1alpha1.ApplicationSourceDirectory{Include: "{a,b"},
			contains: []string{"directory.include"},
		},
		{
			name:     "missing app path",
			path:     "apps/nope",
			contains: []string{"apps/nope"},
			is:       os.ErrNotExist,
		},
		{
			name:     "app path is a file",
			path:     "apps/plain/multi.yaml",
			contains: []string{"not a directory"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := render.Request{RepoRoot: root, Path: tt.path, Source: v1alpha1.ApplicationSource{Directory: tt.dir}}
			objs, err := directory.Render(t.Context(), req)
			if err == nil {
				t.Fatalf("got %v, want an error", names(objs))
			}
			for _, s := range tt.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q does not wrap %v", err, tt.is)
			}
			if strings.Contains(err.Error(), base) {
				t.Errorf("error %q shows an absolute path", err)
			}
		})
	}
}

func TestRenderFollowsSymlinksInsideTheRepository(t *testing.T) {
	root, _ := repo(t)
	symlink(t, "../plain/multi.yaml", filepath.Join(root, "apps", "links", "multi.yaml"))
	symlink(t, "../plain/nested", filepath.Join(root, "apps", "links", "nested")) // not descended into
	symlink(t, "missing.yaml", filepath.Join(root, "apps", "links", "dangling.yaml"))
	objs, err := directory.Render(t.Context(), render.Request{
		RepoRoot: root,
		Path:     "apps/links",
		Source:   v1alpha1.ApplicationSource{Directory: &v1alpha1.ApplicationSourceDirectory{Recurse: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(names(objs), []string{"ConfigMap/multi-a", "Service/multi-b"}); diff != "" {
		t.Errorf("objects (-got +want):\n%s", diff)
	}
}

// writeBigManifest writes one YAML document of about size bytes without
// holding it in memory.
func writeBigManifest(t testing.TB, file string, size int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  blob: "); err != nil {
		t.Fatal(err)
	}
	line := []byte(strings.Repeat("x", 1<<20))
	for range size >> 20 {
		if _, err := f.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.WriteString("\n"); err != nil {
		t.Fatal(err)
	}
}

// TestRenderRefusesLargeFile checks that a 50 MB manifest fails with
// ErrTooLarge under the default limits and a small combined limit, and
// that the renderer does not read it whole to find out.
func TestRenderRefusesLargeFile(t *testing.T) {
	root, _ := repo(t)
	writeBigManifest(t, filepath.Join(root, "apps", "big", "big.yaml"), 50<<20)
	tests := []struct {
		name     string
		limits   render.Limits
		maxAlloc uint64
	}{
		{name: "one document over the 10 MiB default", maxAlloc: 24 << 20},
		{name: "file over the combined limit", limits: render.Limits{MaxCombinedSize: 8 << 20}, maxAlloc: 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := directory.Render(t.Context(), render.Request{RepoRoot: root, Path: "apps/big", Limits: tt.limits})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, render.ErrTooLarge) {
				t.Fatalf("got %v, want ErrTooLarge", err)
			}
			if !strings.Contains(err.Error(), "apps/big/big.yaml") {
				t.Errorf("error %q does not name the file", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > tt.maxAlloc {
				t.Errorf("allocated %d bytes, want at most %d", alloc, tt.maxAlloc)
			}
		})
	}
}

func TestRenderCombinedLimitAcrossFiles(t *testing.T) {
	root, _ := repo(t)
	for i := range 4 {
		write(t, filepath.Join(root, "apps", "many", fmt.Sprintf("cm%d.yaml", i)),
			fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm%d}\ndata: {pad: %s}\n", i, strings.Repeat("x", 300)))
	}
	req := render.Request{RepoRoot: root, Path: "apps/many", Limits: render.Limits{MaxCombinedSize: 1000}}
	_, err := directory.Render(t.Context(), req)
	if !errors.Is(err, render.ErrTooLarge) || !strings.Contains(err.Error(), "apps/many/cm2.yaml") {
		t.Errorf("got %v, want ErrTooLarge naming apps/many/cm2.yaml", err)
	}
}

func TestRenderStopsOnCancel(t *testing.T) {
	root, _ := repo(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The evaluation never ends by itself: only cancellation returns.
	timer := time.AfterFunc(100*time.Millisecond, cancel)
	defer timer.Stop()
	_, err := directory.Render(ctx, render.Request{RepoRoot: root, Path: "apps/slow"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}
