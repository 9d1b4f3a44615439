//go:build integration

package remote

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/cache"
	"github.com/graphcd/graphcd/reposerver/git"
	"github.com/graphcd/graphcd/reposerver/gittree"
	"github.com/graphcd/graphcd/reposerver/inproc"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// gitRepo commits files into a new repository and returns its file:// URL
// and the commit.
func gitRepo(t testing.TB, files map[string]string) (string, string) {
	t.Helper()
	dir, sha := reposervertest.CommitFiles(t, files)
	return "file://" + dir, sha
}

// appFiles holds one app per tool and one app too big for a small
// message limit.
var appFiles = map[string]string{
	"apps/plain/cm.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata:\n  a: b\n",
	"apps/chart/Chart.yaml":        "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
	"apps/chart/values.yaml":       "replicas: 1\n",
	"apps/chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  replicas: {{ .Values.replicas | quote }}\n",
	"apps/kust/kustomization.yaml": "resources:\n- cm.yaml\nnamePrefix: k-\n",
	"apps/kust/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kust\n",
	"apps/big/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  blob: " + strings.Repeat("y", 256<<10) + "\n",
}

// newLocal returns an in-process Service with a memory cache over file://
// repositories.
func newLocal(t testing.TB) *inproc.Local {
	t.Helper()
	c, err := cache.New(cache.NewMemory(64<<20), cache.Options{Secret: bytes.Repeat([]byte("k"), 32)})
	if err != nil {
		t.Fatal(err)
	}
	l, err := inproc.New(inproc.Options{WorkDir: t.TempDir(), Cache: c, AllowFileURLs: true})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The client answers what the in-process Service answers, for every tool
// and every method.
func TestClientMatchesLocal(t *testing.T) {
	url, sha := gitRepo(t, appFiles)
	local := newLocal(t)
	srv, addr := serve(t, local, ServerOptions{})
	c := dial(t, addr, ClientOptions{CACert: srv.CertificatePEM()})
	repo := reposerver.Repository{URL: url}

	for _, path := range []string{"apps/plain", "apps/chart", "apps/kust"} {
		t.Run(path, func(t *testing.T) {
			req := reposerver.ManifestRequest{
				Repo: repo, AppName: "guestbook", Namespace: "demo",
				Source: v1alpha1.ApplicationSource{RepoURL: url, Path: path, TargetRevision: "main"},
			}
			got, err := c.GenerateManifests(t.Context(), req)
			if err != nil {
				t.Fatalf("remote GenerateManifests: %v", err)
			}
			want, err := local.GenerateManifests(t.Context(), req) // a cache hit now
			if err != nil {
				t.Fatalf("local GenerateManifests: %v", err)
			}
			if got.Cached || !want.Cached || got.Revision != sha {
				t.Errorf("remote cached %v revision %s, local cached %v; want a first render at %s, then a hit", got.Cached, got.Revision, want.Cached, sha)
			}
			got.Cached = want.Cached
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("remote vs local (-got +want):\n%s", diff)
			}

			gotDetails, err := c.GetAppDetails(t.Context(), req)
			if err != nil {
				t.Fatalf("remote GetAppDetails: %v", err)
			}
			wantDetails, err := local.GetAppDetails(t.Context(), req)
			if err != nil {
				t.Fatalf("local GetAppDetails: %v", err)
			}
			if diff := cmp.Diff(gotDetails, wantDetails); diff != "" {
				t.Errorf("app details (-got +want):\n%s", diff)
			}
		})
	}

	for _, rev := range []string{"main", "HEAD", "v1.0.0", sha[:10]} {
		got, err := c.ResolveRevision(t.Context(), repo, rev)
		if err != nil || got != sha {
			t.Errorf("ResolveRevision(%s) = %q, %v; want %s", rev, got, err, sha)
		}
	}
	refs, err := c.ListRefs(t.Context(), repo)
	if diff := cmp.Diff(refs, git.Refs{Branches: []string{"main"}, Tags: []string{"v1.0.0"}}); err != nil || diff != "" {
		t.Errorf("ListRefs err %v (-got +want):\n%s", err, diff)
	}
	if err := c.TestRepository(t.Context(), repo); err != nil {
		t.Errorf("TestRepository: %v", err)
	}
}

// Errors of the Service keep their message and their class.
func TestServiceErrorsOverTheWire(t *testing.T) {
	url, _ := gitRepo(t, appFiles)
	local := newLocal(t)
	srv, addr := serve(t, local, ServerOptions{})
	c := dial(t, addr, ClientOptions{CACert: srv.CertificatePEM()})
	repo := reposerver.Repository{URL: url}

	for _, tc := range []struct {
		name string
		src  v1alpha1.ApplicationSource
		code codes.Code
	}{
		{"missing path", v1alpha1.ApplicationSource{Path: "apps/nope"}, codes.Unknown},
		{"two tools", v1alpha1.ApplicationSource{Path: "apps/plain", Helm: &v1alpha1.ApplicationSourceHelm{}, Kustomize: &v1alpha1.ApplicationSourceKustomize{}}, codes.Unknown},
		{"unknown revision", v1alpha1.ApplicationSource{Path: "apps/plain", TargetRevision: "no-such-branch"}, codes.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := reposerver.ManifestRequest{Repo: repo, Source: tc.src}
			_, want := local.GenerateManifests(t.Context(), req)
			_, err := c.GenerateManifests(t.Context(), req)
			if err == nil || want == nil {
				t.Fatalf("remote error %v, local error %v; want both to fail", err, want)
			}
			if err.Error() != want.Error() {
				t.Errorf("message = %q, want %q", err, want)
			}
			if got := status.Code(err); got != tc.code {
				t.Errorf("code = %s, want %s", got, tc.code)
			}
		})
	}
	_, err := c.ResolveRevision(t.Context(), repo, "no-such-branch")
	if !errors.Is(err, git.ErrRevisionNotFound) {
		t.Errorf("ResolveRevision error = %v, want git.ErrRevisionNotFound", err)
	}
	_, err = c.GenerateManifests(t.Context(), reposerver.ManifestRequest{Repo: reposerver.Repository{URL: "file:///etc"}})
	if err == nil {
		t.Error("rendering a non-repository succeeded")
	}
}

// ListCommits answers over the wire what it answers in process: the
// history newest first with authors, messages and tags, and the same
// errors for a bad revision and a Helm repository.
func TestListCommitsOverTheWire(t *testing.T) {
	dir, first := reposervertest.CommitFiles(t, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"})
	second := reposervertest.CommitMore(t, dir, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"})
	local := newLocal(t)
	srv, addr := serve(t, local, ServerOptions{})
	c := dial(t, addr, ClientOptions{CACert: srv.CertificatePEM()})
	repo := reposerver.Repository{URL: "file://" + dir}

	got, err := c.ListCommits(t.Context(), repo, "main", 10)
	if err != nil {
		t.Fatal(err)
	}
	want, err := local.ListCommits(t.Context(), repo, "main", 10)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("remote vs local (-got +want):\n%s", diff)
	}
	var summary []string
	for _, co := range got {
		summary = append(summary, co.SHA+" "+co.Subject()+" "+co.Author.Email+" "+strings.Join(co.Tags, ","))
	}
	if diff := cmp.Diff(summary, []string{second + " change t@example.com ", first + " apps t@example.com v1.0.0"}); diff != "" {
		t.Errorf("history (-got +want):\n%s", diff)
	}
	if got, err := c.ListCommits(t.Context(), repo, first, 1); err != nil || len(got) != 1 || got[0].SHA != first {
		t.Errorf("ListCommits at the first commit, limit 1 = %+v, %v", got, err)
	}

	if _, err := c.ListCommits(t.Context(), repo, "no-such-branch", 5); !errors.Is(err, git.ErrRevisionNotFound) || status.Code(err) != codes.NotFound {
		t.Errorf("unknown revision: error = %v, want git.ErrRevisionNotFound (NotFound)", err)
	}
	if _, err := c.ListCommits(t.Context(), repo, "-x", 5); !errors.Is(err, git.ErrInvalidRevision) {
		t.Errorf("hostile revision: error = %v, want git.ErrInvalidRevision", err)
	}
	helm := reposerver.Repository{URL: "https://charts.example.com", Type: reposerver.RepoTypeHelm}
	if _, err := c.ListCommits(t.Context(), helm, "1.0.0", 5); !errors.Is(err, reposerver.ErrNotGit) || status.Code(err) != codes.FailedPrecondition {
		t.Errorf("Helm repository: error = %v, want reposerver.ErrNotGit (FailedPrecondition)", err)
	}
}

// A render larger than the message limit fails cleanly; smaller ones still
// go through.
func TestRenderAboveMessageLimit(t *testing.T) {
	url, _ := gitRepo(t, appFiles)
	const limit = 128 << 10
	srv, addr := serve(t, newLocal(t), ServerOptions{MaxMessageSize: limit})
	c := dial(t, addr, ClientOptions{CACert: srv.CertificatePEM(), MaxMessageSize: limit})
	repo := reposerver.Repository{URL: url}

	_, err := c.GenerateManifests(t.Context(), reposerver.ManifestRequest{Repo: repo, Source: v1alpha1.ApplicationSource{Path: "apps/big"}})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("error = %v (code %s), want ResourceExhausted", err, status.Code(err))
	}
	res, err := c.GenerateManifests(t.Context(), reposerver.ManifestRequest{Repo: repo, Source: v1alpha1.ApplicationSource{Path: "apps/plain"}})
	if err != nil || len(res.Manifests) != 1 {
		t.Fatalf("small render after the big one: %v", err)
	}
}

// BenchmarkGenerateManifestsCacheHit measures a cache-hit render through
// gRPC with TLS on loopback: JSON encoding, the TLS channel and the cache
// lookup (the revision is resolved from the revision cache).
func BenchmarkGenerateManifestsCacheHit(b *testing.B) {
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("apps/many/cm-%02d.yaml", i)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%02d\n  labels:\n    app: many\ndata:\n  key: %s\n", i, strings.Repeat("v", 512))
	}
	url, _ := gitRepo(b, files)
	srv, addr := serve(b, newLocal(b), ServerOptions{})
	c := dial(b, addr, ClientOptions{CACert: srv.CertificatePEM()})
	req := reposerver.ManifestRequest{Repo: reposerver.Repository{URL: url}, Source: v1alpha1.ApplicationSource{Path: "apps/many"}, AppName: "many"}
	if _, err := c.GenerateManifests(b.Context(), req); err != nil {
		b.Fatal(err)
	}
	var durations []time.Duration
	for b.Loop() {
		start := time.Now()
		res, err := c.GenerateManifests(b.Context(), req)
		durations = append(durations, time.Since(start))
		if err != nil || !res.Cached || len(res.Manifests) != 50 {
			b.Fatalf("GenerateManifests: cached %v, err %v", res != nil && res.Cached, err)
		}
	}
	slices.Sort(durations)
	pct := func(p float64) float64 {
		return float64(durations[int(float64(len(durations)-1)*p)].Microseconds())
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// MatchTree answers over the wire what it answers in process: the
// matched files with their contents at the resolved commit, and refuses a
// Helm repository.
func TestMatchTreeOverTheWire(t *testing.T) {
	dir, sha := reposervertest.CommitFiles(t, map[string]string{
		"clusters/eu/config.json": `{"name": "eu"}`, "clusters/us/config.json": `{"name": "us"}`, "clusters/us/notes.txt": "no",
	})
	local := newLocal(t)
	srv, addr := serve(t, local, ServerOptions{})
	c := dial(t, addr, ClientOptions{CACert: srv.CertificatePEM()})
	repo := reposerver.Repository{URL: "file://" + dir}
	req := gittree.Request{Files: true, Items: []gittree.Item{{Path: "clusters/*/config.json"}}}

	got, err := c.MatchTree(t.Context(), repo, "main", req)
	if err != nil {
		t.Fatal(err)
	}
	want, err := local.MatchTree(t.Context(), repo, "main", req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("remote vs local (-got +want):\n%s", diff)
	}
	if got.Revision != sha || strings.Join(got.Paths, ",") != "clusters/eu/config.json,clusters/us/config.json" || string(got.Contents[1]) != `{"name": "us"}` {
		t.Errorf("MatchTree = %+v", got)
	}
	if _, err := c.MatchTree(t.Context(), reposerver.Repository{URL: "https://charts.example.com", Type: reposerver.RepoTypeHelm}, "", req); !errors.Is(err, reposerver.ErrNotGit) {
		t.Errorf("a Helm repository: error = %v, want ErrNotGit", err)
	}
}
