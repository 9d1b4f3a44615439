//go:build integration

package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt" //nolint:gosec // G504: Go 1.26 is not affected; serves git http-backend on loopback
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/cache"
)

// guestbook is a Deployment of two replicas; KWOK makes its Pods Ready.
const guestbook = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: guestbook
spec:
  replicas: 2
  selector:
    matchLabels:
      app: guestbook
  template:
    metadata:
      labels:
        app: guestbook
    spec:
      containers:
      - name: web
        image: registry.example.com/guestbook:1.0
`

// guestbookSecret holds a value the page must never show.
const guestbookSecret = `apiVersion: v1
kind: Secret
metadata:
  name: guestbook-db
stringData:
  password: hunter2
`

// createDefaultProject lets applications deploy anything anywhere.
func createDefaultProject(t testing.TB, kube client.Client, ns string) {
	t.Helper()
	project := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:  []string{"*"},
			Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		},
	}
	// The server may have created it already.
	if err := kube.Create(t.Context(), project); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// createApp creates an application of path in repo, deployed to ns,
// without automated sync.
func createApp(t testing.TB, kube client.Client, ns, name, repo, path string) {
	t.Helper()
	if err := kube.Create(t.Context(), gitApp(ns, name, "default", repo, path)); err != nil {
		t.Fatal(err)
	}
}

// waitForFile waits until path exists or ctx ends.
func waitForFile(ctx context.Context, path string) error {
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestAppPage drives the application page in Chromium against a server
// running its controller and a real git server (see web/e2e/app-page.mjs):
// from the list to the page, the app's Deployment and Secret as Missing
// nodes and rows before its first sync, a sync that turns them live, the
// Deployment → ReplicaSet → Pod graph and table; then this test scales
// the Deployment to 4 in the cluster behind the controller's back, and the
// page turns OutOfSync live with replicas 4 against 2 in the resource
// panel's diff, and the four Pods as one group node that opens on a click.
// A Secret's value shows masked. Screenshots: list, missing, tree, diff.
func TestAppPage(t *testing.T) {
	if skipReason != "" {
		t.Skip("browser test skipped: " + skipReason)
	}
	base, ns := startServer(t, true)
	repo := serveRepo(t, map[string]string{"guestbook/deployment.yaml": guestbook, "guestbook/secret.yaml": guestbookSecret})
	kube := newKube(t)
	createDefaultProject(t, kube, ns)
	createApp(t, kube, ns, "guestbook", repo, "guestbook")

	signals := t.TempDir()
	t.Setenv("SIGNALS", signals)
	edited := make(chan error, 1)
	go func() {
		edited <- func() error {
			if err := waitForFile(t.Context(), filepath.Join(signals, "tree-shown")); err != nil {
				return err
			}
			patch := []byte(`{"spec":{"replicas":4}}`)
			if _, err := cluster.Client.AppsV1().Deployments(ns).Patch(context.WithoutCancel(t.Context()), "guestbook", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(signals, "edited"), nil, 0o600)
		}()
	}()
	runScript(t, "e2e/app-page.mjs", base, ns)
	if err := <-edited; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("edit the Deployment: %v", err)
	}
}

// TestAppPageMultiSource opens a multi-source application (a directory
// and a ref source of one repository, each at its own commit) and checks
// that the header lists both sources, each with the commit it was
// compared at (see web/e2e/app-sources.mjs).
func TestAppPageMultiSource(t *testing.T) {
	if skipReason != "" {
		t.Skip("browser test skipped: " + skipReason)
	}
	base, ns := startServer(t, true)
	repo, shas := serveRepoCommits(t, []map[string]string{
		{"app/cm.yaml": configMap("multi", "one", "")},
		{"app/cm.yaml": configMap("multi", "two", ""), "values/prod.yaml": "greeting: two\n"},
	})
	kube := newKube(t)
	createDefaultProject(t, kube, ns)
	app := gitApp(ns, "multi", "default", repo, "")
	app.Spec.Source = nil
	app.Spec.Sources = []v1alpha1.ApplicationSource{
		{RepoURL: repo, Path: "app", TargetRevision: shas[0]},
		{RepoURL: repo, TargetRevision: "main", Ref: "values"},
	}
	if err := kube.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	runScript(t, "e2e/app-sources.mjs", base, ns, "APP=multi", "REVISIONS="+shas[0]+","+shas[1])
}

// BenchmarkTreeScale measures the application page with a resource tree of
// GRAPHCD_CONSOLE_TREE ConfigMaps (default 2,000) through
// web/e2e/app-scale.mjs: ms from navigation until the graph shows its
// first laid-out nodes, ms for "show more" to lay out the next batch, and
// the median, p95 and worst frame time while panning for about 3 s. The
// ConfigMaps are in Git and created in the cluster by the benchmark (a
// sync of thousands of objects would measure the sync instead).
func BenchmarkTreeScale(b *testing.B) {
	if skipReason != "" {
		b.Skip("browser benchmark skipped: " + skipReason)
	}
	n := 2000
	if v := os.Getenv("GRAPHCD_CONSOLE_TREE"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatalf("GRAPHCD_CONSOLE_TREE=%q: %v", v, err)
		}
	}
	base, ns := startServer(b, true)
	var docs strings.Builder
	for i := range n {
		fmt.Fprintf(&docs, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%05d\ndata:\n  index: %q\n", i, strconv.Itoa(i))
	}
	repo := serveRepo(b, map[string]string{"scale/configmaps.yaml": docs.String()})
	kube := newKube(b)
	createDefaultProject(b, kube, ns)
	createApp(b, kube, ns, "scale", repo, "scale")
	createConfigMaps(b, ns, "scale", n)
	b.Setenv("APP", "scale")
	b.Setenv("TREE_SIZE", strconv.Itoa(n))

	var tree, more, median, p95, worst float64
	for b.Loop() {
		out := runScript(b, "e2e/app-scale.mjs", base, ns)
		var m struct{ TreeMs, MoreMs, PanMedianMs, PanP95Ms, PanMaxMs float64 }
		var figures []byte
		for line := range bytes.Lines(out) {
			if bytes.HasPrefix(line, []byte("{")) {
				figures = line
			}
		}
		if err := json.Unmarshal(figures, &m); err != nil {
			b.Fatalf("figures from the script: %v\n%s", err, out)
		}
		tree, more, median, p95, worst = tree+m.TreeMs, more+m.MoreMs, median+m.PanMedianMs, p95+m.PanP95Ms, worst+m.PanMaxMs
	}
	runs := float64(b.N)
	b.ReportMetric(tree/runs, "ms-tree-rendered")
	b.ReportMetric(more/runs, "ms-show-more")
	b.ReportMetric(median/runs, "ms-frame-median")
	b.ReportMetric(p95/runs, "ms-frame-p95")
	b.ReportMetric(worst/runs, "ms-frame-max")
}

// createConfigMaps creates the n ConfigMaps cm-00000 ... of app in ns, as
// a sync would have (with the tracking annotation), eight at a time.
func createConfigMaps(tb testing.TB, ns, app string, n int) {
	tb.Helper()
	inParallel(tb, "create config maps", n, func(i int) error {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i), Namespace: ns},
			Data:       map[string]string{"index": strconv.Itoa(i)},
		}
		cache.Tracking{}.Mark(cm, schema.GroupKind{Kind: "ConfigMap"}, app, ns)
		_, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{})
		return err
	})
}
