//go:build integration

package plugin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
)

// startServer runs Serve for testdata/<fixture>.yaml on a socket in
// socketDir until the test ends, then checks it stopped cleanly and
// removed its socket.
func startServer(t *testing.T, socketDir, fixture string, opts ServerOptions) string {
	t.Helper()
	cfg, err := LoadConfig(filepath.Join("testdata", fixture+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	opts.Config = filepath.Join("testdata", fixture+".yaml")
	opts.SocketDir = socketDir
	if opts.WorkDir == "" {
		opts.WorkDir = t.TempDir()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, opts) }()
	sock := filepath.Join(socketDir, cfg.Name()+".sock")
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve() error = %v", err)
		}
		if _, err := os.Lstat(sock); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("socket %s left behind: %v", sock, err)
		}
		if entries, _ := os.ReadDir(opts.WorkDir); len(entries) > 0 {
			t.Errorf("work directories left behind: %v", entries)
		}
	})
	waitFor(t, "socket "+sock, func() bool {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("Serve() returned early: %v", err)
		default:
		}
		c, err := net.Dial("unix", sock)
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	})
	return cfg.Name()
}

// waitFor polls cond until it holds; the bound only keeps a broken test
// from hanging, it is no performance assertion.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("gave up waiting for %s", what)
}

func testRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	writeFiles(t, repo, map[string]string{
		"apps/web/marker.txt":            "from the app dir",
		"apps/web/default.txt":           "dflt",
		"apps/cue/main.cue":              "package main",
		"apps/chart/charts/x/Chart.yaml": "name: x",
		"apps/none/README":               "nothing to claim",
		".git/HEAD":                      "ref: refs/heads/main",
	})
	return repo
}

func configMaps(t *testing.T, objs []*unstructured.Unstructured) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for _, o := range objs {
		data, _, err := unstructured.NestedStringMap(o.Object, "data")
		if err != nil {
			t.Fatalf("%s: %v", o.GetName(), err)
		}
		out[o.GetName()] = data
	}
	return out
}

func TestRenderEnvironment(t *testing.T) {
	t.Setenv("SECRET", "hunter2")
	socketDir := t.TempDir()
	name := startServer(t, socketDir, "env", ServerOptions{})
	if name != "env-v1.0" {
		t.Fatalf("plugin name = %q, want env-v1.0", name)
	}
	req := render.Request{
		RepoRoot: testRepo(t),
		Path:     "apps/web",
		Source: v1alpha1.ApplicationSource{
			RepoURL:        "https://git.example.com/repo.git",
			Path:           "apps/web",
			TargetRevision: "main",
			Plugin: &v1alpha1.ApplicationSourcePlugin{
				Name: name,
				Env: []v1alpha1.EnvEntry{
					{Name: "FOO", Value: "bar"},
					{Name: "PATH", Value: "/evil"},
					{Name: "REF", Value: "rev-$ARGOCD_APP_REVISION_SHORT"},
				},
				Parameters: []v1alpha1.ApplicationSourcePluginParameter{
					{Name: "mode", String: ptr("fast")},
					{Name: "files", Array: []string{"values-dev.yaml"}},
				},
			},
		},
		AppName:     "guestbook",
		Revision:    "0123456789abcdef",
		Namespace:   "prod",
		KubeVersion: "v1.37.2",
		APIVersions: []string{"apps/v1", "v1"},
	}
	objs, err := Render(t.Context(), req, ClientOptions{SocketDir: socketDir})
	if err != nil {
		t.Fatalf("Render() error = %v", err)
	}
	cms := configMaps(t, objs)
	want := map[string]string{
		"init":       "init saw bar",
		"marker":     "from the app dir",
		"foo":        "bar",
		"graphcdFoo": "bar",
		"ref":        "rev-0123456",
		"kube":       "1.37.2",
		"apis":       "apps/v1,v1",
		"mode":       "fast",
		"file0":      "values-dev.yaml",
		"revision":   "0123456789abcdef",
		"sourcePath": "apps/web",
		"repoURL":    "https://git.example.com/repo.git",
	}
	if diff := cmp.Diff(cms["guestbook"], want); diff != "" {
		t.Errorf("environment seen by generate (-got +want):\n%s", diff)
	}
	if ns := objs[0].GetNamespace(); ns != "prod" {
		t.Errorf("namespace = %q, want prod", ns)
	}

	// Every variable is one we put there; nothing of the test process
	// leaks, and the user's PATH only arrives prefixed.
	allowed := append(slices.Clone(render.BuildEnvNames), "PATH", "HOME", "TMPDIR", "PWD", "ARGOCD_APP_PARAMETERS",
		"ARGOCD_ENV_FOO", "ARGOCD_ENV_PATH", "ARGOCD_ENV_REF", "GRAPHCD_ENV_FOO", "GRAPHCD_ENV_PATH", "GRAPHCD_ENV_REF",
		"PARAM_MODE", "PARAM_FILES_0")
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(cms["printenv"]["env"]), "\n") {
		k, v, _ := strings.Cut(line, "=")
		env[k] = v
		if !slices.Contains(allowed, k) {
			t.Errorf("plugin sees unexpected variable %s", line)
		}
		if strings.Contains(v, "hunter2") {
			t.Errorf("plugin sees the server's SECRET in %s", k)
		}
	}
	if env["PATH"] != os.Getenv("PATH") || env["ARGOCD_ENV_PATH"] != "/evil" {
		t.Errorf("PATH = %q, ARGOCD_ENV_PATH = %q", env["PATH"], env["ARGOCD_ENV_PATH"])
	}
	if env["HOME"] == "" || env["HOME"] == os.Getenv("HOME") {
		t.Errorf("HOME = %q, want a directory of the call", env["HOME"])
	}
}

func TestRenderDiscovery(t *testing.T) {
	socketDir := t.TempDir()
	for _, f := range []string{"by-file", "by-glob", "by-command", "env"} {
		startServer(t, socketDir, f, ServerOptions{})
	}
	repo := testRepo(t)
	markerRepo := testRepo(t)
	writeFiles(t, markerRepo, map[string]string{"deep/down/env.marker": ""})

	tests := []struct {
		name, repo, path string
		want             string // plugin, "" for none
	}{
		{"fileName", repo, "apps/cue", "by-file"},
		{"find.glob", repo, "apps/chart", "by-glob"},
		{"find.command", markerRepo, "apps/none", "by-command"},
		{"nothing claims", repo, "apps/none", ""},
		{"plugins without discovery are never picked", repo, "apps/web", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := Discover(t.Context(), socketDir, tt.repo, tt.path)
			if err != nil {
				t.Fatalf("Discover() error = %v", err)
			}
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("Discover() = %q, %v; want %q", got, ok, tt.want)
			}

			req := render.Request{RepoRoot: tt.repo, Path: tt.path, Source: v1alpha1.ApplicationSource{Plugin: &v1alpha1.ApplicationSourcePlugin{}}}
			objs, err := Render(t.Context(), req, ClientOptions{SocketDir: socketDir})
			if tt.want == "" {
				if !errors.Is(err, ErrNoPlugin) {
					t.Fatalf("Render() error = %v, want ErrNoPlugin", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Render() error = %v", err)
			}
			if len(objs) != 1 || objs[0].GetName() != tt.want {
				t.Errorf("Render() rendered %v, want the ConfigMap of %s", objs, tt.want)
			}
		})
	}
}

func TestRenderNamedPlugin(t *testing.T) {
	socketDir := t.TempDir()
	startServer(t, socketDir, "by-file", ServerOptions{})
	repo := testRepo(t)
	tests := []struct {
		name, plugin, path string
		wantErr            error
	}{
		{"claimed", "by-file", "apps/cue", nil},
		{"named but its discovery does not claim the app", "by-file", "apps/none", ErrNoPlugin},
		{"no such plugin", "nope", "apps/cue", ErrNoPlugin},
		{"name that is a path", "../by-file", "apps/cue", ErrNoPlugin},
		{"app path outside the repository", "by-file", "../..", render.ErrOutsideRoot},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := render.Request{RepoRoot: repo, Path: tt.path, Source: v1alpha1.ApplicationSource{
				Plugin: &v1alpha1.ApplicationSourcePlugin{Name: tt.plugin},
			}}
			_, err := Render(t.Context(), req, ClientOptions{SocketDir: socketDir})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Render() error = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestRenderTimeoutKillsProcessGroup(t *testing.T) {
	// The plugin must have started its processes before the timeout for
	// the test to say anything; on a loaded machine it may not within the
	// first timeout, so each try doubles it.
	for timeout := 500 * time.Millisecond; timeout <= 16*time.Second; timeout *= 2 {
		socketDir := t.TempDir()
		startServer(t, socketDir, "slow", ServerOptions{Timeout: timeout})
		pidFile := filepath.Join(t.TempDir(), "pids")
		req := render.Request{RepoRoot: testRepo(t), Path: "apps/web", Source: v1alpha1.ApplicationSource{
			Plugin: &v1alpha1.ApplicationSourcePlugin{Name: "slow", Env: []v1alpha1.EnvEntry{{Name: "PIDFILE", Value: pidFile}}},
		}}
		_, err := Render(t.Context(), req, ClientOptions{SocketDir: socketDir})
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("Render() error = %v, want ErrTimeout", err)
		}
		if _, err := os.Stat(pidFile); err != nil {
			t.Logf("the plugin had not started its processes within %s; trying a longer timeout", timeout)
			continue
		}
		assertGone(t, pidFile)
		return
	}
	t.Fatal("the plugin never started its processes before the render timed out")
}

func TestRenderCallerGoneKillsProcessGroup(t *testing.T) {
	socketDir := t.TempDir()
	startServer(t, socketDir, "slow", ServerOptions{})
	pidFile := filepath.Join(t.TempDir(), "pids")
	req := render.Request{RepoRoot: testRepo(t), Path: "apps/web", Source: v1alpha1.ApplicationSource{
		Plugin: &v1alpha1.ApplicationSourcePlugin{Name: "slow", Env: []v1alpha1.EnvEntry{{Name: "PIDFILE", Value: pidFile}}},
	}}
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := Render(ctx, req, ClientOptions{SocketDir: socketDir})
		errc <- err
	}()
	waitFor(t, "the plugin to start", func() bool { _, err := os.Stat(pidFile); return err == nil })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Render() error = %v, want cancellation", err)
	}
	assertGone(t, pidFile)
}

// assertGone waits until every process listed in pidFile has exited.
func assertGone(t *testing.T, pidFile string) {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the plugin never wrote its pids: %v", err)
	}
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, fmt.Sprintf("process %d to die", pid), func() bool {
			if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
				return true
			}
			// A killed process its reaper has not collected yet is gone too.
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if err != nil {
				return true
			}
			fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
			return len(fields) > 0 && fields[0] == "Z"
		})
	}
}

func TestRenderOutputCapped(t *testing.T) {
	socketDir := t.TempDir()
	startServer(t, socketDir, "huge", ServerOptions{})
	req := render.Request{
		RepoRoot: testRepo(t), Path: "apps/web",
		Source: v1alpha1.ApplicationSource{Plugin: &v1alpha1.ApplicationSourcePlugin{Name: "huge"}},
		Limits: render.Limits{MaxCombinedSize: 1 << 20},
	}
	_, err := Render(t.Context(), req, ClientOptions{SocketDir: socketDir})
	if !errors.Is(err, render.ErrTooLarge) {
		t.Fatalf("Render() error = %v, want ErrTooLarge", err)
	}

	// The server's own cap applies when the client asks for more.
	small := t.TempDir()
	startServer(t, small, "huge", ServerOptions{MaxOutputSize: 64 << 10})
	req.Limits = render.Limits{}
	if _, err := Render(t.Context(), req, ClientOptions{SocketDir: small}); !errors.Is(err, render.ErrTooLarge) {
		t.Fatalf("Render() error = %v, want ErrTooLarge", err)
	}
}

func TestRenderCommandFailure(t *testing.T) {
	socketDir := t.TempDir()
	workDir := t.TempDir()
	startServer(t, socketDir, "fail", ServerOptions{WorkDir: workDir})
	req := render.Request{RepoRoot: testRepo(t), Path: "apps/web", Source: v1alpha1.ApplicationSource{
		Plugin: &v1alpha1.ApplicationSourcePlugin{Name: "fail"},
	}}
	_, err := Render(t.Context(), req, ClientOptions{SocketDir: socketDir})
	if !errors.Is(err, ErrCommandFailed) {
		t.Fatalf("Render() error = %v, want ErrCommandFailed", err)
	}
	msg := err.Error()
	for _, want := range []string{"exit status 3", "boom: bad values in ./apps/web/values.yaml", "2000"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "first line, cut off") {
		t.Errorf("error keeps more than the stderr tail: %q", msg)
	}
	if strings.Contains(msg, workDir) {
		t.Errorf("error names the server's work directory: %q", msg)
	}
	if len(msg) > stderrTail+512 {
		t.Errorf("error is %d bytes long, want about %d", len(msg), stderrTail)
	}
}

func TestParameters(t *testing.T) {
	socketDir := t.TempDir()
	startServer(t, socketDir, "params", ServerOptions{})
	req := render.Request{RepoRoot: testRepo(t), Path: "apps/web", Source: v1alpha1.ApplicationSource{
		Plugin: &v1alpha1.ApplicationSourcePlugin{Name: "params", Env: []v1alpha1.EnvEntry{{Name: "FOO", Value: "bar"}}},
	}}
	got, err := Parameters(t.Context(), req, ClientOptions{SocketDir: socketDir})
	if err != nil {
		t.Fatalf("Parameters() error = %v", err)
	}
	want := []ParameterAnnouncement{
		{Name: "mode", Title: "Rendering mode", Required: true, String: "fast"},
		{Name: "files", CollectionType: "array", Array: []string{"values.yaml"}},
		{Name: "from-app", String: "dflt", Map: map[string]string{"foo": "bar"}, CollectionType: "map"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("Parameters() (-got +want):\n%s", diff)
	}
}

func TestRenderConcurrent(t *testing.T) {
	socketDir := t.TempDir()
	name := startServer(t, socketDir, "env", ServerOptions{})
	repo := testRepo(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			app := fmt.Sprintf("app-%d", i)
			req := render.Request{RepoRoot: repo, Path: "apps/web", AppName: app, Source: v1alpha1.ApplicationSource{
				Plugin: &v1alpha1.ApplicationSourcePlugin{Name: name, Env: []v1alpha1.EnvEntry{{Name: "FOO", Value: app}}},
			}}
			objs, err := Render(t.Context(), req, ClientOptions{SocketDir: socketDir})
			switch {
			case err != nil:
				errs[i] = err
			case objs[0].GetName() != app:
				errs[i] = fmt.Errorf("rendered %s, want %s", objs[0].GetName(), app)
			default:
				if got, _, _ := unstructured.NestedString(objs[0].Object, "data", "init"); got != "init saw "+app {
					errs[i] = fmt.Errorf("%s: init saw %q: calls share a directory", app, got)
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func TestServeSocket(t *testing.T) {
	socketDir := t.TempDir()
	// A stale socket of an earlier run is replaced.
	stale := filepath.Join(socketDir, "by-file.sock")
	ln, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	_ = ln.Close()

	startServer(t, socketDir, "by-file", ServerOptions{})
	fi, err := os.Lstat(stale)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("socket mode = %v, want 0600", perm)
	}
	names, err := Plugins(socketDir)
	if err != nil || !slices.Equal(names, []string{"by-file"}) {
		t.Errorf("Plugins() = %v, %v; want [by-file]", names, err)
	}

	// A second server for the same plugin refuses to take the socket over.
	err = Serve(t.Context(), ServerOptions{Config: "testdata/by-file.yaml", SocketDir: socketDir})
	if err == nil || !strings.Contains(err.Error(), "another plugin server") {
		t.Errorf("second Serve() error = %v, want a refusal", err)
	}
	// So does one whose socket path is taken by a regular file.
	other := t.TempDir()
	writeFiles(t, other, map[string]string{"by-file.sock": "not a socket"})
	err = Serve(t.Context(), ServerOptions{Config: "testdata/by-file.yaml", SocketDir: other})
	if err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("Serve() over a file error = %v, want a refusal", err)
	}
}

// TestServeRejectsHostileArchive sends an archive no client of ours would
// write, straight over the socket.
func TestServeRejectsHostileArchive(t *testing.T) {
	socketDir := t.TempDir()
	workDir := t.TempDir()
	startServer(t, socketDir, "by-file", ServerOptions{WorkDir: workDir})
	sock := filepath.Join(socketDir, "by-file.sock")
	for _, tt := range []struct {
		name    string
		entries []entry
	}{
		{"dot-dot", []entry{file("../../escaped", "x")}},
		{"link out", []entry{symlink("l", "../../.."), file("l/escaped", "x")}},
		{"device", []entry{typed("dev", 0x33)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := postArchive(t, sock, archive(t, tt.entries...))
			var re *remoteError
			if !errors.As(err, &re) || !strings.Contains(re.message, "unsafe repository archive") {
				t.Fatalf("post error = %v, want an unsafe-archive refusal", err)
			}
			if _, err := os.Stat(filepath.Join(workDir, "escaped")); err == nil {
				t.Error("the archive wrote outside its directory")
			}
		})
	}
}
