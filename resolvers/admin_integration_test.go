//go:build integration

package resolvers_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi" //nolint:gosec // G504: Go 1.26 is not affected; serves git http-backend on loopback
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// serveGit serves one commit over smart HTTP on loopback, behind basic
// auth user:password, and returns the repository URL.
func serveGit(t *testing.T, user, password string) string {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	work, root := filepath.Join(dir, "work"), filepath.Join(dir, "git")
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "one"}, {"clone", "-q", "--bare", ".", filepath.Join(root, "apps.git")}} {
		cmd := exec.CommandContext(t.Context(), gitBin, args...)
		cmd.Dir, cmd.Env = work, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	backend := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"}, Env: []string{
		"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull,
	}}
	var lc net.ListenConfig
	l, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return "http://" + l.Addr().String() + "/apps.git"
}

func TestRepositoryMutations(t *testing.T) {
	t.Parallel()
	const password = "hunter2-secret"
	url := serveGit(t, "bot", password)
	const create = `mutation($in: RepositoryInput!) { createRepository(input: $in) { id url name type hasCredentials template } }`
	in := map[string]any{"url": url, "name": "apps", "username": "bot", "password": "wrong"}
	if code := errorCode(t, create, map[string]any{"in": in}); code != "BAD_USER_INPUT" {
		t.Fatalf("wrong password: code %q, want BAD_USER_INPUT", code)
	}
	if repoSecrets(t, url) != 0 {
		t.Fatal("a failed test saved the repository")
	}
	in["password"] = password
	code, resp := query(t, create, map[string]any{"in": in})
	if code != http.StatusOK || len(resp.Errors) > 0 || !strings.Contains(string(resp.Data), `"hasCredentials":true`) {
		t.Fatalf("create: HTTP %d %s %+v", code, resp.Data, resp.Errors)
	}
	if strings.Contains(string(resp.Data), password) {
		t.Fatalf("the password came back: %s", resp.Data)
	}
	if repoSecrets(t, url) != 1 {
		t.Fatal("no repository Secret")
	}
	if code := errorCode(t, create, map[string]any{"in": in}); code != "CONFLICT" {
		t.Errorf("second create: code %q, want CONFLICT", code)
	}
	in["upsert"] = true
	data(t, create, map[string]any{"in": in}, &map[string]any{})

	// The stored credentials reach it (the credential store may take its
	// cache time to see the new Secret); wrong ones are reported failed,
	// without the password, by the test and by the repository's state.
	const test = `mutation($url: String!) { testRepository(url: $url) { status message attemptedAt } }`
	testOutcome := func() (status, message string) {
		var got struct {
			TestRepository struct{ Status, Message string }
		}
		data(t, test, map[string]any{"url": url}, &got)
		return got.TestRepository.Status, got.TestRepository.Message
	}
	eventually(t, "the stored credentials reach the repository", func() error {
		if status, msg := testOutcome(); status != "SUCCESSFUL" {
			return fmt.Errorf("testRepository: %s %q", status, msg)
		}
		return nil
	})
	data(t, create, map[string]any{"in": map[string]any{"url": url, "username": "bot", "password": "stale-" + password, "upsert": true, "skipTest": true}}, &map[string]any{})
	eventually(t, "the stale password is reported", func() error {
		status, msg := testOutcome()
		if status != "FAILED" || msg == "" {
			return fmt.Errorf("testRepository: %s %q", status, msg)
		}
		if strings.Contains(msg, password) {
			t.Fatalf("the failure names the password: %q", msg)
		}
		return nil
	})
	eventually(t, "repositories lists the last test's outcome", func() error {
		var listed struct {
			Repositories struct {
				Nodes []struct {
					URL             string
					ConnectionState *struct{ Status string }
				}
			}
		}
		data(t, `{ repositories { nodes { url connectionState { status } } } }`, nil, &listed)
		for _, n := range listed.Repositories.Nodes {
			if n.URL != url {
				continue
			}
			if n.ConnectionState == nil || n.ConnectionState.Status != "FAILED" {
				return fmt.Errorf("connectionState %+v, want FAILED", n.ConnectionState)
			}
			return nil
		}
		return fmt.Errorf("%s is not listed", url)
	})
	if code := errorCode(t, test, map[string]any{"url": "https://git.example.com/undeclared"}); code != "NOT_FOUND" {
		t.Errorf("testRepository of an undeclared URL: code %q, want NOT_FOUND", code)
	}

	const del = `mutation($url: String!) { deleteRepository(url: $url) }`
	data(t, del, map[string]any{"url": url}, &map[string]any{})
	if repoSecrets(t, url) != 0 {
		t.Error("repository Secret left after delete")
	}
	if code := errorCode(t, del, map[string]any{"url": url}); code != "NOT_FOUND" {
		t.Errorf("second delete: code %q, want NOT_FOUND", code)
	}
	if code := errorCode(t, create, map[string]any{"in": map[string]any{"url": "https://bob:pw@git.example.com/x"}}); code != "BAD_USER_INPUT" {
		t.Errorf("URL with credentials: code %q, want BAD_USER_INPUT", code)
	}
}

func TestClusterMutations(t *testing.T) {
	t.Parallel()
	const token = "eyJ-cluster-token"
	const add = `mutation($in: ClusterInput!) { addCluster(input: $in) { id name server namespaces labels { key value } } }`
	in := map[string]any{"name": "edge", "server": "https://edge.example.com:6443", "bearerToken": token,
		"namespaces": []string{"web"}, "labels": []map[string]string{{"key": "env", "value": "edge"}}}
	code, resp := query(t, add, map[string]any{"in": in})
	if code != http.StatusOK || len(resp.Errors) > 0 || strings.Contains(string(resp.Data), token) {
		t.Fatalf("add: HTTP %d %s %+v", code, resp.Data, resp.Errors)
	}
	if code := errorCode(t, add, map[string]any{"in": in}); code != "CONFLICT" {
		t.Errorf("second add: code %q, want CONFLICT", code)
	}
	eventually(t, "cluster listed", func() error {
		_, resp := query(t, `{ clusters { nodes { server name } } }`, nil)
		if !strings.Contains(string(resp.Data), "https://edge.example.com:6443") {
			return errNotYet
		}
		return nil
	})
	const remove = `mutation($s: String!) { removeCluster(server: $s) }`
	data(t, remove, map[string]any{"s": "https://edge.example.com:6443"}, &map[string]any{})
	for s, want := range map[string]string{
		"https://edge.example.com:6443":  "NOT_FOUND",
		"https://kubernetes.default.svc": "BAD_USER_INPUT",
	} {
		if code := errorCode(t, remove, map[string]any{"s": s}); code != want {
			t.Errorf("remove %s: code %q, want %q", s, code, want)
		}
	}
	if code := errorCode(t, add, map[string]any{"in": map[string]any{"name": "x", "server": "edge.example.com"}}); code != "BAD_USER_INPUT" {
		t.Errorf("server without scheme: code %q, want BAD_USER_INPUT", code)
	}
}

func TestProjectMutations(t *testing.T) {
	t.Parallel()
	const create = `mutation($m: String!) { createProject(input: {manifest: $m}) { name spec { sourceRepos } } }`
	manifest := `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: mutations-team}
spec:
  sourceRepos: ["https://git.example.com/*"]
  destinations: [{server: "https://kubernetes.default.svc", namespace: "team-*"}]
`
	data(t, create, map[string]any{"m": manifest}, &map[string]any{})
	if code := errorCode(t, create, map[string]any{"m": manifest}); code != "CONFLICT" {
		t.Errorf("second create: code %q, want CONFLICT", code)
	}
	if code := errorCode(t, create, map[string]any{"m": strings.Replace(manifest, "sourceRepos", "sourceRepoz", 1)}); code != "BAD_USER_INPUT" {
		t.Errorf("unknown field: code %q, want BAD_USER_INPUT", code)
	}
	var got struct {
		UpdateProjectSpec struct {
			Spec struct{ SourceRepos []string }
		}
	}
	data(t, `mutation { updateProjectSpec(input: {name: "mutations-team", spec: "sourceRepos: ['*']"}) { spec { sourceRepos } } }`, nil, &got)
	if r := got.UpdateProjectSpec.Spec.SourceRepos; len(r) != 1 || r[0] != "*" {
		t.Errorf("sourceRepos after update = %v", r)
	}

	// An application in the project blocks its deletion.
	createApps(t, "graphcd", appSpec{name: "mutations-app", project: "mutations-team"})
	const del = `mutation { deleteProject(name: "mutations-team") }`
	if code := errorCode(t, del, nil); code != "CONFLICT" {
		t.Errorf("delete of a used project: code %q, want CONFLICT", code)
	}
	if err := kube.Delete(t.Context(), getApp(t, "graphcd", "mutations-app")); err != nil {
		t.Fatal(err)
	}
	data(t, del, nil, &map[string]any{})
	if code := errorCode(t, del, nil); code != "NOT_FOUND" {
		t.Errorf("second delete: code %q, want NOT_FOUND", code)
	}
}

// repoSecrets counts the repository Secrets for url in the API's
// namespace.
func repoSecrets(t *testing.T, url string) int {
	t.Helper()
	list, err := cluster.Client.CoreV1().Secrets(secretsNS).List(t.Context(), metav1.ListOptions{LabelSelector: "graphcd.io/secret-type=repository"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range list.Items {
		if string(s.Data["url"]) == url {
			n++
		}
	}
	return n
}
