// Package gitea runs a real Gitea forge for tests: the server built from
// the Go module proxy by hack/cluster-bins.sh (cached per machine), with
// SQLite in a temporary directory, on loopback, an admin user and an API
// token. Tests create organisations, repositories, branches and pull
// requests through its API, and clone over its HTTP git endpoint.
package gitea

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// Version is the Gitea release the tests run. hack/cluster-bins.sh pins
// the same; TestPinMatchesScript keeps the two in step.
const Version = "v1.27.3"

// Admin is the administrator's name.
const Admin = "graphcd-admin"

// Server is a running Gitea.
type Server struct {
	// URL is the server's root, http://127.0.0.1:PORT.
	URL string
	// Token is an API token of Admin with every scope.
	Token string
	// Password is Admin's password (for git over HTTP).
	Password string
	dir      string
	proc     *localcluster.Process
	client   *http.Client
}

// Binary returns the path of the Gitea binary, building it on first use
// (minutes on a cold machine).
func Binary(ctx context.Context) (string, error) {
	dir, err := localcluster.BinDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "gitea-"+Version)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	script := filepath.Join(localcluster.RepoRoot(), "hack", "cluster-bins.sh")
	out, err := exec.CommandContext(ctx, "bash", script, "gitea").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build gitea with %s: %w: %s", script, err, tail(string(out), 5))
	}
	return bin, nil
}

// sourceDir is Gitea's module directory: its templates and locales.
func sourceDir(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", "code.gitea.io/gitea@"+Version)
	cmd.Dir = os.TempDir()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download code.gitea.io/gitea@%s: %w", Version, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("go mod download code.gitea.io/gitea@%s: no directory", Version)
	}
	return mod.Dir, nil
}

// Start runs a Gitea on a free port and waits until its API answers.
func Start(ctx context.Context) (*Server, error) {
	bin, err := Binary(ctx)
	if err != nil {
		return nil, err
	}
	static, err := sourceDir(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "graphcd-gitea-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, Password: randomHex(12), client: &http.Client{Timeout: time.Minute}}
	port, err := localcluster.FreePort()
	if err != nil {
		_ = s.Stop()
		return nil, err
	}
	s.URL = "http://127.0.0.1:" + strconv.Itoa(port)
	conf := filepath.Join(dir, "app.ini")
	if err := os.WriteFile(conf, []byte(config(dir, static, port)), 0o600); err != nil {
		_ = s.Stop()
		return nil, err
	}
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, bin, append([]string{"--config", conf, "--work-path", dir}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+dir, "GITEA_WORK_DIR="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("gitea %s: %w: %s", args[0], err, tail(string(out), 5))
		}
		return string(out), nil
	}
	if _, err := run("migrate"); err != nil {
		_ = s.Stop()
		return nil, err
	}
	if _, err := run("admin", "user", "create", "--admin", "--username", Admin, "--password", s.Password,
		"--email", Admin+"@example.com", "--must-change-password=false"); err != nil {
		_ = s.Stop()
		return nil, err
	}
	out, err := run("admin", "user", "generate-access-token", "--username", Admin, "--token-name", "tests", "--scopes", "all", "--raw")
	if err != nil {
		_ = s.Stop()
		return nil, err
	}
	s.Token = strings.TrimSpace(tail(out, 1))
	s.proc, err = localcluster.StartProcess("gitea", filepath.Join(dir, "gitea.log"), bin, "--config", conf, "--work-path", dir, "web")
	if err != nil {
		_ = s.Stop()
		return nil, err
	}
	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := s.proc.WaitFor(waitCtx, func(ctx context.Context) error { return s.Do(ctx, http.MethodGet, "/version", nil, nil) }); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// config is Gitea's app.ini: everything under dir, no mail, no SSH, no
// background jobs a test does not need.
func config(dir, static string, port int) string {
	return fmt.Sprintf(`I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true
APP_NAME = graphcd tests
RUN_MODE = prod
WORK_PATH = %[1]s

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[3]d
ROOT_URL = http://127.0.0.1:%[3]d/
STATIC_ROOT_PATH = %[2]s
APP_DATA_PATH = %[1]s/data
DISABLE_SSH = true
OFFLINE_MODE = true
LFS_START_SERVER = false

[database]
DB_TYPE = sqlite3
PATH = %[1]s/data/gitea.db

[repository]
ROOT = %[1]s/repositories
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = %[4]s
INTERNAL_TOKEN = %[5]s

[service]
DISABLE_REGISTRATION = true

[webhook]
ALLOWED_HOST_LIST = loopback

[indexer]
REPO_INDEXER_ENABLED = false

[cron]
ENABLED = false

[log]
MODE = console
LEVEL = warn
`, dir, static, port, randomHex(16), randomHex(32))
}

// Do calls the API at /api/v1+path with the admin's token, sending in as
// JSON (when not nil) and decoding the answer into out (when not nil).
func (s *Server) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+"/api/v1"+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "token "+s.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, tail(string(data), 3))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// CreateOrg creates an organisation.
func (s *Server) CreateOrg(ctx context.Context, name string) error {
	return s.Do(ctx, http.MethodPost, "/orgs", map[string]any{"username": name}, nil)
}

// CreateRepo creates owner/name with a first commit on main and returns
// its HTTP clone URL.
func (s *Server) CreateRepo(ctx context.Context, owner, name string) (string, error) {
	var repo struct {
		CloneURL string `json:"clone_url"`
	}
	err := s.Do(ctx, http.MethodPost, "/orgs/"+owner+"/repos", map[string]any{"name": name, "auto_init": true, "default_branch": "main"}, &repo)
	return repo.CloneURL, err
}

// CommitFile writes path with content on branch of owner/repo, creating
// branch from base when base is not "", and returns the new commit.
func (s *Server) CommitFile(ctx context.Context, owner, repo, branch, base, path, content string) (string, error) {
	in := map[string]any{"content": base64.StdEncoding.EncodeToString([]byte(content)), "message": "write " + path, "branch": branch}
	if base != "" {
		in["branch"], in["new_branch"] = base, branch
	}
	var out struct {
		Commit struct {
			SHA string `json:"sha"`
		} `json:"commit"`
	}
	err := s.Do(ctx, http.MethodPost, "/repos/"+owner+"/"+repo+"/contents/"+path, in, &out)
	return out.Commit.SHA, err
}

// OpenPullRequest opens a pull request from head into base and returns
// its number.
func (s *Server) OpenPullRequest(ctx context.Context, owner, repo, head, base, title string) (int64, error) {
	var pr struct {
		Number int64 `json:"number"`
	}
	err := s.Do(ctx, http.MethodPost, "/repos/"+owner+"/"+repo+"/pulls", map[string]any{"head": head, "base": base, "title": title}, &pr)
	return pr.Number, err
}

// ClosePullRequest closes pull request number without merging it.
func (s *Server) ClosePullRequest(ctx context.Context, owner, repo string, number int64) error {
	return s.Do(ctx, http.MethodPatch, fmt.Sprintf("/repos/%s/%s/pulls/%d", owner, repo, number), map[string]any{"state": "closed"}, nil)
}

// Stop ends the server and removes its directory.
func (s *Server) Stop() error {
	if s.proc != nil {
		s.proc.Stop(10 * time.Second)
	}
	var err error
	if s.proc != nil && localcluster.Alive(s.proc.PID()) {
		err = fmt.Errorf("gitea (pid %d) still running after stop", s.proc.PID())
	}
	return errors.Join(err, os.RemoveAll(s.dir))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
