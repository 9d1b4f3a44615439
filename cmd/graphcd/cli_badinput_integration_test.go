//go:build integration

package main

import (
	"net"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/auth/session"
)

// The CLI's bad cases each end in one line on stderr and exit 2, with no
// stack trace: an unreachable server, an expired token, and a server whose
// certificate is not trusted — which works with --insecure, and only then.
func TestCLIBadInput(t *testing.T) {
	s := startAuthServer(t)
	home := t.TempDir()
	oneLineExit2 := func(what string, r cliResult, want string) {
		t.Helper()
		msg := strings.TrimSpace(r.stderr)
		if r.code != 2 || strings.Count(msg, "\n") > 0 || !strings.Contains(msg, want) ||
			strings.Contains(msg, "goroutine") || strings.Contains(msg, "panic") {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line containing %q", what, r.code, r.stderr, want)
		}
	}

	// A port nothing listens on.
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	_ = l.Close()
	oneLineExit2("unreachable server", s.runCLIBinary(t, home, "", nil, "app", "list", "--server", closed, "--auth-token", "x"), "connection refused")

	// A token the server signed, expired a day ago.
	key, err := s.signingKey(t)
	if err != nil {
		t.Fatal(err)
	}
	old := session.NewIssuer(session.StaticKeys{Current: key}, session.Options{Now: func() time.Time { return time.Now().Add(-48 * time.Hour) }})
	expired, _, err := old.Issue(t.Context(), session.Template{Subject: "admin", Kind: session.KindSession})
	if err != nil {
		t.Fatal(err)
	}
	oneLineExit2("expired token", s.runCLIBinary(t, home, "", nil, "app", "list", "--server", s.base, "--auth-token", expired), "UNAUTHENTICATED")

	// The same server behind TLS with a certificate nobody trusts.
	target, _ := url.Parse(s.base)
	tlsProxy := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(target))
	t.Cleanup(tlsProxy.Close)
	secret, err := cluster.Client.CoreV1().Secrets(s.namespace).Get(t.Context(), "graphcd-initial-admin-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	password := string(secret.Data["password"]) + "\n"
	login := []string{"login", tlsProxy.URL, "--username", "admin", "--password-stdin"}
	oneLineExit2("untrusted certificate", s.runCLIBinary(t, home, password, nil, login...), "--insecure")
	if r := s.runCLIBinary(t, home, password, nil, append(login, "--insecure")...); r.code != 0 {
		t.Fatalf("login --insecure: exit %d, stderr %s", r.code, r.stderr)
	}
	// The context remembers the choice: later commands need no flag.
	if r := s.runCLIBinary(t, home, "", nil, "app", "list", "-o", "name"); r.code != 0 {
		t.Errorf("app list in the insecure context: exit %d, stderr %s", r.code, r.stderr)
	}
}

// signingKey reads the key the server signs sessions with.
func (s *authServer) signingKey(t *testing.T) (session.Key, error) {
	t.Helper()
	secret, err := cluster.Client.CoreV1().Secrets(s.namespace).Get(t.Context(), session.SecretName, metav1.GetOptions{})
	if err != nil {
		return session.Key{}, err
	}
	return session.NewKey(secret.Data["server.secretkey"])
}
