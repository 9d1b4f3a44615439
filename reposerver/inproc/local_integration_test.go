//go:build integration

package inproc_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/cache"
	"github.com/graphcd/graphcd/reposerver/git"
	"github.com/graphcd/graphcd/reposerver/inproc"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// newRepo commits a repository with one app per tool and returns its
// file:// URL and the commit.
func newRepo(t *testing.T) (string, string) {
	t.Helper()
	return newRepoWith(t, map[string]string{
		"apps/plain/cm.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata:\n  a: b\n",
		"apps/chart/Chart.yaml":        "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
		"apps/chart/values.yaml":       "replicas: 1\n",
		"apps/chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\n  namespace: {{ .Release.Namespace }}\ndata:\n  replicas: {{ .Values.replicas | quote }}\n",
		"apps/kust/kustomization.yaml": "resources:\n- cm.yaml\nnamePrefix: k-\nimages:\n- name: nginx\n  newTag: \"1.27\"\n",
		"apps/kust/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kust\n",
	})
}

// newRepoWith commits files to a repository and returns its file:// URL
// and the commit.
func newRepoWith(t *testing.T, files map[string]string) (string, string) {
	t.Helper()
	dir, sha := reposervertest.CommitFiles(t, files)
	return "file://" + dir, sha
}

func newLocal(t *testing.T) *inproc.Local {
	t.Helper()
	c, err := cache.New(cache.NewMemory(64<<20), cache.Options{Secret: bytes.Repeat([]byte("s"), 32)})
	if err != nil {
		t.Fatal(err)
	}
	l, err := inproc.New(inproc.Options{WorkDir: t.TempDir(), Cache: c, AllowFileURLs: true})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Each tool is detected and rendered from a real Git checkout; a second
// request is served from the cache, a hard refresh renders again.
func TestGenerateManifestsDetectsAndCaches(t *testing.T) {
	url, sha := newRepo(t)
	l := newLocal(t)
	for _, tc := range []struct {
		path     string
		wantType v1alpha1.ApplicationSourceType
		wantName string
	}{
		{"apps/plain", v1alpha1.ApplicationSourceTypeDirectory, "plain"},
		{"apps/chart", v1alpha1.ApplicationSourceTypeHelm, "guestbook-cm"},
		{"apps/kust", v1alpha1.ApplicationSourceTypeKustomize, "k-kust"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			req := reposerver.ManifestRequest{
				Repo:    reposerver.Repository{URL: url},
				Source:  v1alpha1.ApplicationSource{RepoURL: url, Path: tc.path, TargetRevision: "main"},
				AppName: "guestbook", Namespace: "demo",
			}
			res, err := l.GenerateManifests(t.Context(), req)
			if err != nil {
				t.Fatalf("GenerateManifests: %v", err)
			}
			if res.SourceType != tc.wantType || res.Revision != sha || res.Cached {
				t.Errorf("got type %s revision %s cached %v; want %s %s uncached", res.SourceType, res.Revision, res.Cached, tc.wantType, sha)
			}
			if len(res.Manifests) != 1 || res.Manifests[0].GetName() != tc.wantName {
				t.Fatalf("manifests = %v, want one named %s", res.Manifests, tc.wantName)
			}
			again, err := l.GenerateManifests(t.Context(), req)
			if err != nil || !again.Cached || again.Manifests[0].GetName() != tc.wantName {
				t.Errorf("second request: cached %v err %v; want a cache hit", again != nil && again.Cached, err)
			}
			req.NoCache = true
			if hard, err := l.GenerateManifests(t.Context(), req); err != nil || hard.Cached {
				t.Errorf("hard refresh: err %v, cached %v; want a fresh render", err, hard != nil && hard.Cached)
			}
		})
	}
}

// The resolved revision reaches a Helm parameter through the build
// environment and follows each commit: once a refresh resolves the branch
// again, the new commit renders with its own SHA, never the cached
// manifests of the one before.
func TestGenerateManifestsBuildEnvironment(t *testing.T) {
	url, first := newRepo(t)
	l := newLocal(t)
	req := reposerver.ManifestRequest{
		Repo: reposerver.Repository{URL: url},
		Source: v1alpha1.ApplicationSource{RepoURL: url, Path: "apps/chart", TargetRevision: "main", Helm: &v1alpha1.ApplicationSourceHelm{
			Parameters: []v1alpha1.HelmParameter{{Name: "replicas", Value: "${ARGOCD_APP_PROJECT_NAME}/${ARGOCD_APP_NAME}@$ARGOCD_APP_REVISION", ForceString: true}},
		}},
		AppName: "guestbook", Project: "team-a", Namespace: "demo",
	}
	rendered := func(want string) {
		t.Helper()
		res, err := l.GenerateManifests(t.Context(), req)
		if err != nil {
			t.Fatalf("GenerateManifests: %v", err)
		}
		got, _, _ := unstructured.NestedString(res.Manifests[0].Object, "data", "replicas")
		if got != want || res.Revision != strings.TrimPrefix(want, "team-a/guestbook@") {
			t.Errorf("rendered %q at %s, want %q", got, res.Revision, want)
		}
	}
	rendered("team-a/guestbook@" + first)
	second := reposervertest.CommitMore(t, strings.TrimPrefix(url, "file://"), map[string]string{"apps/chart/README.md": "a second commit\n"})
	if second == first {
		t.Fatal("the second commit has the first one's SHA")
	}
	// What a refresh does: forget the branch's resolution.
	l.InvalidateRevision(url)
	rendered("team-a/guestbook@" + second)
}

// Concurrent identical requests render once and agree.
func TestGenerateManifestsConcurrent(t *testing.T) {
	url, _ := newRepo(t)
	l := newLocal(t)
	req := reposerver.ManifestRequest{Repo: reposerver.Repository{URL: url}, Source: v1alpha1.ApplicationSource{Path: "apps/kust"}, AppName: "a"}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			res, err := l.GenerateManifests(t.Context(), req)
			if err != nil || len(res.Manifests) != 1 {
				t.Errorf("GenerateManifests: %v", err)
				return
			}
			// Each caller owns its objects, as the controller assumes when
			// it marks them: -race reports callers that share a render's.
			m := res.Manifests[0]
			m.SetNamespace(fmt.Sprintf("ns-%d", i))
			_ = unstructured.SetNestedField(m.Object, int64(i), "metadata", "annotations", "caller")
		})
	}
	wg.Wait()
}

func TestGenerateManifestsErrors(t *testing.T) {
	url, _ := newRepo(t)
	l := newLocal(t)
	for _, tc := range []struct {
		name string
		src  v1alpha1.ApplicationSource
		want string
	}{
		{"missing path", v1alpha1.ApplicationSource{Path: "apps/nope"}, `app path "apps/nope" does not exist`},
		{"path escapes", v1alpha1.ApplicationSource{Path: "../../etc"}, "does not exist"},
		{"two tools", v1alpha1.ApplicationSource{Path: "apps/plain", Helm: &v1alpha1.ApplicationSourceHelm{}, Kustomize: &v1alpha1.ApplicationSourceKustomize{}}, "more than one tool"},
		{"unknown revision", v1alpha1.ApplicationSource{Path: "apps/plain", TargetRevision: "no-such-branch"}, "no-such-branch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := l.GenerateManifests(t.Context(), reposerver.ManifestRequest{Repo: reposerver.Repository{URL: url}, Source: tc.src})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestGetAppDetails(t *testing.T) {
	url, _ := newRepo(t)
	l := newLocal(t)
	d, err := l.GetAppDetails(t.Context(), reposerver.ManifestRequest{Repo: reposerver.Repository{URL: url}, Source: v1alpha1.ApplicationSource{Path: "apps/kust"}})
	if err != nil || d.SourceType != v1alpha1.ApplicationSourceTypeKustomize || d.Kustomize == nil || len(d.Kustomize.Images) != 1 || d.Kustomize.Images[0] != "nginx:1.27" {
		t.Fatalf("GetAppDetails(kust) = %+v, %v", d, err)
	}
	d, err = l.GetAppDetails(t.Context(), reposerver.ManifestRequest{Repo: reposerver.Repository{URL: url}, Source: v1alpha1.ApplicationSource{Path: "apps/chart"}})
	if err != nil || d.SourceType != v1alpha1.ApplicationSourceTypeHelm || d.Helm == nil || d.Helm.Values != "replicas: 1\n" {
		t.Fatalf("GetAppDetails(chart) = %+v, %v", d, err)
	}
}

// With signature keys, only a commit signed by one of them renders; the
// cache never answers a verifying request with an unverified render.
func TestGenerateManifestsVerifiesSignatures(t *testing.T) {
	files := map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: signed\n"}
	signedDir, _, key := reposervertest.CommitSigned(t, files)
	unsignedDir, _ := reposervertest.CommitFiles(t, files)
	_, _, otherKey := reposervertest.CommitSigned(t, files)
	l := newLocal(t)
	req := func(dir string, keys ...string) reposerver.ManifestRequest {
		return reposerver.ManifestRequest{
			Repo: reposerver.Repository{URL: "file://" + dir}, Source: v1alpha1.ApplicationSource{Path: "app"},
			SignatureKeys: keys,
		}
	}
	if res, err := l.GenerateManifests(t.Context(), req(signedDir, otherKey, key)); err != nil || len(res.Manifests) != 1 {
		t.Fatalf("signed commit, trusted key: %v", err)
	}
	if _, err := l.GenerateManifests(t.Context(), req(signedDir, otherKey)); !errors.Is(err, git.ErrSignatureInvalid) {
		t.Errorf("signed by an untrusted key: err = %v, want ErrSignatureInvalid", err)
	}
	if _, err := l.GenerateManifests(t.Context(), req(unsignedDir)); err != nil {
		t.Fatalf("unsigned commit without keys: %v", err)
	}
	// Same repository and commit, now demanding a signature: the cached
	// unverified render must not be served.
	if _, err := l.GenerateManifests(t.Context(), req(unsignedDir, key)); !errors.Is(err, git.ErrUnsigned) {
		t.Errorf("unsigned commit with keys: err = %v, want ErrUnsigned", err)
	}
}
