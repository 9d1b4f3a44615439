package main

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/cgi" //nolint:gosec // G504: Go 1.26 is not affected; serves git http-backend on loopback
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// sampleApps is the content of the demo repository. all: keeps files whose
// names start with "_" or "." should a sample gain one (Helm's _helpers.tpl).
//
//go:embed all:apps
var sampleApps embed.FS

// demoRepo is the demo's git repository: a working copy a user can edit and
// push from, and the bare repository served over smart HTTP.
type demoRepo struct {
	// URL is the clone URL the Applications point at.
	URL string
	// WorkDir is the working copy; its origin is URL.
	WorkDir string

	server *http.Server
}

// serveRepo writes the sample apps into dir/demo-repo, commits them on
// branch main, and serves a bare clone with `git http-backend` on loopback,
// pushes allowed. Close stops the server.
func serveRepo(dir string) (*demoRepo, error) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("the demo needs git on PATH: %w", err)
	}
	work := filepath.Join(dir, "demo-repo")
	root := filepath.Join(dir, "git")
	bare := filepath.Join(root, "demo.git")
	if err := writeSamples(work); err != nil {
		return nil, err
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
		{"init", "-q", "-b", "main"},
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
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the git server: %w", err)
	}
	r := &demoRepo{
		URL:     "http://" + l.Addr().String() + "/demo.git",
		WorkDir: work,
		server:  &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second},
	}
	go func() { _ = r.server.Serve(l) }()

	// Make `git push` in the working copy go to the served repository.
	for _, args := range [][]string{
		{"remote", "add", "origin", r.URL},
		{"fetch", "-q", "origin"},
		{"branch", "-q", "--set-upstream-to=origin/main"},
	} {
		if err := git(work, args...); err != nil {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

// Close stops the git server.
func (r *demoRepo) Close() { _ = r.server.Close() }

// writeSamples copies the embedded sample apps into dir.
func writeSamples(dir string) error {
	samples, err := fs.Sub(sampleApps, "apps")
	if err != nil {
		return err
	}
	if err := os.CopyFS(dir, samples); err != nil {
		return fmt.Errorf("write the sample apps: %w", err)
	}
	return nil
}
