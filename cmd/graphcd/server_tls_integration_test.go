//go:build integration

package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/Khan/genqlient/graphql"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/internal/selfsigned"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// tlsServer is a `graphcd server` serving HTTPS with the certificate it
// generated and keeps in graphcd-secret.
type tlsServer struct {
	addr, namespace, bin string
	logs                 *syncBuffer
}

// startTLSServer runs the server in ns (a fresh one when empty) with its
// default TLS and waits until /readyz answers over HTTPS.
func startTLSServer(t *testing.T, ns string) *tlsServer {
	t.Helper()
	bin := buildBinary(t)
	if ns == "" {
		ns = cluster.Namespace(t)
	}
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &tlsServer{addr: "127.0.0.1:" + strconv.Itoa(port), namespace: ns, bin: bin, logs: &syncBuffer{}}
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), bin, "server", "--install-crds", "--kubeconfig", cluster.Kubeconfig,
		"--namespace", ns, "--listen", s.addr, "--controller=false", "--log-format", "text")
	cmd.Env = binaryEnv()
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("graphcd server log:\n%s", s.logs)
		}
	})
	poll(t, "graphcd server to be ready over HTTPS", func() (bool, string) {
		c, err := s.trusting(t, s.storedCert(t))
		if err != nil {
			return false, err.Error()
		}
		resp, err := c.Get("https://" + s.addr + "/readyz")
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return s
}

// storedCert is the PEM certificate in graphcd-secret (nil when none).
func (s *tlsServer) storedCert(t *testing.T) []byte {
	t.Helper()
	sec, err := cluster.Client.CoreV1().Secrets(s.namespace).Get(t.Context(), "graphcd-secret", metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return sec.Data["tls.crt"]
}

// trusting is an HTTP client that trusts only certPEM, and speaks HTTP/2
// when the server offers it.
func (s *tlsServer) trusting(t *testing.T, certPEM []byte) (*http.Client, error) {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(certPEM) {
		return nil, errors.New("no certificate in graphcd-secret yet")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}, nil
}

// served is the leaf certificate a handshake gets now.
func (s *tlsServer) served(t *testing.T) *x509.Certificate {
	t.Helper()
	conn, err := tls.Dial("tcp", s.addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only reads which certificate is served
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().PeerCertificates[0]
}

// graphcd server serves HTTPS by default with a self-signed certificate
// it keeps in graphcd-secret: a Go client and the CLI verify it when
// given it and refuse it otherwise, a plain-HTTP client is told to use
// HTTPS, the subscription's websocket works over it, a restart serves the
// same certificate, and one put into graphcd-server-tls is served from
// the next connection and dropped when that Secret goes.
func TestServerTLS(t *testing.T) {
	s := startTLSServer(t, "")
	certPEM := s.storedCert(t)
	base := "https://" + s.addr

	// The generated certificate names the install's Service.
	leaf := s.served(t)
	block, _ := pem.Decode(certPEM)
	if block == nil || !bytes.Equal(leaf.Raw, block.Bytes) {
		t.Fatal("the served certificate is not the one in graphcd-secret")
	}
	if err := leaf.VerifyHostname("graphcd-server." + s.namespace + ".svc"); err != nil {
		t.Errorf("generated certificate: %v", err)
	}

	// A Go client that trusts it gets HTTP/2; one that does not is refused.
	trusted, err := s.trusting(t, certPEM)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := trusted.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.Proto != "HTTP/2.0" || resp.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz over TLS = %s %s, want HTTP/2.0 200", resp.Proto, resp.Status)
	}
	if resp, err := http.Get(base + "/healthz"); err == nil {
		_ = resp.Body.Close()
		t.Error("a client with the system's roots accepted the self-signed certificate")
	} else if !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Errorf("a client with the system's roots: err = %v, want unknown authority", err)
	}
	// Plain HTTP to the HTTPS port gets a clear answer, not a hang.
	code, body := get(t, "http://"+s.addr+"/healthz")
	if code != http.StatusBadRequest || !strings.Contains(body, "HTTP request to an HTTPS server") {
		t.Errorf("plain HTTP = %d %q, want 400 and a word about HTTPS", code, body)
	}

	// The CLI refuses the certificate, pointing at --server-crt, and
	// verifies it with that flag; later commands use the context's file.
	home := t.TempDir()
	crtFile := filepath.Join(home, "graphcd.crt")
	if err := os.WriteFile(crtFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	password := s.adminPassword(t)
	cli := func(args ...string) cliResult {
		return (&authServer{bin: s.bin}).runCLIBinary(t, home, password+"\n", nil, args...)
	}
	if r := cli("login", base, "--username", "admin", "--password-stdin"); r.code == 0 || !strings.Contains(r.stderr, "--server-crt") {
		t.Errorf("login without the certificate: exit %d, stderr %q; want a failure naming --server-crt", r.code, r.stderr)
	}
	if r := cli("login", base, "--username", "admin", "--password-stdin", "--server-crt", crtFile); r.code != 0 || !strings.Contains(r.stdout, "logged in") {
		t.Fatalf("login --server-crt: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := cli("account", "get"); r.code != 0 || !strings.Contains(r.stdout, "admin") {
		t.Errorf("account get after login: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A subscription's websocket over TLS: the project created after it
	// started arrives as an event.
	s.checkSubscription(t, certPEM, password)

	// A second replica (or a restart) serves the same stored certificate.
	again := startTLSServer(t, s.namespace)
	if !bytes.Equal(again.served(t).Raw, leaf.Raw) {
		t.Error("a second server in the namespace serves another certificate than the stored one")
	}

	// graphcd-server-tls wins from the next connection, without a restart.
	rotatedPEM, rotatedKey, err := selfsigned.Certificate("rotated.example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	rotated := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "graphcd-server-tls", Namespace: s.namespace},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": rotatedPEM, "tls.key": rotatedKey},
	}
	if _, err := cluster.Client.CoreV1().Secrets(s.namespace).Create(t.Context(), rotated, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the rotated certificate to be served", func() (bool, string) {
		cn := s.served(t).Subject.CommonName
		return cn == "rotated.example.com", "serving " + cn
	})
	if c, err := s.trusting(t, rotatedPEM); err != nil {
		t.Fatal(err)
	} else if resp, err := c.Get(base + "/readyz"); err != nil {
		t.Errorf("GET with the rotated certificate: %v", err)
	} else {
		_ = resp.Body.Close()
	}
	if err := cluster.Client.CoreV1().Secrets(s.namespace).Delete(t.Context(), "graphcd-server-tls", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the stored certificate to be served again", func() (bool, string) {
		cn := s.served(t).Subject.CommonName
		return bytes.Equal(s.served(t).Raw, leaf.Raw), "serving " + cn
	})
}

func (s *tlsServer) adminPassword(t *testing.T) string {
	t.Helper()
	var password string
	poll(t, "the initial admin password", func() (bool, string) {
		sec, err := cluster.Client.CoreV1().Secrets(s.namespace).Get(t.Context(), "graphcd-initial-admin-secret", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		password = string(sec.Data["password"])
		return password != "", "empty password"
	})
	return password
}

// checkSubscription logs in with the Go client and opens a subscription
// over the websocket: its first result, the app's state, arrives.
func (s *tlsServer) checkSubscription(t *testing.T, certPEM []byte, password string) {
	t.Helper()
	anon, err := client.NewTLS("https://"+s.addr, "", client.TLS{CACert: certPEM})
	if err != nil {
		t.Fatal(err)
	}
	session, err := anon.Login(t.Context(), "admin", password)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewTLS(anon.Server, session.Token, client.TLS{CACert: certPEM})
	if err != nil {
		t.Fatal(err)
	}
	// A query first: its HTTP/2 connection must not turn the websocket's
	// TLS into one that offers HTTP/2 too.
	if _, err := client.Me(t.Context(), c.GraphQL); err != nil {
		t.Fatal(err)
	}
	kube := kubeClient(t)
	if err := kube.Create(t.Context(), &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "over-tls", Namespace: s.namespace},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: "web"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"},
		},
	}); err != nil {
		t.Fatal(err)
	}
	var sub *client.Subscription[json.RawMessage]
	poll(t, "the API to know the app", func() (bool, string) {
		// The API's index sees the app shortly after it is written.
		sub, err = client.Subscribe[json.RawMessage](t.Context(), c, &graphql.Request{
			Query: `subscription { application(name: "over-tls") { name } }`,
		})
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	if err != nil {
		t.Fatalf("subscribe over TLS: %v", err)
	}
	defer sub.Close()
	got, err := sub.Next()
	if err != nil {
		t.Fatalf("subscription over TLS: %v", err)
	}
	if string(*got) != `{"application":{"name":"over-tls"}}` {
		t.Errorf("first result = %s, want the app", *got)
	}
}
