//go:build integration

package git

import (
	"crypto/subtle"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

const (
	testUser     = "alice"
	testPassword = "s3cret-pa55word"
	testToken    = "tok-0123456789"
)

// fixture is a set of bare repositories served by `git http-backend`.
type fixture struct {
	root string
	// commits by name: c1..c3 on main (c2b untagged between c2 and c3),
	// feature, pull, withSub, lib.
	commits map[string]string
}

// gitEnv isolates the git CLI from the machine's configuration.
func gitEnv(home string) []string {
	return append(os.Environ(),
		"HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_AUTHOR_DATE=2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2024-01-01T00:00:00Z",
	)
}

func runGit(t testing.TB, home, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// newFixture builds the repositories:
//
//	app.git      main: c1 (v1.0.0, annotated) - c2 (v1.2.3) - c2b - c3 (v2.0.0, annotated)
//	             feature: c3 - f1 (v2.1.0-rc.1); refs/pull/1/head -> p1
//	             with-sub: c3 - s1 adding submodule "lib" at ../lib.git
//	app-sha.git  the same, serving commits by SHA (allowReachableSHA1InWant)
//	lib.git      one commit
func newFixture(t testing.TB) *fixture {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	base := t.TempDir()
	home := filepath.Join(base, "home")
	root := filepath.Join(base, "srv")
	for _, d := range []string{home, root} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{root: root, commits: map[string]string{}}

	lib := filepath.Join(base, "lib")
	runGit(t, home, base, "init", "-q", "-b", "main", lib)
	writeFile(t, filepath.Join(lib, "README"), "lib v1\n")
	runGit(t, home, lib, "add", ".")
	runGit(t, home, lib, "commit", "-q", "-m", "lib")
	f.commits["lib"] = runGit(t, home, lib, "rev-parse", "HEAD")
	runGit(t, home, base, "clone", "-q", "--bare", lib, filepath.Join(root, "lib.git"))

	app := filepath.Join(base, "app")
	runGit(t, home, base, "init", "-q", "-b", "main", app)
	commit := func(name, file, content string) {
		writeFile(t, filepath.Join(app, file), content)
		runGit(t, home, app, "add", "-A")
		runGit(t, home, app, "commit", "-q", "-m", name)
		f.commits[name] = runGit(t, home, app, "rev-parse", "HEAD")
	}
	commit("c1", "app.yaml", "version: 1.0.0\n")
	runGit(t, home, app, "tag", "-a", "v1.0.0", "-m", "v1.0.0")
	commit("c2", "app.yaml", "version: 1.2.3\n")
	runGit(t, home, app, "tag", "v1.2.3")
	commit("c2b", "app.yaml", "version: between\n")
	commit("c3", "app.yaml", "version: 2.0.0\n")
	runGit(t, home, app, "tag", "-a", "v2.0.0", "-m", "v2.0.0")
	runGit(t, home, app, "checkout", "-q", "-b", "feature")
	commit("f1", "feature.yaml", "feature: true\n")
	runGit(t, home, app, "tag", "v2.1.0-rc.1")
	runGit(t, home, app, "checkout", "-q", "main")
	runGit(t, home, app, "checkout", "-q", "-b", "pull")
	commit("p1", "pull.yaml", "pull: 1\n")
	runGit(t, home, app, "checkout", "-q", "main")
	runGit(t, home, app, "checkout", "-q", "-b", "with-sub")
	runGit(t, home, app, "-c", "protocol.file.allow=always", "submodule", "add", "-q", filepath.Join(root, "lib.git"), "lib")
	runGit(t, home, app, "config", "-f", ".gitmodules", "submodule.lib.url", "../lib.git")
	runGit(t, home, app, "add", "-A")
	runGit(t, home, app, "commit", "-q", "-m", "s1")
	f.commits["s1"] = runGit(t, home, app, "rev-parse", "HEAD")
	runGit(t, home, app, "checkout", "-q", "main")

	for _, name := range []string{"app.git", "app-sha.git"} {
		bare := filepath.Join(root, name)
		runGit(t, home, base, "clone", "-q", "--bare", app, bare)
		runGit(t, home, bare, "update-ref", "refs/pull/1/head", f.commits["p1"])
		runGit(t, home, bare, "branch", "-D", "pull")
	}
	runGit(t, home, filepath.Join(root, "app-sha.git"), "config", "uploadpack.allowReachableSHA1InWant", "true")
	return f
}

// gitServer serves a fixture over smart HTTP behind authentication and
// counts the requests per repository.
type gitServer struct {
	*httptest.Server
	mu     sync.Mutex
	counts map[string]int // "<repo> <kind>" where kind is ls-remote or upload-pack
}

func (s *gitServer) count(repo, kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[repo+" "+kind]
}

func (s *gitServer) url(repo string) string { return s.URL + "/" + repo }

func authorized(r *http.Request) bool {
	if user, pass, ok := r.BasicAuth(); ok {
		return subtle.ConstantTimeCompare([]byte(user), []byte(testUser)) == 1 &&
			subtle.ConstantTimeCompare([]byte(pass), []byte(testPassword)) == 1
	}
	return r.Header.Get("Authorization") == "Bearer "+testToken
}

func (f *fixture) handler(t testing.TB, s *gitServer) http.Handler {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{
		Path: gitBin,
		Args: []string{"http-backend"},
		Dir:  f.root,
		Env: []string{
			"GIT_PROJECT_ROOT=" + f.root,
			"GIT_HTTP_EXPORT_ALL=1",
			"HOME=" + f.root,
			"GIT_CONFIG_NOSYSTEM=1",
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !authorized(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		repo, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		kind := ""
		switch {
		case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/info/refs"):
			kind = "ls-remote"
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-upload-pack"):
			kind = "upload-pack"
		}
		if kind != "" {
			s.mu.Lock()
			s.counts[repo+" "+kind]++
			s.mu.Unlock()
		}
		backend.ServeHTTP(w, r)
	})
}

func newGitServer(t testing.TB, f *fixture) *gitServer {
	t.Helper()
	s := &gitServer{counts: map[string]int{}}
	s.Server = httptest.NewServer(f.handler(t, s))
	t.Cleanup(s.Close)
	return s
}

func newTLSGitServer(t testing.TB, f *fixture) *gitServer {
	t.Helper()
	s := &gitServer{counts: map[string]int{}}
	s.Server = httptest.NewTLSServer(f.handler(t, s))
	t.Cleanup(s.Close)
	return s
}

func basicCreds() *Credentials { return &Credentials{Username: testUser, Password: testPassword} }

func plumbingHash(s string) plumbing.Hash { return plumbing.NewHash(s) }
