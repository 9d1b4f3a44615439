//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/auth/oidc"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// authServer is a `graphcd server` whose graphcd-cm turns on the embedded
// Dex with one static user (alice, in group "team") and whose
// graphcd-rbac-cm lets that group get and sync the apps of project
// "team-proj".
type authServer struct {
	base, namespace, bin string
	// logs is what the server wrote to stdout and stderr.
	logs *syncBuffer
}

const (
	ssoEmail    = "alice@example.com"
	ssoPassword = "alice-password"
)

// serverArgs come after the defaults, so "--controller" turns the
// controller back on.
func startAuthServer(t *testing.T, serverArgs ...string) *authServer {
	t.Helper()
	bin := buildBinary(t)
	install := exec.CommandContext(t.Context(), bin, "install", "crds", "--kubeconfig", cluster.Kubeconfig)
	install.Env = binaryEnv()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("graphcd install crds: %v\n%s", err, out)
	}
	ns := cluster.Namespace(t)
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &authServer{base: "http://127.0.0.1:" + strconv.Itoa(port), namespace: ns, bin: bin}
	hash, err := bcrypt.GenerateFromPassword([]byte(ssoPassword), bcrypt.DefaultCost) // Dex refuses cheaper hashes
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "graphcd-cm"}, Data: map[string]string{
			"url": s.base,
			"dex.config": fmt.Sprintf("enablePasswordDB: true\nstaticPasswords:\n- email: %s\n  hash: %q\n  username: alice\n  userID: alice-id\n  groups: [team]\n",
				ssoEmail, hash),
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: "graphcd-rbac-cm"}, Data: map[string]string{
			"policy.csv": "p, role:team, applications, get, team-proj/*, allow\n" +
				"p, role:team, applications, sync, team-proj/*, allow\n" +
				"g, team, role:team\n",
		}},
	} {
		if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s.serve(t, serverArgs...)
	return s
}

// serve starts graphcd server on s's port and namespace, killed when the
// test ends, and waits until it is ready. The port was free when the test
// picked it, but another process may have bound it since: then serve picks
// another, points graphcd-cm's url at it, and starts the server again.
func (s *authServer) serve(t *testing.T, serverArgs ...string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		if s.start(t, serverArgs...) {
			return
		}
		if attempt == 5 {
			t.Fatalf("graphcd server: port still taken after %d attempts:\n%s", attempt, s.logs)
		}
		port, err := localcluster.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		old := s.base
		s.base = "http://127.0.0.1:" + strconv.Itoa(port)
		cm, err := cluster.Client.CoreV1().ConfigMaps(s.namespace).Get(t.Context(), "graphcd-cm", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cm.Data["url"] == old {
			cm.Data["url"] = s.base
			if _, err := cluster.Client.CoreV1().ConfigMaps(s.namespace).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("graphcd server: %s was taken, retrying on %s", old, s.base)
	}
}

// start runs the server once and waits until it is ready. It reports
// false when the server exited because its port was taken.
func (s *authServer) start(t *testing.T, serverArgs ...string) bool {
	t.Helper()
	args := []string{"server", "--insecure", "--kubeconfig", cluster.Kubeconfig,
		"--namespace", s.namespace, "--listen", strings.TrimPrefix(s.base, "http://"), "--controller=false", "--log-format", "text"}
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), s.bin, append(args, serverArgs...)...)
	cmd.Env = binaryEnv()
	logs := &syncBuffer{}
	s.logs = logs
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("graphcd server's log:\n%s", logs)
		}
	})
	// Whoever took the port may accept and never answer.
	probe := &http.Client{Timeout: 5 * time.Second}
	portTaken := false
	poll(t, "graphcd server to be ready", func() (bool, string) {
		select {
		case <-exited:
			portTaken = strings.Contains(logs.String(), "address already in use")
			if portTaken {
				return true, ""
			}
			t.Fatalf("graphcd server exited:\n%s", logs)
		default:
		}
		resp, err := probe.Get(s.base + "/readyz")
		if err != nil {
			return false, fmt.Sprintf("%v\n%s", err, logs)
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, fmt.Sprintf("%s\n%s", resp.Status, logs)
	})
	return !portTaken
}

// gql posts a GraphQL query with c (whose cookie jar may hold a session)
// and token (a bearer token, unless empty).
func (s *authServer) gql(t *testing.T, c *http.Client, token, q string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": q})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.base+"/api/graphql", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return do(t, c, req)
}

func do(t *testing.T, c *http.Client, req *http.Request) (int, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(raw)
}

// login posts a password login with contentType and returns the status
// and body.
func (s *authServer) login(t *testing.T, contentType, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.base+"/auth/login", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	return do(t, http.DefaultClient, req)
}

var dexForm = regexp.MustCompile(`<form method="post" action="([^"]*)"`)

// The real binary with authentication on: the admin's initial password,
// password logins and their refusals, the full SSO code flow through the
// embedded Dex ending in a cookie whose groups drive RBAC, and logout.
func TestServerLogin(t *testing.T) {
	s := startAuthServer(t)
	apps := kubeClient(t)
	for name, project := range map[string]string{"team-app": "team-proj", "other-app": "other-proj"} {
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
	}
	const list = `{ applications { totalCount edges { node { name } } } }`

	secret, err := cluster.Client.CoreV1().Secrets(s.namespace).Get(t.Context(), "graphcd-initial-admin-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("initial admin secret: %v", err)
	}
	adminPassword := string(secret.Data["password"])

	t.Run("password login", func(t *testing.T) {
		creds, _ := json.Marshal(map[string]string{"username": "admin", "password": adminPassword})
		code, body := s.login(t, "application/json", string(creds))
		var got struct{ Token, ExpiresAt string }
		if code != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil || got.Token == "" {
			t.Fatalf("admin login: %d %s", code, body)
		}
		poll(t, "admin to list both apps", func() (bool, string) {
			code, body := s.gql(t, http.DefaultClient, got.Token, list)
			return code == http.StatusOK && strings.Contains(body, `"totalCount":2`), body
		})
		wrong, _ := json.Marshal(map[string]string{"username": "admin", "password": "not-it"})
		unknown, _ := json.Marshal(map[string]string{"username": "mallory", "password": "not-it"})
		c1, b1 := s.login(t, "application/json", string(wrong))
		c2, b2 := s.login(t, "application/json", string(unknown))
		if c1 != http.StatusUnauthorized || c1 != c2 || b1 != b2 {
			t.Errorf("wrong password %d %s, unknown user %d %s: want the same 401", c1, b1, c2, b2)
		}
		if code, body := s.login(t, "text/plain", string(creds)); code != http.StatusUnsupportedMediaType {
			t.Errorf("a text/plain login (CSRF-style) = %d %s, want 415", code, body)
		}
		rotate := func() {
			t.Helper()
			cmd := exec.CommandContext(t.Context(), s.bin, "admin", "rotate-session-key", "--kubeconfig", cluster.Kubeconfig, "--namespace", s.namespace)
			cmd.Env = binaryEnv()
			if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "rotated the session key") {
				t.Fatalf("rotate-session-key: %v\n%s", err, out)
			}
		}
		rotate()
		if code, body := s.gql(t, http.DefaultClient, got.Token, `{ me { username } }`); code != http.StatusOK || !strings.Contains(body, "admin") {
			t.Errorf("after one rotation the session = %d %s, want it still valid", code, body)
		}
		rotate()
		poll(t, "the second rotation to end the session", func() (bool, string) {
			code, body := s.gql(t, http.DefaultClient, got.Token, `{ me { username } }`)
			return code == http.StatusUnauthorized, body
		})
		if code, _ := s.gql(t, http.DefaultClient, "", list); code != http.StatusOK {
			t.Errorf("anonymous query: HTTP %d", code)
		} else if _, body := s.gql(t, http.DefaultClient, "", list); !strings.Contains(body, "UNAUTHENTICATED") {
			t.Errorf("anonymous list = %s, want UNAUTHENTICATED", body)
		}
	})

	t.Run("single sign-on", func(t *testing.T) {
		jar, err := cookiejar.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		browser := &http.Client{Jar: jar}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, s.base+"/auth/login?return_url="+url.QueryEscape("/applications?x=1"), nil)
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		m := dexForm.FindSubmatch(page)
		if resp.StatusCode != http.StatusOK || m == nil {
			t.Fatalf("GET /auth/login ended at %s with %d, no Dex login form: %.400s", resp.Request.URL, resp.StatusCode, page)
		}
		action, err := resp.Request.URL.Parse(html.UnescapeString(string(m[1])))
		if err != nil {
			t.Fatal(err)
		}
		form := url.Values{"login": {ssoEmail}, "password": {ssoPassword}}
		req, _ = http.NewRequestWithContext(t.Context(), http.MethodPost, action.String(), strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err = browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if got := resp.Request.URL; got.Path != "/applications" || got.RawQuery != "x=1" {
			t.Errorf("the login ended at %s, want the return URL /applications?x=1", got)
		}
		base, _ := url.Parse(s.base)
		var token string
		for _, c := range jar.Cookies(base) {
			if c.Name == "graphcd.token" {
				token = c.Value
			}
		}
		if token == "" {
			t.Fatal("no session cookie after SSO")
		}
		_, body := s.gql(t, browser, "", `{ me { loggedIn groups email } }`)
		if !strings.Contains(body, `"groups":["team"]`) || !strings.Contains(body, `"email":"`+ssoEmail+`"`) {
			t.Errorf("me after SSO = %s, want group team", body)
		}
		_, body = s.gql(t, browser, "", list)
		if !strings.Contains(body, `"totalCount":1`) || !strings.Contains(body, "team-app") {
			t.Errorf("SSO user lists %s, want only team-app", body)
		}
		sync := func(name string) string {
			_, body := s.gql(t, browser, "", fmt.Sprintf(`mutation { syncApplication(input: {application: {name: %q}}) { name } }`, name))
			return body
		}
		if body := sync("team-app"); !strings.Contains(body, `"name":"team-app"`) {
			t.Errorf("sync team-app = %s", body)
		}
		// The operation is pending until the controller takes it, then in
		// the operation state: either names who asked for it.
		poll(t, "the sync's initiator", func() (bool, string) {
			_, body := s.gql(t, browser, "", `{ application(name: "team-app") { operation { initiatedBy { username } }
			  status { operationState { operation { initiatedBy { username } } } } } }`)
			return strings.Contains(body, ssoEmail), body + ", want the SSO user's email"
		})
		if body := sync("other-app"); !strings.Contains(body, "NOT_FOUND") {
			t.Errorf("sync other-app = %s, want NOT_FOUND", body)
		}

		req, _ = http.NewRequestWithContext(t.Context(), http.MethodPost, s.base+"/auth/logout", nil)
		if code, body := do(t, browser, req); code != http.StatusNoContent {
			t.Fatalf("logout = %d %s", code, body)
		}
		if code, body := s.gql(t, http.DefaultClient, token, `{ me { username } }`); code != http.StatusUnauthorized {
			t.Errorf("the logged-out token still works: %d %s", code, body)
		}
		if slices.ContainsFunc(jar.Cookies(base), func(c *http.Cookie) bool { return c.Name == "graphcd.token" }) {
			t.Error("the session cookie outlived the logout")
		}
	})
}

// The command-line login: the CLI's own code flow with the embedded Dex's
// public client through a loopback redirect, then its ID token traded for
// a graphcd session at /auth/exchange.
func TestServerLoopbackLogin(t *testing.T) {
	s := startAuthServer(t)
	cli, err := oidc.NewProvider(t.Context(), oidc.Options{
		Issuer: s.base + "/api/dex", ClientID: wellknown.DexCLIClientID, BaseURL: s.base,
		Scopes: slices.Concat(oidc.DefaultScopes, []string{"audience:server:client_id:" + wellknown.DexClientID}),
	})
	if err != nil {
		t.Fatal(err)
	}
	_, tok, err := cli.LoopbackLogin(t.Context(), func(loginURL string) error {
		jar, err := cookiejar.New(nil)
		if err != nil {
			return err
		}
		browser := &http.Client{Jar: jar}
		resp, err := browser.Get(loginURL)
		if err != nil {
			return err
		}
		page, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		m := dexForm.FindSubmatch(page)
		if m == nil {
			return fmt.Errorf("no Dex login form at %s", resp.Request.URL)
		}
		action, err := resp.Request.URL.Parse(html.UnescapeString(string(m[1])))
		if err != nil {
			return err
		}
		resp, err = browser.PostForm(action.String(), url.Values{"login": {ssoEmail}, "password": {ssoPassword}})
		if err != nil {
			return err
		}
		return resp.Body.Close() // the redirect to the loopback listener was followed
	})
	if err != nil {
		t.Fatalf("loopback login: %v", err)
	}
	idToken, _ := tok.Extra("id_token").(string)
	exchange := func(body string) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.base+"/auth/exchange", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		return do(t, http.DefaultClient, req)
	}
	raw, _ := json.Marshal(map[string]string{"idToken": idToken})
	code, body := exchange(string(raw))
	var got struct{ Token string }
	if code != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil || got.Token == "" {
		t.Fatalf("exchange = %d %s", code, body)
	}
	if _, body := s.gql(t, http.DefaultClient, got.Token, `{ me { loggedIn groups } }`); !strings.Contains(body, `"groups":["team"]`) {
		t.Errorf("me with the exchanged session = %s", body)
	}
	forged := idToken[:len(idToken)-4] + "AAAA"
	raw, _ = json.Marshal(map[string]string{"idToken": forged})
	if code, body := exchange(string(raw)); code != http.StatusUnauthorized {
		t.Errorf("exchange of a forged ID token = %d %s, want 401", code, body)
	}
}
