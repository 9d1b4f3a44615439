// Package gitserver serves git repositories to tests the way a forge
// does: the git CLI's own smart-HTTP backend (git http-backend) on
// loopback, optionally behind basic auth. Fill a working copy with
// reposervertest.CommitFiles and serve it:
//
//	dir, sha := reposervertest.CommitFiles(t, files)
//	url := gitserver.Serve(t, dir, gitserver.Options{User: "u", Password: "p"})
package gitserver

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/http/cgi" //nolint:gosec // G504: Go 1.26 is not affected; serves git http-backend on loopback
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Options says how the repository is served.
type Options struct {
	// User and Password, when User is set, are the only basic-auth
	// credentials the server accepts; every other request gets 401.
	User, Password string
	// OnRequest, when set, sees every request before it is served (to
	// count fetches, or check the credentials that came).
	OnRequest func(*http.Request)
	// BeforeClone, when set, is called with the repository's URL before
	// dir is published: it may commit files that name the URL itself.
	BeforeClone func(url string)
	// Push accepts pushes (git receive-pack, http.receivepack on the bare
	// repository), behind the same basic auth as fetches.
	Push bool
}

// Serve serves a bare clone of the working copy dir (a git repository)
// until the test ends and returns its URL, http://127.0.0.1:PORT/repo.git.
// Later commits to dir are not seen; serve again, or push (Options.Push),
// to publish them.
func Serve(tb testing.TB, dir string, opts Options) string {
	tb.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		tb.Fatal("git CLI not installed (make test-deps installs it)")
	}
	root := tb.TempDir()
	lis, err := (&net.ListenConfig{}).Listen(tb.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	url := "http://" + lis.Addr().String() + "/repo.git"
	if opts.BeforeClone != nil {
		opts.BeforeClone(url)
	}
	env := append(os.Environ(), "HOME="+root, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	clone := exec.CommandContext(tb.Context(), gitBin, "clone", "-q", "--bare", dir, filepath.Join(root, "repo.git"))
	clone.Env = env
	if out, err := clone.CombinedOutput(); err != nil {
		tb.Fatalf("git clone --bare: %v\n%s", err, out)
	}
	if opts.Push {
		cfg := exec.CommandContext(tb.Context(), gitBin, "-C", filepath.Join(root, "repo.git"), "config", "http.receivepack", "true")
		cfg.Env = env
		if out, err := cfg.CombinedOutput(); err != nil {
			tb.Fatalf("git config http.receivepack: %v\n%s", err, out)
		}
	}
	backend := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"}, Env: []string{
		"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "HOME=" + root, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull,
	}}
	var handler http.Handler = backend
	if opts.User != "" {
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, p, ok := r.BasicAuth()
			if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(opts.User)) != 1 ||
				subtle.ConstantTimeCompare([]byte(p), []byte(opts.Password)) != 1 {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			backend.ServeHTTP(w, r)
		})
	}
	if opts.OnRequest != nil {
		inner := handler
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			opts.OnRequest(r)
			inner.ServeHTTP(w, r)
		})
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	tb.Cleanup(func() { _ = srv.Close() })
	return url
}
