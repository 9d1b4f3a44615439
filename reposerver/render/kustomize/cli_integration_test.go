//go:build integration

package kustomize

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// kustomizeCLI finds the kustomize binary that `make test-deps` builds
// from the same kustomize/api version (bin/ is on make test's PATH), or
// skips: these tests compare Render with what Argo CD does
// (`kustomize edit` + `kustomize build`) and need the real CLI.
func kustomizeCLI(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("kustomize")
	if err != nil {
		tb.Skip("kustomize CLI not on PATH (make test-deps builds bin/kustomize)")
	}
	return p
}

// cliBuild does what Argo CD does: run the kustomize edit commands in a copy
// of the app directory, then kustomize build.
func cliBuild(tb testing.TB, cli, dir string, edits [][]string) []byte {
	tb.Helper()
	for _, e := range edits {
		cmd := exec.CommandContext(tb.Context(), cli, append([]string{"edit"}, e...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("kustomize edit %v: %v: %s", e, err, out)
		}
	}
	cmd := exec.CommandContext(tb.Context(), cli, "build", ".")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("kustomize build: %v", err)
	}
	return out
}

var cliCases = []struct {
	name  string
	path  string
	opts  *v1alpha1.ApplicationSourceKustomize
	edits [][]string // Argo CD's kustomize edit commands for opts
}{
	{name: "no overrides", path: "overlays/prod"},
	{
		name:  "prefix suffix namespace",
		path:  "overlays/prod",
		opts:  &v1alpha1.ApplicationSourceKustomize{NamePrefix: "stage-", NameSuffix: "-x", Namespace: "ns2"},
		edits: [][]string{{"set", "nameprefix", "--", "stage-"}, {"set", "namesuffix", "--", "-x"}, {"set", "namespace", "--", "ns2"}},
	},
	{
		name:  "images",
		path:  "base",
		opts:  &v1alpha1.ApplicationSourceKustomize{Images: []string{"nginx=registry.example.com/nginx:1.27", "redis:7.2", "busybox@" + digest, "alpine=quay.io/alpine"}},
		edits: [][]string{{"set", "image", "nginx=registry.example.com/nginx:1.27", "redis:7.2", "busybox@" + digest, "alpine=quay.io/alpine"}},
	},
	{
		name:  "replicas and labels without selector",
		path:  "overlays/prod",
		opts:  &v1alpha1.ApplicationSourceKustomize{Replicas: []v1alpha1.KustomizeReplica{{Name: "web", Count: intstr.FromInt32(5)}}, CommonLabels: map[string]string{"team": "a"}, LabelWithoutSelector: true},
		edits: [][]string{{"set", "replicas", "web=5"}, {"add", "label", "--without-selector", "team:a"}},
	},
	{
		name: "forced labels and annotations, components",
		path: "overlays/prod",
		opts: &v1alpha1.ApplicationSourceKustomize{
			CommonLabels: map[string]string{"env": "x", "team": "a"}, ForceCommonLabels: true,
			CommonAnnotations: map[string]string{"owner": "b"}, ForceCommonAnnotations: true,
			Components: []string{"../../components/debug"},
		},
		edits: [][]string{{"add", "label", "--force", "env:x", "team:a"}, {"add", "annotation", "--force", "owner:b"}, {"add", "component", "../../components/debug"}},
	},
}

func TestRenderMatchesCLI(t *testing.T) {
	cli := kustomizeCLI(t)
	root := checkout(t)
	for _, c := range cliCases {
		t.Run(c.name, func(t *testing.T) {
			scratch := t.TempDir()
			reposervertest.CopyTree(t, filepath.Join("testdata", "repo"), scratch)
			want, err := render.Decode("kustomize CLI", cliBuild(t, cli, filepath.Join(scratch, c.path), c.edits), render.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := renderApp(t, root, c.path, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

// BenchmarkCLI renders the same app as BenchmarkRender the way Argo CD does,
// by exec'ing kustomize edit and kustomize build on a fresh copy each time.
func BenchmarkCLI(b *testing.B) {
	cli := kustomizeCLI(b)
	edits := [][]string{
		{"set", "nameprefix", "--", "stage-"},
		{"set", "image", "nginx=registry.example.com/nginx:1.27"},
		{"set", "replicas", "web=3"},
		{"add", "label", "team:a"},
		{"add", "component", "../../components/debug"},
	}
	for b.Loop() {
		scratch := b.TempDir()
		reposervertest.CopyTree(b, filepath.Join("testdata", "repo"), scratch)
		cliBuild(b, cli, filepath.Join(scratch, "overlays/prod"), edits)
	}
}
