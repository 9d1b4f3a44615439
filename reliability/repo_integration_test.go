//go:build integration

package reliability

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphcd/graphcd/internal/testenv/gitserver"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// repo is the battery's Git repository: a working copy, pushed to a git
// server that serves it over smart HTTP.
type repo struct {
	url     string // what graphcd reads, through gate
	pushURL string // the git server itself
	gate    *gate
	dir     string // the working copy

	mu sync.Mutex // one commit and push at a time
	n  int        // pushes so far

	// delay, when set, holds every request to the git server that long
	// before it is served (a slow forge); requests counts them.
	delay    atomic.Int64
	requests atomic.Int64
}

// backgroundApp is the directory of the background load's apps: a
// ConfigMap each push changes, and a Deployment.
const backgroundApp = "background"

func newRepo(t *testing.T) *repo {
	t.Helper()
	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		backgroundApp + "/settings.yaml": settingsYAML(0),
		backgroundApp + "/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: registry.example.com/web:1}]
`,
		wavesApp + "/waves.yaml":           wavesYAML,
		postDeleteApp + "/postdelete.yaml": postDeleteYAML,
	})
	r := &repo{dir: dir}
	r.pushURL = gitserver.Serve(t, dir, gitserver.Options{Push: true, OnRequest: func(req *http.Request) {
		if req.URL.Query().Get("service") == "git-receive-pack" || strings.HasSuffix(req.URL.Path, "/git-receive-pack") {
			return // the test's own pushes
		}
		r.requests.Add(1)
		time.Sleep(time.Duration(r.delay.Load()))
	}})
	// graphcd reads the repository through a gate, which the tests
	// close; the test's pushes go straight to the server.
	u, err := url.Parse(r.pushURL)
	if err != nil {
		t.Fatal(err)
	}
	r.gate = newGate(t, u.Scheme+"://"+u.Host)
	r.url = "http://" + r.gate.addr + u.Path
	return r
}

func settingsYAML(n int) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  push: %q\n", fmt.Sprint(n))
}

// push commits a change of the background apps' ConfigMap and pushes it,
// returning the new revision.
func (r *repo) push(ctx context.Context) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	path := filepath.Join(r.dir, backgroundApp, "settings.yaml")
	if err := os.WriteFile(path, []byte(settingsYAML(r.n)), 0o600); err != nil {
		return "", err
	}
	for _, args := range [][]string{{"add", "."}, {"commit", "-q", "-m", fmt.Sprintf("push %d", r.n)}, {"push", "-q", r.pushURL, "HEAD:main"}} {
		if _, err := r.git(ctx, args...); err != nil {
			return "", err
		}
	}
	return r.git(ctx, "rev-parse", "HEAD")
}

// rewrite replaces the last two commits by one that changes the
// background apps' ConfigMap and force-pushes it: the history graphcd
// synced from is gone.
func (r *repo) rewrite(ctx context.Context) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	if _, err := r.git(ctx, "reset", "-q", "--hard", "HEAD~2"); err != nil {
		return "", err
	}
	path := filepath.Join(r.dir, backgroundApp, "settings.yaml")
	if err := os.WriteFile(path, []byte(settingsYAML(r.n)), 0o600); err != nil {
		return "", err
	}
	for _, args := range [][]string{{"add", "."}, {"commit", "-q", "-m", fmt.Sprintf("rewrite %d", r.n)}, {"push", "-q", "--force", r.pushURL, "HEAD:main"}} {
		if _, err := r.git(ctx, args...); err != nil {
			return "", err
		}
	}
	return r.git(ctx, "rev-parse", "HEAD")
}

// commit writes files (by path in the repository), commits them with
// message and pushes, returning the new revision.
func (r *repo) commit(ctx context.Context, message string, files map[string][]byte) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for path, content := range files {
		full := filepath.Join(r.dir, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			return "", err
		}
		if err := os.WriteFile(full, content, 0o600); err != nil {
			return "", err
		}
	}
	// A push in one request with its length: the git server's CGI takes
	// no chunked body.
	push := []string{"-c", "http.postBuffer=" + strconv.Itoa(256<<20), "push", "-q", r.pushURL, "HEAD:main"}
	for _, args := range [][]string{{"add", "."}, {"commit", "-q", "-m", message}, push} {
		if _, err := r.git(ctx, args...); err != nil {
			return "", err
		}
	}
	return r.git(ctx, "rev-parse", "HEAD")
}

// pushed is the number of the last change pushed (the ConfigMap's value).
func (r *repo) pushed() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// head is the working copy's (and, after a push, the server's) revision.
func (r *repo) head(ctx context.Context) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.git(ctx, "rev-parse", "HEAD")
}

func (r *repo) git(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", r.dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=faults", "GIT_AUTHOR_EMAIL=faults@example.com",
		"GIT_COMMITTER_NAME=faults", "GIT_COMMITTER_EMAIL=faults@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}
