//go:build integration

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/sync"
	"github.com/graphcd/graphcd/hack/demo/demorepo"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/inproc"
)

// TestSamplesRenderFromServedRepo clones every sample from the demo's git
// server through the repository service, as the controller does, and
// checks what a newcomer is promised: the source type, the objects, and for
// the sync-waves app the order a sync runs them in.
func TestSamplesRenderFromServedRepo(t *testing.T) {
	repo, svc := serveSamples(t)
	want := map[string]struct {
		sourceType v1alpha1.ApplicationSourceType
		objects    []string
	}{
		"guestbook": {v1alpha1.ApplicationSourceTypeDirectory, []string{"Deployment/guestbook-web", "Service/guestbook-web"}},
		"hello-helm": {v1alpha1.ApplicationSourceTypeHelm, []string{
			"ConfigMap/hello-helm-config", "Deployment/hello-helm", "Job/hello-helm-setup", "Service/hello-helm",
		}},
		"hello-kustomize": {v1alpha1.ApplicationSourceTypeKustomize, []string{"Deployment/staging-hello", "Service/staging-hello"}},
		"sync-waves": {v1alpha1.ApplicationSourceTypeDirectory, []string{
			"Deployment/backend", "Deployment/frontend", "Job/announce-release", "Job/migrate-schema",
			"Job/smoke-test-backend", "Service/backend",
		}},
	}
	if len(want) != len(samples) {
		t.Fatalf("test covers %d samples, the demo creates %d", len(want), len(samples))
	}
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			res := render(t, svc, repo.URL, s)
			var got []string
			for _, m := range res.Manifests {
				got = append(got, m.GetKind()+"/"+m.GetName())
			}
			slices.Sort(got)
			if res.SourceType != want[s.name].sourceType {
				t.Errorf("source type = %s, want %s", res.SourceType, want[s.name].sourceType)
			}
			if diff := cmp.Diff(got, want[s.name].objects); diff != "" {
				t.Errorf("objects (-got +want):\n%s", diff)
			}
		})
	}

	t.Run("kustomize overlay", func(t *testing.T) {
		res := render(t, svc, repo.URL, sampleNamed(t, "hello-kustomize"))
		for _, m := range res.Manifests {
			if m.GetLabels()["app.kubernetes.io/environment"] != "staging" {
				t.Errorf("%s/%s has labels %v, want the staging label", m.GetKind(), m.GetName(), m.GetLabels())
			}
			if m.GetKind() != "Deployment" {
				continue
			}
			image, _, _ := unstructured.NestedSlice(m.Object, "spec", "template", "spec", "containers")
			if got := image[0].(map[string]any)["image"]; got != "demo.graphcd.io/hello:1.1" {
				t.Errorf("image = %v, want the overlay's demo.graphcd.io/hello:1.1", got)
			}
		}
	})

	plan := func(t *testing.T, name string) []string {
		t.Helper()
		res := render(t, svc, repo.URL, sampleNamed(t, name))
		p, err := sync.Build(res.Manifests, nil, sync.Options{Namespace: "demo-" + name, SyncOptions: []string{"CreateNamespace=true"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Errors) > 0 {
			t.Fatalf("plan errors: %v", p.Errors)
		}
		var order []string
		for _, task := range p.Tasks {
			order = append(order, fmt.Sprintf("%s %d %s/%s %s", task.Phase, task.Wave, task.Kind, task.Name, task.HookType))
		}
		return order
	}
	t.Run("sync waves order", func(t *testing.T) {
		want := []string{
			"PreSync 0 Namespace/demo-sync-waves ",
			"PreSync 0 Job/migrate-schema PreSync",
			"Sync 0 Service/backend ",
			"Sync 0 Deployment/backend ",
			"Sync 1 Job/smoke-test-backend Sync",
			"Sync 2 Deployment/frontend ",
			"PostSync 0 Job/announce-release PostSync",
		}
		if diff := cmp.Diff(plan(t, "sync-waves"), want); diff != "" {
			t.Errorf("sync order (-got +want):\n%s", diff)
		}
	})
	t.Run("helm pre-install hook", func(t *testing.T) {
		got := plan(t, "hello-helm")
		if !slices.Contains(got, "PreSync -1 Job/hello-helm-setup PreSync") {
			t.Errorf("the chart's pre-install Job is not a PreSync hook of weight -1: %q", got)
		}
	})
}

// TestPushToDemoRepo follows the printed "Change" steps: a commit pushed
// from the working copy becomes the revision the server resolves.
func TestPushToDemoRepo(t *testing.T) {
	repo, svc := serveSamples(t)
	before, err := svc.ResolveRevision(t.Context(), reposerver.Repository{URL: repo.URL}, "main")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(repo.WorkDir, "guestbook", "deployment.yaml")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(b), "replicas: 2", "replicas: 3", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"commit", "-q", "-am", "scale guestbook"}, {"push", "-q"}} {
		cmd := exec.CommandContext(t.Context(), "git", args...)
		cmd.Dir = repo.WorkDir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	svc.InvalidateRevision(repo.URL)
	after, err := svc.ResolveRevision(t.Context(), reposerver.Repository{URL: repo.URL}, "main")
	if err != nil {
		t.Fatal(err)
	}
	if after == before {
		t.Errorf("main still resolves to %s after the push", before)
	}
	res := render(t, svc, repo.URL, sampleNamed(t, "guestbook"))
	for _, m := range res.Manifests {
		if n, _, _ := unstructured.NestedInt64(m.Object, "spec", "replicas"); m.GetKind() == "Deployment" && n != 3 {
			t.Errorf("rendered replicas = %d after the push, want 3", n)
		}
	}
}

func serveSamples(t *testing.T) (*demorepo.Repo, *inproc.Local) {
	t.Helper()
	repo, err := serveRepo(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(repo.Close)
	svc, err := inproc.New(inproc.Options{WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return repo, svc
}

func render(t *testing.T, svc *inproc.Local, repoURL string, s sample) *reposerver.ManifestResponse {
	t.Helper()
	res, err := svc.GenerateManifests(t.Context(), reposerver.ManifestRequest{
		Repo:      reposerver.Repository{URL: repoURL},
		Source:    v1alpha1.ApplicationSource{RepoURL: repoURL, Path: s.path, TargetRevision: "main"},
		AppName:   s.name,
		Namespace: "demo-" + s.name,
	})
	if err != nil {
		t.Fatalf("render %s: %v", s.name, err)
	}
	return res
}

func sampleNamed(t *testing.T, name string) sample {
	t.Helper()
	for _, s := range samples {
		if s.name == name {
			return s
		}
	}
	t.Fatalf("no sample %q", name)
	return sample{}
}
