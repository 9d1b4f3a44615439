//go:build integration

package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/inproc"
	"github.com/graphcd/graphcd/reposerver/render"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// workerArg makes this test binary a render worker, as `graphcd
// render-worker` is in production.
const workerArg = "render-worker"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == workerArg {
		if err := inproc.ServeRenderWorker(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testWorkerMemory is the budget of the tests' workers: small, so that the
// bombs below cost the shared machine little.
const testWorkerMemory = 384 << 20

func newWorkerLocal(t *testing.T, timeout time.Duration) *inproc.Local {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	l, err := inproc.New(inproc.Options{
		WorkDir: t.TempDir(), AllowFileURLs: true, RenderTimeout: timeout,
		Worker: &inproc.WorkerOptions{Command: []string{exe, workerArg}, MemoryLimit: testWorkerMemory, Parallelism: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

// bombRepo commits the one-line chart of the report and its siblings: each
// builds a value far larger than any budget from a few bytes of input.
func bombRepo(t *testing.T) string {
	t.Helper()
	chart := "apiVersion: v2\nname: bomb\nversion: 0.1.0\n"
	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		"repeat/Chart.yaml":          chart,
		"repeat/templates/cm.yaml":   `{{- $s := repeat 100000000000 "x" }}` + "\n",
		"doubling/Chart.yaml":        chart,
		"doubling/templates/cm.yaml": `{{- $s := "xxxxxxxxxxxxxxxx" }}{{- range until 40 }}{{- $s = print $s $s }}{{- end }}` + "\n",
		"loop/Chart.yaml":            chart,
		"loop/templates/cm.yaml":     `{{- range until 100000 }}{{- range until 100000 }}{{- end }}{{- end }}` + "\n",
		"makearray/main.jsonnet":     "std.makeArray(1e9, function(i) i)\n",
		"strdouble/main.jsonnet":     `local d(s, n) = if n == 0 then s else d(s + s, n - 1); {apiVersion: "v1", kind: "ConfigMap", metadata: {name: "x"}, data: {a: d("x", 40)}}` + "\n",
		"good/Chart.yaml":            chart,
		"good/templates/cm.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  a: b\n",
	})
	return "file://" + dir
}

func bombRequest(url, path string) reposerver.ManifestRequest {
	return reposerver.ManifestRequest{
		Repo:    reposerver.Repository{URL: url},
		Source:  v1alpha1.ApplicationSource{RepoURL: url, Path: path, TargetRevision: "main"},
		AppName: "app", Namespace: "demo", NoCache: true,
	}
}

// The one-line chart `repeat 100000000000 "x"`, Helm string doubling,
// Jsonnet std.makeArray(1e9) and Jsonnet string doubling each fail their
// own render with the budget error, while a good chart rendered at the
// same time by the same repository server renders.
func TestWorkerRefusesRenderBombs(t *testing.T) {
	url := bombRepo(t)
	l := newWorkerLocal(t, time.Minute)
	for _, path := range []string{"repeat", "doubling", "makearray", "strdouble"} {
		t.Run(path, func(t *testing.T) {
			var wg sync.WaitGroup
			var bombErr error
			wg.Go(func() {
				_, bombErr = l.GenerateManifests(t.Context(), bombRequest(url, path))
			})
			res, err := l.GenerateManifests(t.Context(), bombRequest(url, "good"))
			wg.Wait()
			if err != nil || len(res.Manifests) != 1 || res.Manifests[0].GetName() != "app" {
				t.Errorf("good chart beside the bomb: %v, %v; want one ConfigMap named app", res, err)
			}
			if !errors.Is(bombErr, render.ErrBudgetExceeded) || !strings.Contains(fmt.Sprint(bombErr), "render exceeded its memory budget of 384 MiB") {
				t.Errorf("bomb: error %v; want the memory budget error", bombErr)
			}
		})
	}
}

// A template that only loops is stopped at the render deadline, with an
// error that says so.
func TestWorkerStopsAtDeadline(t *testing.T) {
	url := bombRepo(t)
	l := newWorkerLocal(t, 2*time.Second)
	_, err := l.GenerateManifests(t.Context(), bombRequest(url, "loop"))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(fmt.Sprint(err), "render exceeded its deadline of 2s") {
		t.Fatalf("error %v; want the deadline error", err)
	}
}

// Close (the server's SIGTERM) stops a render in progress long before its
// deadline, and later renders fail at once.
func TestWorkerStopsOnClose(t *testing.T) {
	url := bombRepo(t)
	l := newWorkerLocal(t, 10*time.Minute)
	time.AfterFunc(2*time.Second, l.Close)
	_, err := l.GenerateManifests(t.Context(), bombRequest(url, "loop"))
	if !errors.Is(err, context.Canceled) || !strings.Contains(fmt.Sprint(err), "render stopped") {
		t.Fatalf("error %v; want the render stopped by Close", err)
	}
	if _, err := l.GenerateManifests(t.Context(), bombRequest(url, "good")); !errors.Is(err, context.Canceled) {
		t.Errorf("render after Close: %v; want it refused", err)
	}
}

// A worker that dies without answering fails the render with the exit
// status, and none of what it logged (which may hold anything) reaches the
// error.
func TestWorkerCrashIsReported(t *testing.T) {
	url := bombRepo(t)
	l, err := inproc.New(inproc.Options{
		WorkDir: t.TempDir(), AllowFileURLs: true,
		Worker: &inproc.WorkerOptions{Command: []string{"/bin/sh", "-c", "echo 'level=INFO token=hunter2' >&2; exit 3"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	_, err = l.GenerateManifests(t.Context(), bombRequest(url, "good"))
	if err == nil || !strings.Contains(err.Error(), "render worker failed (exit status 3): no diagnostic") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error %v; want the exit status and no log line", err)
	}
}

// A directory of YAML and JSON files alone evaluates nothing: it renders
// in process, while a directory with Jsonnet still goes to a worker (here
// one that always fails).
func TestPlainDirectoryNeedsNoWorker(t *testing.T) {
	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		"plain/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n",
		"plain/sub/cm.json":   `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sub"}}`,
		"mixed/cm.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n",
		"mixed/sub/x.jsonnet": `{apiVersion: "v1", kind: "ConfigMap", metadata: {name: "x"}}`,
	})
	l, err := inproc.New(inproc.Options{
		WorkDir: t.TempDir(), AllowFileURLs: true,
		Worker: &inproc.WorkerOptions{Command: []string{"/bin/sh", "-c", "exit 3"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	url := "file://" + dir
	recurse := func(path string) reposerver.ManifestRequest {
		req := bombRequest(url, path)
		req.Source.Directory = &v1alpha1.ApplicationSourceDirectory{Recurse: true}
		return req
	}
	res, err := l.GenerateManifests(t.Context(), recurse("plain"))
	if err != nil || len(res.Manifests) != 2 {
		t.Fatalf("plain directory: %v, %v; want its two ConfigMaps rendered in process", res, err)
	}
	if _, err := l.GenerateManifests(t.Context(), recurse("mixed")); err == nil || !strings.Contains(err.Error(), "render worker failed (exit status 3)") {
		t.Fatalf("directory with Jsonnet: %v; want the worker's failure", err)
	}
	// Without recurse the Jsonnet file below is not read: no worker.
	if res, err := l.GenerateManifests(t.Context(), bombRequest(url, "mixed")); err != nil || len(res.Manifests) != 1 {
		t.Fatalf("directory with Jsonnet only below it, without recurse: %v, %v; want one ConfigMap in process", res, err)
	}
}

// A worker renders every tool exactly as the in-process renderer does.
func TestWorkerRendersLikeInProcess(t *testing.T) {
	url, _ := newRepo(t)
	inProcess, inWorker := newLocal(t), newWorkerLocal(t, time.Minute)
	for _, path := range []string{"apps/plain", "apps/chart", "apps/kust"} {
		req := bombRequest(url, path)
		want, err := inProcess.GenerateManifests(t.Context(), req)
		if err != nil {
			t.Fatalf("%s in process: %v", path, err)
		}
		got, err := inWorker.GenerateManifests(t.Context(), req)
		if err != nil {
			t.Fatalf("%s in a worker: %v", path, err)
		}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("%s (-worker +in process):\n%s", path, diff)
		}
	}
}

// BenchmarkRenderWorker measures what a worker process adds to an uncached
// render: the same small chart and 20-file directory rendered in process
// and in a worker (this test binary, as graphcd's own is in production).
func BenchmarkRenderWorker(b *testing.B) {
	files := map[string]string{
		"chart/Chart.yaml":        "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
		"chart/templates/cm.yaml": "{{- range until 20 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{{ . }}\ndata:\n  a: b\n{{- end }}\n",
	}
	for i := range 20 {
		files[fmt.Sprintf("dir/cm-%02d.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  a: b\n", i)
	}
	dir, _ := reposervertest.CommitFiles(b, files)
	url := "file://" + dir
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name   string
		worker *inproc.WorkerOptions
	}{
		{"in-process", nil},
		{"worker", &inproc.WorkerOptions{Command: []string{exe, workerArg}}},
		// GRAPHCD_BENCH_BINARY=/path/to/graphcd measures graphcd's own
		// binary as the worker, as in production.
		{"graphcd-worker", graphcdWorker()},
	} {
		if mode.name == "graphcd-worker" && mode.worker == nil {
			continue
		}
		for _, path := range []string{"chart", "dir"} {
			b.Run(mode.name+"/"+path, func(b *testing.B) {
				l, err := inproc.New(inproc.Options{WorkDir: b.TempDir(), AllowFileURLs: true, Worker: mode.worker})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(l.Close)
				req := bombRequest(url, path)
				for b.Loop() {
					if res, err := l.GenerateManifests(b.Context(), req); err != nil || len(res.Manifests) != 20 {
						b.Fatalf("render: %v", err)
					}
				}
			})
		}
	}
}

func graphcdWorker() *inproc.WorkerOptions {
	bin := os.Getenv("GRAPHCD_BENCH_BINARY")
	if bin == "" {
		return nil
	}
	return &inproc.WorkerOptions{Command: []string{bin, "render-worker"}}
}
