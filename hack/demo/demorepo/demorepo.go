// Package demorepo serves the demo's sample apps as a git repository over
// smart HTTP, with `git http-backend`, for `make demo` and the docker
// compose demo alike.
package demorepo

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/cgi" //nolint:gosec // G504: Go 1.26 is not affected; serves git http-backend to the demo
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Path is the URL path of the served repository, and Branch the branch
// the samples are committed on; Applications point at both.
const (
	Path   = "/demo.git"
	Branch = "main"
)

// Repo is the demo's git repository: a working copy a user can edit and
// push from, and the bare repository served over smart HTTP.
type Repo struct {
	// URL is the clone URL the Applications point at.
	URL string
	// WorkDir is the working copy; its origin is URL.
	WorkDir string

	server *http.Server
}

// Serve writes samples into dir/demo-repo, commits them on Branch, and
// serves a bare clone with `git http-backend` on listen (host:port; port 0
// picks one), pushes allowed. URL names the listener's address, or
// 127.0.0.1 when it listens on every address. Close stops the server.
func Serve(dir string, samples fs.FS, listen string) (*Repo, error) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("the demo needs git on PATH: %w", err)
	}
	work := filepath.Join(dir, "demo-repo")
	root := filepath.Join(dir, "git")
	bare := filepath.Join(root, filepath.FromSlash(Path[1:]))
	if err := os.CopyFS(work, samples); err != nil {
		return nil, fmt.Errorf("write the sample apps: %w", err)
	}
	// The user's git configuration (signing, hooks, templates) stays out of
	// the demo's own commands.
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=graphcd demo", "GIT_AUTHOR_EMAIL=demo@graphcd.invalid",
		"GIT_COMMITTER_NAME=graphcd demo", "GIT_COMMITTER_EMAIL=demo@graphcd.invalid")
	git := func(dir string, args ...string) error {
		cmd := exec.Command(gitBin, args...) //nolint:noctx // short-lived
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %w: %s", args, err, out)
		}
		return nil
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", Branch},
		{"add", "."},
		{"commit", "-q", "-m", "Add the graphcd demo apps"},
		{"clone", "-q", "--bare", ".", bare},
	} {
		if err := git(work, args...); err != nil {
			return nil, err
		}
	}
	// Anonymous pushes over HTTP are refused unless the repository allows them.
	if err := git(bare, "config", "http.receivepack", "true"); err != nil {
		return nil, err
	}

	handler := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"}, Env: []string{
		"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull,
	}}
	var lc net.ListenConfig
	l, err := lc.Listen(context.Background(), "tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("listen for the git server: %w", err)
	}
	r := &Repo{
		URL:     "http://" + dialAddr(l.Addr()) + Path,
		WorkDir: work,
		server:  &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second},
	}
	go func() { _ = r.server.Serve(l) }()

	// Make `git push` in the working copy go to the served repository.
	for _, args := range [][]string{
		{"remote", "add", "origin", r.URL},
		{"fetch", "-q", "origin"},
		{"branch", "-q", "--set-upstream-to=origin/" + Branch},
	} {
		if err := git(work, args...); err != nil {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

// Close stops the git server.
func (r *Repo) Close() { _ = r.server.Close() }

// dialAddr is an address a local client can dial to reach a listener on
// addr: loopback in place of the unspecified address.
func dialAddr(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return addr.String()
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
}
