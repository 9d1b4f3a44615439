//go:build integration

package inproc_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/inproc"
	"github.com/graphcd/graphcd/reposerver/render"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// A chart in one repository renders with value files from another
// (a multi-source app's $values), in process and in a worker process; a
// commit to the values repository renders again instead of answering
// from the cache, and a ref the request does not carry is an error.
func TestGenerateManifestsRefValueFiles(t *testing.T) {
	chartURL, _ := newRepo(t)
	valuesDir, _ := reposervertest.CommitFiles(t, map[string]string{
		"envs/prod.yaml":      "replicas: 5\n",
		"envs/guestbook.yaml": "replicas: 6\n",
	})
	valuesURL := "file://" + valuesDir
	for name, l := range map[string]*inproc.Local{"in process": newLocal(t), "worker": newWorkerLocal(t, time.Minute)} {
		t.Run(name, func(t *testing.T) {
			req := reposerver.ManifestRequest{
				Repo: reposerver.Repository{URL: chartURL},
				Source: v1alpha1.ApplicationSource{RepoURL: chartURL, Path: "apps/chart", TargetRevision: "main", Helm: &v1alpha1.ApplicationSourceHelm{
					ValueFiles: []string{"values.yaml", "$values/envs/prod.yaml"},
				}},
				AppName: "guestbook", Namespace: "demo",
				RefSources: map[string]reposerver.RefSource{"$values": {Repo: reposerver.Repository{URL: valuesURL}, TargetRevision: "main"}},
			}
			if got := replicas(t, l, req); got != "5" {
				t.Errorf("replicas = %q, want 5 from the values repository", got)
			}
			req.Source.Helm.ValueFiles = []string{"$values/envs/$ARGOCD_APP_NAME.yaml"}
			if got := replicas(t, l, req); got != "6" {
				t.Errorf("replicas = %q, want 6 from envs/guestbook.yaml", got)
			}

			req.Source.Helm.ValueFiles = []string{"$values/../escape.yaml"}
			if _, err := l.GenerateManifests(t.Context(), req); err == nil || !strings.Contains(err.Error(), "outside the repository") {
				t.Errorf("escaping value file: err = %v", err)
			}
			req.Source.Helm.ValueFiles = []string{"$other/envs/prod.yaml"}
			if _, err := l.GenerateManifests(t.Context(), req); err == nil || !strings.Contains(err.Error(), `no source of the application has ref "other"`) {
				t.Errorf("unknown ref: err = %v", err)
			}
			helmRef := req
			helmRef.Source.Helm = &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"$values/envs/prod.yaml"}}
			helmRef.RefSources = map[string]reposerver.RefSource{"$values": {Repo: reposerver.Repository{URL: "https://charts.example.com", Type: reposerver.RepoTypeHelm}}}
			if _, err := l.GenerateManifests(t.Context(), helmRef); err == nil || !strings.Contains(err.Error(), "is a Helm repository") {
				t.Errorf("ref to a Helm repository: err = %v", err)
			}
		})
	}

	// A value file named over and over under different spellings is
	// read each time, within a budget for the render.
	bigDir, _ := reposervertest.CommitFiles(t, map[string]string{"big.yaml": "big: \"" + strings.Repeat("x", 9<<20) + "\"\n"})
	big := reposerver.ManifestRequest{
		Repo: reposerver.Repository{URL: chartURL},
		Source: v1alpha1.ApplicationSource{RepoURL: chartURL, Path: "apps/chart", TargetRevision: "main", Helm: &v1alpha1.ApplicationSourceHelm{
			ValueFiles: []string{"$values/big.yaml", "$values/./big.yaml", "$values/././big.yaml", "$values/./././big.yaml"},
		}},
		AppName: "guestbook", Namespace: "demo",
		RefSources: map[string]reposerver.RefSource{"$values": {Repo: reposerver.Repository{URL: "file://" + bigDir}, TargetRevision: "main"}},
	}
	if _, err := newLocal(t).GenerateManifests(t.Context(), big); !errors.Is(err, render.ErrTooLarge) || !strings.Contains(err.Error(), "in all") {
		t.Errorf("36 MiB of ref value files: err = %v, want the budget exceeded", err)
	}

	// A new commit of the values repository is a new render.
	l := newLocal(t)
	req := reposerver.ManifestRequest{
		Repo: reposerver.Repository{URL: chartURL},
		Source: v1alpha1.ApplicationSource{RepoURL: chartURL, Path: "apps/chart", TargetRevision: "main", Helm: &v1alpha1.ApplicationSourceHelm{
			ValueFiles: []string{"$values/envs/prod.yaml"},
		}},
		AppName: "guestbook", Namespace: "demo",
		RefSources: map[string]reposerver.RefSource{"$values": {Repo: reposerver.Repository{URL: valuesURL}, TargetRevision: "main"}},
	}
	if got := replicas(t, l, req); got != "5" {
		t.Fatalf("replicas = %q, want 5", got)
	}
	reposervertest.CommitMore(t, valuesDir, map[string]string{"envs/prod.yaml": "replicas: 7\n"})
	l.InvalidateRevision(valuesURL)
	if got := replicas(t, l, req); got != "7" {
		t.Errorf("after a values commit: replicas = %q, want 7", got)
	}
}

// replicas renders req and returns the chart ConfigMap's replicas.
func replicas(t *testing.T, l *inproc.Local, req reposerver.ManifestRequest) string {
	t.Helper()
	res, err := l.GenerateManifests(t.Context(), req)
	if err != nil {
		t.Fatalf("GenerateManifests: %v", err)
	}
	if len(res.Manifests) != 1 {
		t.Fatalf("manifests = %v, want the chart's ConfigMap", res.Manifests)
	}
	v, _, _ := unstructured.NestedString(res.Manifests[0].Object, "data", "replicas")
	return v
}
