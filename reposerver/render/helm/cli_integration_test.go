//go:build integration

package helm

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
)

// helmCLI finds the helm binary that `make test-deps` builds from the same
// helm module version (bin/ is on make test's PATH), or skips.
func helmCLI(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("helm")
	if err != nil {
		tb.Skip("helm CLI not on PATH (make test-deps builds bin/helm)")
	}
	return p
}

func helmTemplate(tb testing.TB, helm, root string) []byte {
	tb.Helper()
	cmd := exec.Command(helm, "template", "bench", filepath.Join(root, "chart"), "--namespace", "bench", "--set", "image.tag=1.28")
	cmd.Env = []string{"HOME=" + tb.TempDir(), "PATH=/usr/bin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("helm template: %v", err)
	}
	return out
}

var benchReq = func(root string) render.Request {
	return render.Request{
		RepoRoot: root, Path: "chart", AppName: "bench", Namespace: "bench",
		Source: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{
			Parameters: []v1alpha1.HelmParameter{{Name: "image.tag", Value: "1.28"}},
		}},
	}
}

// Render gives the same objects, in the same order, as `helm template`.
func TestRenderMatchesHelmTemplate(t *testing.T) {
	helm := helmCLI(t)
	root := writeBenchChart(t)
	want, err := render.Decode("helm template", helmTemplate(t, helm, root), render.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Render(t.Context(), benchReq(root), ChartSource{})
	if err != nil {
		t.Fatal(err)
	}
	objects := func(us []*unstructured.Unstructured) []map[string]any {
		out := make([]map[string]any, len(us))
		for i, u := range us {
			out[i] = u.Object
		}
		return out
	}
	if diff := cmp.Diff(objects(got), objects(want)); diff != "" {
		t.Errorf("Render vs helm template (-got +want):\n%s", diff)
	}
}

// BenchmarkCLI runs `helm template` on the BenchmarkRender chart, the way
// a repository server that execs helm renders it; compare with
// BenchmarkRender in the same run.
func BenchmarkCLI(b *testing.B) {
	helm := helmCLI(b)
	root := writeBenchChart(b)
	for b.Loop() {
		helmTemplate(b, helm, root)
	}
}
