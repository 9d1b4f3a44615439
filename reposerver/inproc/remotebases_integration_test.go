//go:build integration

package inproc_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/testenv/gitserver"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/git"
	"github.com/graphcd/graphcd/reposerver/inproc"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// requestLog records what reached a git server.
type requestLog struct {
	mu     sync.Mutex
	auth   []string
	fetchs int
}

func (l *requestLog) record(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if u, _, ok := r.BasicAuth(); ok {
		l.auth = append(l.auth, u)
	}
	if strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
		l.fetchs++
	}
}

func (l *requestLog) users() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Compact(slices.Sorted(slices.Values(l.auth)))
}

func (l *requestLog) fetches() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fetchs
}

// A kustomize overlay whose base is in another authenticated Git
// repository, and which downloads a resource over HTTPS, renders through
// graphcd's Git layer: the base comes with its own repository's
// credentials, which never reach the overlay's server (nor the reverse);
// a request without the base's repository is told which one it needs;
// the base is fetched once per revision however many apps use it; and
// hostile bases are refused.
func TestGenerateManifestsKustomizeRemoteBases(t *testing.T) {
	var baseLog, overlayLog requestLog
	baseDir, _ := reposervertest.CommitFiles(t, map[string]string{
		"base/kustomization.yaml":   "resources:\n- cm.yaml\ncommonLabels:\n  tier: base\n",
		"base/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base-cm\ndata:\n  from: base\n",
		"nested/kustomization.yaml": "resources:\n- ../base\n",
	})
	baseURL := gitserver.Serve(t, baseDir, gitserver.Options{User: "base-user", Password: "base-pw", OnRequest: baseLog.record})
	baseCreds := &reposerver.Credentials{Username: "base-user", Password: "base-pw"}

	files := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			http.Error(w, "credentials sent", http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: downloaded\n"))
	}))
	t.Cleanup(files.Close)

	var loopURL string
	overlayDir, _ := reposervertest.CommitFiles(t, map[string]string{
		"overlay/kustomization.yaml":  "namePrefix: prod-\nresources:\n- " + baseURL + "//nested?ref=main\n- " + files.URL + "/downloaded.yaml\n",
		"second/kustomization.yaml":   "namePrefix: second-\nresources:\n- " + baseURL + "//base?ref=main\n",
		"file/kustomization.yaml":     "resources:\n- file:///etc//passwd?ref=main\n",
		"metadata/kustomization.yaml": "resources:\n- http://169.254.169.254/org/repo.git//base\n",
	})
	overlayURL := gitserver.Serve(t, overlayDir, gitserver.Options{User: "overlay-user", Password: "overlay-pw", OnRequest: overlayLog.record,
		BeforeClone: func(url string) {
			loopURL = url
			reposervertest.CommitMore(t, overlayDir, map[string]string{
				"loop/kustomization.yaml": "resources:\n- " + url + "//loop?ref=main\n",
			})
		}})
	overlayCreds := &reposerver.Credentials{Username: "overlay-user", Password: "overlay-pw"}

	roots := poolOf(files)
	l, err := inproc.New(inproc.Options{WorkDir: t.TempDir(), RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	request := func(app, path string, repos ...reposerver.Repository) reposerver.ManifestRequest {
		return reposerver.ManifestRequest{
			Repo:    reposerver.Repository{URL: overlayURL, Credentials: overlayCreds},
			Source:  v1alpha1.ApplicationSource{RepoURL: overlayURL, Path: path, TargetRevision: "main"},
			AppName: app, Namespace: "demo", Repos: repos,
		}
	}

	// Without the base's repository, the answer names it.
	_, err = l.GenerateManifests(t.Context(), request("web", "overlay"))
	var needed *reposerver.RepositoriesNeededError
	if !errors.As(err, &needed) || !slices.Equal(needed.URLs, []string{baseURL}) {
		t.Fatalf("without the base's repository: err = %v, want RepositoriesNeededError{%s}", err, baseURL)
	}

	base := reposerver.Repository{URL: baseURL, Credentials: baseCreds}
	res, err := l.GenerateManifests(t.Context(), request("web", "overlay", base))
	if err != nil {
		t.Fatalf("overlay with a remote base: %v", err)
	}
	var names []string
	for _, m := range res.Manifests {
		names = append(names, m.GetName()+"/"+m.GetLabels()["tier"])
	}
	slices.Sort(names)
	if want := []string{"prod-base-cm/base", "prod-downloaded/"}; !slices.Equal(names, want) {
		t.Errorf("objects = %v, want %v", names, want)
	}
	if got := baseLog.users(); !slices.Equal(got, []string{"base-user"}) {
		t.Errorf("the base's server saw the users %v, want only base-user", got)
	}
	if got := overlayLog.users(); !slices.Equal(got, []string{"overlay-user"}) {
		t.Errorf("the overlay's server saw the users %v, want only overlay-user", got)
	}

	// Another app on the same base at the same revision fetches nothing
	// more from the base's server.
	fetches := baseLog.fetches()
	if _, err := l.GenerateManifests(t.Context(), request("second", "second", base)); err != nil {
		t.Fatalf("second app on the base: %v", err)
	}
	if got := baseLog.fetches(); got != fetches {
		t.Errorf("the second app fetched the base again: %d fetches, want %d", got, fetches)
	}

	// The base's credentials are the base's: wrong ones fail.
	_, err = l.GenerateManifests(t.Context(), request("web", "overlay", reposerver.Repository{URL: baseURL}))
	if !errors.Is(err, git.ErrAuthentication) || !strings.Contains(err.Error(), "remote base "+baseURL) {
		t.Errorf("the base without credentials: err = %v, want an authentication error", err)
	}

	for _, tc := range []struct {
		path string
		want string
	}{
		{"file", "graphcd fetches https, http and ssh repositories, not file://"},
		{"metadata", "link-local"},
		{"loop", "remote base cycle: " + loopURL + "//loop?ref=main -> " + loopURL + "//loop?ref=main"},
	} {
		repos := []reposerver.Repository{{URL: "http://169.254.169.254/org/repo.git"}, {URL: loopURL, Credentials: overlayCreds}}
		_, err := l.GenerateManifests(t.Context(), request("web", tc.path, repos...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.path, err, tc.want)
		}
	}
}
