//go:build integration

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/cli"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// cliResult is one run of the graphcd CLI.
type cliResult struct {
	code           int
	stdout, stderr string
}

// runCLIBinary runs the real binary as a client of s with the CLI
// configuration under home and env on top.
func (s *authServer) runCLIBinary(t *testing.T, home, stdin string, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), s.bin, args...)
	cmd.Env = append(append(binaryEnv(), "XDG_CONFIG_HOME="+home), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := cliResult{stdout: out.String(), stderr: errOut.String()}
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("graphcd %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// The CLI against the real server with its controller: log in with the
// admin's password, create an app of a Git repository served here, sync
// it, wait for it over the subscription, diff, history, rollback and
// delete it, with -o json parsed and the exit codes checked.
func TestCLIAppLifecycle(t *testing.T) {
	s := startAuthServer(t, "--controller=true")
	home := t.TempDir()
	run := func(stdin string, args ...string) cliResult {
		t.Helper()
		return s.runCLIBinary(t, home, stdin, nil, args...)
	}
	expect := func(r cliResult, code int, args ...string) {
		t.Helper()
		if r.code != code {
			t.Fatalf("graphcd %s = exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
		}
	}
	runOK := func(args ...string) string {
		t.Helper()
		r := run("", args...)
		expect(r, 0, args...)
		return r.stdout
	}

	secret, err := cluster.Client.CoreV1().Secrets(s.namespace).Get(t.Context(), "graphcd-initial-admin-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("initial admin secret: %v", err)
	}
	password := string(secret.Data["password"])

	// Log in: a wrong password is refused, the right one stores a context.
	login := []string{"login", s.base, "--username", "admin", "--password-stdin"}
	if r := run("not-the-password\n", login...); r.code != cli.ExitError || strings.Contains(r.stderr, "not-the-password") {
		t.Fatalf("login with a wrong password = %d %q, want exit 2 without the password", r.code, r.stderr)
	}
	r := run(password+"\n", login...)
	expect(r, 0, login...)
	if strings.Contains(r.stdout+r.stderr, password) {
		t.Error("login printed the password")
	}
	path := filepath.Join(home, "graphcd", "config")
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v, mode %v; want 0600", err, fi)
	}
	cfg, err := client.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	cur := cfg.Current()
	if cur == nil || cur.Server != s.base || cur.User != "admin" || cur.Token == "" {
		t.Fatalf("current context after login: %+v", cur)
	}

	// An app of a Git repository served by the test.
	dir, sha := reposervertest.CommitFiles(t, map[string]string{
		"app/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n",
	})
	repo := serveGit(t, dir)
	dest := cluster.Namespace(t)
	manifest := filepath.Join(t.TempDir(), "app.yaml")
	if err := os.WriteFile(manifest, fmt.Appendf(nil, `apiVersion: graphcd.io/v1alpha1
kind: Application
metadata:
  name: cli-app
spec:
  project: default
  source: {repoURL: %q, path: app, targetRevision: main}
  destination: {name: %s, namespace: %s}
`, repo, controller.InClusterName, dest), 0o600); err != nil {
		t.Fatal(err)
	}
	runOK("app", "create", "-f", manifest)
	if r := run("", "app", "create", "-f", manifest); r.code != cli.ExitError {
		t.Errorf("creating cli-app twice = %d %q, want exit 2", r.code, r.stderr)
	}
	runOK("app", "create", "-f", manifest, "--upsert")
	// A manifest for another namespace (Argo CD's, say) is refused: the
	// server and its controller watch only their own.
	other := cluster.Namespace(t)
	elsewhere := filepath.Join(t.TempDir(), "elsewhere.yaml")
	if err := os.WriteFile(elsewhere, fmt.Appendf(nil, `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: cli-elsewhere, namespace: %s}
spec:
  project: default
  source: {repoURL: %q, path: app}
  destination: {name: %s, namespace: %s}
`, other, repo, controller.InClusterName, dest), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := run("", "app", "create", "-f", elsewhere); r.code != cli.ExitError || !strings.Contains(r.stderr, fmt.Sprintf("metadata.namespace %q", other)) {
		t.Errorf("creating an app in namespace %s = %d %q, want exit 2 naming the namespace", other, r.code, r.stderr)
	}

	var list []struct {
		Name   string
		Status struct{ Sync struct{ Status string } }
	}
	if err := json.Unmarshal([]byte(runOK("app", "list", "-o", "json")), &list); err != nil || len(list) != 1 || list[0].Name != "cli-app" {
		t.Fatalf("app list -o json = %+v, %v", list, err)
	}
	if got := runOK("app", "list", "-o", "name"); got != "cli-app\n" {
		t.Errorf("app list -o name = %q", got)
	}

	runOK("app", "set", "cli-app", "--revision", "v1.0.0")
	var spec struct {
		Spec struct {
			Source struct{ TargetRevision string }
		}
	}
	if err := json.Unmarshal([]byte(runOK("app", "get", "cli-app", "-o", "json")), &spec); err != nil || spec.Spec.Source.TargetRevision != "v1.0.0" {
		t.Errorf("after app set --revision v1.0.0 the spec is %+v, %v", spec, err)
	}

	// Never synced: waiting for Synced times out with exit code 1.
	if r := run("", "app", "wait", "cli-app", "--sync", "--timeout", "2s"); r.code != cli.ExitNotAsExpected || !strings.Contains(r.stderr, "timed out") {
		t.Errorf("app wait --sync before any sync = %d %q, want exit 1", r.code, r.stderr)
	}

	type appJSON struct {
		Name   string
		Status struct {
			Sync           struct{ Status, Revision string }
			Health         struct{ Status string }
			OperationState *struct{ Phase string }
			History        []struct {
				ID       int `json:"id"`
				Revision string
			}
		}
	}
	parseApp := func(out string) appJSON {
		t.Helper()
		var a appJSON
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			t.Fatalf("parse %q: %v", out, err)
		}
		return a
	}
	synced := parseApp(runOK("app", "sync", "cli-app", "-o", "json"))
	if synced.Status.OperationState == nil || synced.Status.OperationState.Phase != "Succeeded" {
		t.Fatalf("app sync -o json = %+v", synced)
	}
	waited := parseApp(runOK("app", "wait", "cli-app", "--sync", "--health", "-o", "json"))
	if waited.Status.Sync.Status != "Synced" || waited.Status.Health.Status != "Healthy" || waited.Status.Sync.Revision != sha {
		t.Errorf("app wait -o json = %+v, want Synced and Healthy at %s", waited, sha)
	}
	cm, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "settings", metav1.GetOptions{})
	if err != nil || cm.Data["mode"] != "fast" {
		t.Fatalf("the synced ConfigMap: %v %v", cm, err)
	}
	if r := run("", "app", "diff", "cli-app"); r.code != 0 {
		t.Errorf("app diff of a synced app = %d %q %q, want 0", r.code, r.stdout, r.stderr)
	}
	if got := runOK("app", "manifests", "cli-app"); !strings.Contains(got, "name: settings") {
		t.Errorf("app manifests = %q, want the ConfigMap", got)
	}

	// Drift: diff exits 1 and shows the change; a second sync repairs it.
	cm.Data["mode"] = "slow"
	if _, err := cluster.Client.CoreV1().ConfigMaps(dest).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "app diff to see the drift", func() (bool, string) {
		r := run("", "app", "diff", "cli-app")
		return r.code == cli.ExitNotAsExpected && strings.Contains(r.stdout, "slow"), fmt.Sprintf("%+v", r)
	})
	runOK("app", "sync", "cli-app")
	runOK("app", "wait", "cli-app", "--sync", "--operation")
	if r := run("", "app", "diff", "cli-app"); r.code != 0 {
		t.Errorf("app diff after the second sync = %d %q, want 0", r.code, r.stdout)
	}

	var history []struct {
		ID       int `json:"id"`
		Revision string
	}
	if err := json.Unmarshal([]byte(runOK("app", "history", "cli-app", "-o", "json")), &history); err != nil || len(history) != 2 {
		t.Fatalf("app history -o json = %+v, %v; want two deployments", history, err)
	}
	rolled := parseApp(runOK("app", "rollback", "cli-app", strconv.Itoa(history[0].ID), "-o", "json"))
	if rolled.Status.OperationState == nil || rolled.Status.OperationState.Phase != "Succeeded" || len(rolled.Status.History) != 3 {
		t.Errorf("app rollback -o json = %+v, want a third deployment", rolled)
	}

	// Day-2 commands on one live object: a patch (the diff shows it
	// after a refresh), a bad patch type refused as usage, a delete.
	runOK("app", "patch-resource", "cli-app", "--kind", "ConfigMap", "--namespace", dest, "--resource-name", "settings",
		"--patch", `{"data":{"mode":"patched"}}`, "--patch-type", "application/merge-patch+json")
	if cm, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "settings", metav1.GetOptions{}); err != nil || cm.Data["mode"] != "patched" {
		t.Fatalf("after app patch-resource: %v %v", cm, err)
	}
	if r := run("", "app", "patch-resource", "cli-app", "--kind", "ConfigMap", "--resource-name", "settings", "--patch", "{}", "--patch-type", "yaml"); r.code != command.ExitUsage {
		t.Errorf("app patch-resource --patch-type yaml = %d %q, want a usage error", r.code, r.stderr)
	}
	if got := runOK("app", "refresh", "cli-app"); got != "application \"cli-app\" refreshing\n" {
		t.Errorf("app refresh = %q", got)
	}
	poll(t, "app diff to see the patch", func() (bool, string) {
		r := run("", "app", "diff", "cli-app")
		return r.code == cli.ExitNotAsExpected && strings.Contains(r.stdout, "patched"), fmt.Sprintf("%+v", r)
	})
	runOK("app", "delete-resource", "cli-app", "--kind", "ConfigMap", "--namespace", dest, "--resource-name", "settings")
	if _, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after app delete-resource: %v, want NotFound", err)
	}

	// CI: a server and a token from the environment, no configuration.
	ci := s.runCLIBinary(t, t.TempDir(), "", []string{"GRAPHCD_SERVER=" + s.base, "GRAPHCD_AUTH_TOKEN=" + cur.Token}, "app", "list", "-o", "name")
	if ci.code != 0 || ci.stdout != "cli-app\n" {
		t.Errorf("app list with GRAPHCD_SERVER and GRAPHCD_AUTH_TOKEN = %+v", ci)
	}

	// Errors exit 2 with the API's code.
	if r := run("", "app", "get", "no-such-app"); r.code != cli.ExitError || !strings.Contains(r.stderr, client.CodeNotFound) {
		t.Errorf("app get of an unknown app = %d %q, want exit 2 and NOT_FOUND", r.code, r.stderr)
	}
	if r := run("", "app", "sync", "no-such-app"); r.code != cli.ExitError || !strings.Contains(r.stderr, client.CodeNotFound) {
		t.Errorf("app sync of an unknown app = %d %q, want exit 2 and NOT_FOUND", r.code, r.stderr)
	}

	// Background: this cluster runs no garbage collector to finish a
	// foreground deletion of the ConfigMap.
	runOK("app", "delete", "cli-app", "--propagation-policy", "background", "--wait")
	if r := run("", "app", "get", "cli-app"); r.code != cli.ExitError {
		t.Errorf("app get after delete = %d %q, want exit 2", r.code, r.stdout)
	}
	poll(t, "the cascading delete to remove the ConfigMap", func() (bool, string) {
		_, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "settings", metav1.GetOptions{})
		return err != nil, fmt.Sprint(err)
	})

	// Logout revokes the session and forgets its token.
	runOK("logout")
	if cfg, err := client.LoadConfig(path); err != nil || cfg.Current() == nil || cfg.Current().Token != "" {
		t.Errorf("config after logout: %+v %v", cfg, err)
	}
	revoked := s.runCLIBinary(t, t.TempDir(), "", []string{"GRAPHCD_SERVER=" + s.base, "GRAPHCD_AUTH_TOKEN=" + cur.Token}, "app", "list")
	if revoked.code != cli.ExitError || !strings.Contains(revoked.stderr, client.CodeUnauthenticated) || strings.Contains(revoked.stderr, cur.Token) {
		t.Errorf("app list with the logged-out token = %d %q, want exit 2 UNAUTHENTICATED without the token", revoked.code, revoked.stderr)
	}
}

// graphcd login --sso: the CLI prints the embedded Dex's login URL, a
// browser (here an HTTP client) logs in there and is sent back to the
// CLI's loopback port, and the CLI keeps the session it trades the ID
// token for.
func TestCLILoginSSO(t *testing.T) {
	s := startAuthServer(t)
	home := t.TempDir()
	cmd := exec.CommandContext(t.Context(), s.bin, "login", s.base, "--sso")
	cmd.Env = append(binaryEnv(), "XDG_CONFIG_HOME="+home, "DISPLAY=", "WAYLAND_DISPLAY=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	var loginURL string
	var printed strings.Builder
	for loginURL == "" && lines.Scan() {
		printed.WriteString(lines.Text() + "\n")
		if u := strings.TrimSpace(lines.Text()); strings.HasPrefix(u, s.base+"/api/dex/") {
			loginURL = u
		}
	}
	if loginURL == "" {
		_ = cmd.Wait()
		t.Fatalf("login --sso printed no login URL:\n%s", printed.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()

	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, loginURL, nil)
	code, page := do(t, browser, req)
	m := dexForm.FindStringSubmatch(page)
	if code != http.StatusOK || m == nil {
		t.Fatalf("the login URL answered %d without Dex's form: %.400s", code, page)
	}
	action, err := url.Parse(loginURL)
	if err != nil {
		t.Fatal(err)
	}
	if action, err = action.Parse(html.UnescapeString(m[1])); err != nil {
		t.Fatal(err)
	}
	form := url.Values{"login": {ssoEmail}, "password": {ssoPassword}}
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodPost, action.String(), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if code, body := do(t, browser, req); code != http.StatusOK || !strings.Contains(body, "Logged in") {
		t.Errorf("the redirect to the CLI ended with %d %q", code, body)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("login --sso: %v\n%s", err, out.String())
	}
	cfg, err := client.LoadConfig(filepath.Join(home, "graphcd", "config"))
	if err != nil {
		t.Fatal(err)
	}
	cur := cfg.Current()
	if cur == nil || cur.Server != s.base || cur.Token == "" || cur.User == "" || cur.User == "anonymous" {
		t.Fatalf("context after login --sso: %+v", cur)
	}
	// The session is alice's: she may list apps (none of team-proj exist).
	if r := s.runCLIBinary(t, home, "", nil, "app", "list", "-o", "json"); r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("app list as the SSO user = %+v", r)
	}
}

// app list fetches every page: more apps than one page (500) holds, with
// a filter applied on the server.
func TestCLIListPages(t *testing.T) {
	s := startAuthServer(t)
	apps := kubeClient(t)
	const n = cli.ListPageSize + 3
	want := make([]string, 0, n)
	for i := range n {
		name := fmt.Sprintf("page-%03d", i)
		project := "default"
		if i%100 == 0 {
			project = "other"
		}
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.namespace},
			Spec: v1alpha1.ApplicationSpec{
				Project:     project,
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: name},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: name},
			},
		}
		if err := apps.Create(t.Context(), app); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	secret, err := cluster.Client.CoreV1().Secrets(s.namespace).Get(t.Context(), "graphcd-initial-admin-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if r := s.runCLIBinary(t, home, string(secret.Data["password"]), nil, "login", s.base, "--username", "admin", "--password-stdin"); r.code != 0 {
		t.Fatalf("login = %+v", r)
	}
	poll(t, "app list to return every app", func() (bool, string) {
		r := s.runCLIBinary(t, home, "", nil, "app", "list", "-o", "name")
		got := strings.Fields(r.stdout)
		return r.code == 0 && slices.Equal(got, want), fmt.Sprintf("exit %d, %d names, stderr %q", r.code, len(got), r.stderr)
	})
	r := s.runCLIBinary(t, home, "", nil, "app", "list", "--project", "other", "-o", "json")
	var other []struct{ Name, Project string }
	if err := json.Unmarshal([]byte(r.stdout), &other); err != nil || len(other) != 6 || other[0].Name != "page-000" || other[5].Project != "other" {
		t.Errorf("app list --project other -o json = %+v, %v (%q)", other, err, r.stderr)
	}
}

// The admin commands against the real server: a project and a role
// token used by `app list` until it is deleted; a repository and a
// credential template; a cluster with a bearer token from a file; the
// admin's password changed and used; an API token of an apiKey account
// used until it is deleted; app logs refusing a Pod that is not the app's.
// Secrets never show in the output.
func TestCLIAdmin(t *testing.T) {
	s := startAuthServer(t)
	home := t.TempDir()
	run := func(stdin string, args ...string) cliResult {
		t.Helper()
		return s.runCLIBinary(t, home, stdin, nil, args...)
	}
	as := func(token string, args ...string) cliResult {
		t.Helper()
		return s.runCLIBinary(t, t.TempDir(), "", []string{"GRAPHCD_SERVER=" + s.base, "GRAPHCD_AUTH_TOKEN=" + token}, args...)
	}
	expect := func(r cliResult, code int, args ...string) {
		t.Helper()
		if r.code != code {
			t.Fatalf("graphcd %s = exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
		}
	}
	runOK := func(stdin string, args ...string) string {
		t.Helper()
		r := run(stdin, args...)
		expect(r, 0, args...)
		return r.stdout
	}
	names := func(args ...string) []string {
		t.Helper()
		return strings.Fields(runOK("", append(args, "-o", "name")...))
	}
	unauthenticated := func(r cliResult, secret string) bool {
		return r.code == cli.ExitError && strings.Contains(r.stderr, client.CodeUnauthenticated) && !strings.Contains(r.stderr+r.stdout, secret)
	}

	secret, err := cluster.Client.CoreV1().Secrets(s.namespace).Get(t.Context(), "graphcd-initial-admin-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	password := string(secret.Data["password"])
	runOK(password+"\n", "login", s.base, "--username", "admin", "--password-stdin")

	// Two apps, one in the project its role token may read.
	kube := kubeClient(t)
	for name, project := range map[string]string{"proj-app": "cli-proj", "other-app": "default"} {
		if err := kube.Create(t.Context(), &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.namespace},
			Spec: v1alpha1.ApplicationSpec{
				Project:     project,
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: name},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: name},
			},
		}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("proj and role token", func(t *testing.T) {
		manifest := filepath.Join(t.TempDir(), "proj.yaml")
		if err := os.WriteFile(manifest, []byte(`apiVersion: graphcd.io/v1alpha1
kind: AppProject
metadata:
  name: cli-proj
spec:
  description: the CLI's project
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: "*"}]
  roles:
  - name: ci
    policies: ["p, proj:cli-proj:ci, applications, get, cli-proj/*, allow"]
`), 0o600); err != nil {
			t.Fatal(err)
		}
		runOK("", "proj", "create", "-f", manifest)
		if r := run("", "proj", "create", "-f", manifest); r.code != cli.ExitError {
			t.Errorf("creating cli-proj twice = %d %q, want exit 2", r.code, r.stderr)
		}
		runOK("", "proj", "create", "-f", manifest, "--upsert")
		poll(t, "proj list to show cli-proj", func() (bool, string) {
			got := names("proj", "list")
			return slices.Contains(got, "cli-proj"), fmt.Sprint(got)
		})

		var tok struct {
			ID, Token string
			ExpiresAt *string
		}
		out := runOK("", "proj", "role", "token", "create", "cli-proj", "ci", "--id", "pipeline", "--expires-in", "1h", "-o", "json")
		if err := json.Unmarshal([]byte(out), &tok); err != nil || tok.ID != "pipeline" || tok.Token == "" || tok.ExpiresAt == nil {
			t.Fatalf("proj role token create -o json = %q, %v", out, err)
		}
		if r := run("", "proj", "role", "token", "create", "cli-proj", "ci", "--expires-in", "soon"); r.code != cli.ExitError {
			t.Errorf("--expires-in soon = %d %q, want a usage error", r.code, r.stderr)
		}
		poll(t, "the project token to list the project's app only", func() (bool, string) {
			r := as(tok.Token, "app", "list", "-o", "name")
			return r.code == 0 && r.stdout == "proj-app\n", fmt.Sprintf("%+v", r)
		})
		var proj struct {
			Spec struct {
				Roles []struct {
					Name      string
					JwtTokens []struct{ ID string }
				}
			}
		}
		if err := json.Unmarshal([]byte(runOK("", "proj", "get", "cli-proj", "-o", "json")), &proj); err != nil ||
			len(proj.Spec.Roles) != 1 || len(proj.Spec.Roles[0].JwtTokens) != 1 || proj.Spec.Roles[0].JwtTokens[0].ID != "pipeline" {
			t.Errorf("proj get -o json = %+v, %v; want the ci role with token pipeline", proj, err)
		}

		runOK("", "proj", "role", "token", "delete", "cli-proj", "ci", "pipeline")
		poll(t, "the deleted project token to be refused", func() (bool, string) {
			r := as(tok.Token, "app", "list")
			return unauthenticated(r, tok.Token), fmt.Sprintf("%+v", r)
		})
		if r := run("", "proj", "delete", "cli-proj"); r.code != cli.ExitError || !strings.Contains(r.stderr, client.CodeConflict) {
			t.Errorf("proj delete of a project in use = %d %q, want exit 2 CONFLICT", r.code, r.stderr)
		}
	})

	t.Run("repo and repocreds", func(t *testing.T) {
		const url, prefix, pw = "https://git.example.com/team/web.git", "https://git.example.com/team/", "repo-password-1"
		out := runOK(pw+"\n", "repo", "add", url, "--username", "ci", "--password-stdin", "--skip-test", "--project", "default")
		r := run("", "repo", "add", url, "--username", "ci", "--skip-test")
		if r.code != cli.ExitError || !strings.Contains(r.stderr, "--password-stdin") {
			t.Errorf("repo add --username without a password on a pipe = %+v, want a usage error", r)
		}
		runOK(pw+"\n", "repocreds", "add", prefix, "--username", "ci", "--password-stdin")
		var repos []struct {
			URL            string `json:"url"`
			Project        string
			HasCredentials bool
			Template       bool
		}
		poll(t, "repo list to show the repository", func() (bool, string) {
			out = runOK("", "repo", "list", "-o", "json")
			repos = nil
			err := json.Unmarshal([]byte(out), &repos)
			return err == nil && len(repos) == 1, out
		})
		if got := repos[0]; got.URL != url || !got.HasCredentials || got.Template || got.Project != "default" {
			t.Errorf("repo list -o json = %+v", repos)
		}
		poll(t, "repocreds list to show the template", func() (bool, string) {
			got := names("repocreds", "list")
			return slices.Equal(got, []string{prefix}), fmt.Sprint(got)
		})
		if strings.Contains(out+runOK("", "repocreds", "list", "-o", "yaml"), pw) {
			t.Error("a list shows the password")
		}
		// The repository is the default project's: removing it names it,
		// and removing it without says so.
		if r := run("", "repo", "rm", url); r.code != cli.ExitError || !strings.Contains(r.stderr, "scoped to project default: remove it with --project default (NOT_FOUND)") {
			t.Errorf("repo rm of a project's repository without --project = %d %q, want exit 2 naming --project default", r.code, r.stderr)
		}
		runOK("", "repo", "rm", url, "--project", "default")
		runOK("", "repocreds", "rm", prefix)
		if r := run("", "repo", "rm", url, "--project", "default"); r.code != cli.ExitError || !strings.Contains(r.stderr, client.CodeNotFound) {
			t.Errorf("removing the repository twice = %d %q, want exit 2 NOT_FOUND", r.code, r.stderr)
		}
		poll(t, "repo list to forget the repository", func() (bool, string) {
			got := names("repo", "list")
			return len(got) == 0, fmt.Sprint(got)
		})
	})

	t.Run("cluster", func(t *testing.T) {
		const server, token = "https://edge.example.com:6443", "edge-bearer-token-1"
		tokenFile := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out := runOK("", "cluster", "add", "edge", server, "--bearer-token-file", tokenFile, "--namespaces", "web,api", "-o", "json")
		if strings.Contains(out, token) {
			t.Errorf("cluster add printed the token: %s", out)
		}
		var clusters []struct {
			Name, Server string
			Namespaces   []string
		}
		poll(t, "cluster list to show edge", func() (bool, string) {
			out := runOK("", "cluster", "list", "-o", "json")
			clusters = nil
			if err := json.Unmarshal([]byte(out), &clusters); err != nil {
				return false, out
			}
			return slices.ContainsFunc(clusters, func(c struct {
				Name, Server string
				Namespaces   []string
			}) bool {
				return c.Server == server && c.Name == "edge" && slices.Equal(c.Namespaces, []string{"web", "api"})
			}), out
		})
		// The token file's content, without its newline, is the Secret's.
		secrets, err := cluster.Client.CoreV1().Secrets(s.namespace).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, sec := range secrets.Items {
			if string(sec.Data["server"]) != server {
				continue
			}
			var cfg struct{ BearerToken string }
			found = json.Unmarshal(sec.Data["config"], &cfg) == nil && cfg.BearerToken == token
		}
		if !found {
			t.Errorf("no cluster Secret of %s with the token of the file", server)
		}
		if r := run("", "cluster", "add", "edge", server, "--bearer-token-file", tokenFile); r.code != cli.ExitError || !strings.Contains(r.stderr, client.CodeConflict) {
			t.Errorf("adding edge twice = %d %q, want exit 2 CONFLICT", r.code, r.stderr)
		}
		runOK("", "cluster", "add", "edge", server, "--bearer-token-file", tokenFile, "--upsert")
		runOK("", "cluster", "rm", server)
		poll(t, "cluster list to forget edge", func() (bool, string) {
			got := names("cluster", "list")
			return !slices.Contains(got, server), fmt.Sprint(got)
		})
	})

	// KWOK's nodes run no containers, so there is no log to read here:
	// only a Pod outside the app's resource tree, which the server refuses.
	t.Run("app logs refusals", func(t *testing.T) {
		if r := run("", "app", "logs", "proj-app"); r.code != cli.ExitError || !strings.Contains(r.stderr, "--pod") {
			t.Errorf("app logs without --pod = %+v, want a usage error", r)
		}
		for _, args := range [][]string{
			{"app", "logs", "no-such-app", "--pod", "web-1"},
			{"app", "logs", "proj-app", "--pod", "not-its-pod", "--tail", "5"},
			{"app", "logs", "proj-app", "--pod", "not-its-pod", "--namespace", "elsewhere", "--follow"},
		} {
			if r := run("", args...); r.code != cli.ExitError || !strings.Contains(r.stderr, client.CodeNotFound) {
				t.Errorf("graphcd %s = %+v, want exit 2 NOT_FOUND", strings.Join(args, " "), r)
			}
		}
	})

	t.Run("account", func(t *testing.T) {
		cm, err := cluster.Client.CoreV1().ConfigMaps(s.namespace).Get(t.Context(), "graphcd-cm", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["accounts.ci"] = "apiKey"
		if _, err := cluster.Client.CoreV1().ConfigMaps(s.namespace).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		poll(t, "account list to show ci", func() (bool, string) {
			got := names("account", "list")
			return slices.Contains(got, "admin") && slices.Contains(got, "ci"), fmt.Sprint(got)
		})

		// The admin's own password: the session ends, the new one logs in.
		cfg, err := client.LoadConfig(filepath.Join(home, "graphcd", "config"))
		if err != nil || cfg.Current() == nil {
			t.Fatalf("config: %+v %v", cfg, err)
		}
		old := cfg.Current().Token
		const newPassword = "admin-password-2"
		if r := run("wrong-password\n"+newPassword+"\n", "account", "update-password"); r.code != cli.ExitError || strings.Contains(r.stderr, "wrong-password") {
			t.Errorf("update-password with a wrong current password = %+v, want exit 2 without it", r)
		}
		out := runOK(password+"\n"+newPassword+"\n", "account", "update-password")
		if strings.Contains(out, password) || strings.Contains(out, newPassword) {
			t.Errorf("update-password printed a password: %q", out)
		}
		poll(t, "the old session to be refused", func() (bool, string) {
			r := as(old, "account", "list")
			return unauthenticated(r, old), fmt.Sprintf("%+v", r)
		})
		if r := run(password+"\n", "login", s.base, "--username", "admin", "--password-stdin"); r.code != cli.ExitError {
			t.Errorf("login with the old password = %+v, want exit 2", r)
		}
		runOK(newPassword+"\n", "login", s.base, "--username", "admin", "--password-stdin")

		// An API token for ci: it is ci's, until it is deleted. Its ID is
		// not the project token's: the server revokes by ID alone, so
		// revoking that one revoked any token with its ID.
		var tok struct{ ID, Token string }
		out = runOK("", "account", "generate-token", "--account", "ci", "--id", "ci-pipeline", "-o", "json")
		if err := json.Unmarshal([]byte(out), &tok); err != nil || tok.ID != "ci-pipeline" || tok.Token == "" {
			t.Fatalf("account generate-token -o json = %q, %v", out, err)
		}
		var me struct {
			Name   string
			Tokens []struct{ ID string }
		}
		poll(t, "ci's token to be ci's", func() (bool, string) {
			r := as(tok.Token, "account", "get", "-o", "json")
			err := json.Unmarshal([]byte(r.stdout), &me)
			return r.code == 0 && err == nil && me.Name == "ci", fmt.Sprintf("%+v", r)
		})
		if err := json.Unmarshal([]byte(runOK("", "account", "get", "ci", "-o", "json")), &me); err != nil || len(me.Tokens) != 1 || me.Tokens[0].ID != "ci-pipeline" {
			t.Errorf("account get ci -o json = %+v, %v; want token ci-pipeline", me, err)
		}
		if r := run("", "account", "generate-token", "--account", "admin"); r.code != cli.ExitError {
			t.Errorf("a token for admin, who lacks apiKey = %+v, want exit 2", r)
		}
		runOK("", "account", "delete-token", "--account", "ci", "ci-pipeline")
		poll(t, "the deleted API token to be refused", func() (bool, string) {
			r := as(tok.Token, "account", "get")
			return unauthenticated(r, tok.Token), fmt.Sprintf("%+v", r)
		})
	})

	// The audit trail of everything above, through the real server's
	// wiring: the repository's password never shows, a project token may
	// not read it.
	t.Run("audit", func(t *testing.T) {
		var entries []struct {
			User, Mutation, Outcome string
			ClientAddress           *string
			Object                  struct{ Kind, Name, Project string }
			Patch                   *string
		}
		out := runOK("", "audit", "--limit", "0", "-o", "json")
		if err := json.Unmarshal([]byte(out), &entries); err != nil {
			t.Fatalf("audit -o json = %q: %v", out, err)
		}
		seen := map[string]int{}
		for _, e := range entries {
			seen[e.Mutation+" "+e.Outcome]++
			if e.Mutation == "createProject" && e.Outcome == "SUCCESS" && (e.User != "admin" || e.Object.Kind != "AppProject" ||
				e.Object.Name != "cli-proj" || e.ClientAddress == nil || *e.ClientAddress != "127.0.0.1") {
				t.Errorf("createProject entry = %+v", e)
			}
		}
		// proj create, the refused second create, the upsert; repo add,
		// rm without --project (refused), rm, rm again (refused).
		if seen["createProject SUCCESS"] != 2 || seen["createProject FAILURE"] != 1 || seen["createRepository SUCCESS"] != 2 ||
			seen["deleteRepository SUCCESS"] != 2 || seen["deleteRepository FAILURE"] != 2 {
			t.Errorf("audit entries by mutation and outcome: %v", seen)
		}
		wide := runOK("", "audit", "--limit", "0", "-o", "wide")
		t.Logf("graphcd audit --limit 0 -o wide:\n%s", wide)
		if strings.Contains(out+wide, "repo-password-1") || !strings.Contains(wide, "createRepository") {
			t.Errorf("audit -o wide = %s", wide)
		}
		if got := names("audit", "--mutation", "deleteRepository", "--outcome", "failure"); len(got) != 2 {
			t.Errorf("audit --mutation deleteRepository --outcome failure -o name = %v", got)
		}
		list, err := cluster.Client.EventsV1().Events(s.namespace).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created := 0
		for _, ev := range list.Items {
			if ev.ReportingController == "graphcd.io/api-server" && ev.Regarding.Kind == "AppProject" && ev.Reason == "ResourceCreated" && ev.Action == "createProject" {
				created++
			}
		}
		if created != 2 {
			t.Errorf("%d ResourceCreated Events of createProject, want 2", created)
		}
	})
}
