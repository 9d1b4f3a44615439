package bootstrap

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRedisSecretData(t *testing.T) {
	a, err := RedisSecretData()
	if err != nil {
		t.Fatal(err)
	}
	b, err := RedisSecretData()
	if err != nil {
		t.Fatal(err)
	}
	if got := len(a[RedisPasswordKey]); got < 26 {
		t.Errorf("password has %d characters, want 26 or more", got)
	}
	for _, k := range []string{RedisSharedKey, RepoCacheKey} {
		raw, err := hex.DecodeString(string(a[k]))
		if err != nil || len(raw) < 32 {
			t.Errorf("%s = %d hex-decoded bytes (err %v), want 32 or more", k, len(raw), err)
		}
	}
	for k := range a {
		if string(a[k]) == string(b[k]) {
			t.Errorf("two calls gave the same %s", k)
		}
	}
	if string(a[RedisSharedKey]) == string(a[RepoCacheKey]) {
		t.Errorf("%s and %s are the same key", RedisSharedKey, RepoCacheKey)
	}
}

func TestRepoServerHosts(t *testing.T) {
	want := []string{"graphcd-repo-server", "graphcd-repo-server.ops", "graphcd-repo-server.ops.svc"}
	if diff := cmp.Diff(RepoServerHosts("ops"), want); diff != "" {
		t.Errorf("RepoServerHosts (-got +want):\n%s", diff)
	}
}

// The generated certificates do what the install needs: a mutual TLS
// handshake between a client that trusts ca.crt and presents its
// certificate, and a server that requires client certificates from the
// same CA, for every Service name.
func TestRepoServerPKIHandshake(t *testing.T) {
	hosts := RepoServerHosts("ops")
	pki, err := NewRepoServerPKI(hosts, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range hosts {
		t.Run(host, func(t *testing.T) {
			if err := handshake(t, pki.ServerCert, pki.ServerKey, pki.CACert, pki.ClientCert, pki.ClientKey, pki.CACert, host); err != nil {
				t.Errorf("mutual TLS handshake: %v", err)
			}
		})
	}
	t.Run("other host", func(t *testing.T) {
		err := handshake(t, pki.ServerCert, pki.ServerKey, pki.CACert, pki.ClientCert, pki.ClientKey, pki.CACert, "graphcd-repo-server.other.svc")
		if _, ok := errors.AsType[x509.HostnameError](err); !ok {
			t.Errorf("handshake for a name not in the certificate: %v, want a hostname error", err)
		}
	})
	t.Run("client certificate of another CA", func(t *testing.T) {
		other, err := NewRepoServerPKI(hosts, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := handshake(t, pki.ServerCert, pki.ServerKey, pki.CACert, other.ClientCert, other.ClientKey, pki.CACert, hosts[0]); err == nil {
			t.Error("the server accepted a client certificate another CA signed")
		}
	})
}

// Each certificate can be used for its purpose only, and the CA signs
// nothing below the leaves.
func TestRepoServerPKIUsages(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	pki, err := NewRepoServerPKI(RepoServerHosts("ops"), now)
	if err != nil {
		t.Fatal(err)
	}
	ca, server, client := parseCert(t, pki.CACert), parseCert(t, pki.ServerCert), parseCert(t, pki.ClientCert)
	if !ca.IsCA || !ca.MaxPathLenZero || ca.KeyUsage&x509.KeyUsageCertSign == 0 {
		t.Errorf("CA: IsCA %v, MaxPathLenZero %v, KeyUsage %v; want a CA that signs only leaves", ca.IsCA, ca.MaxPathLenZero, ca.KeyUsage)
	}
	for name, c := range map[string]*x509.Certificate{"server": server, "client": client} {
		if c.IsCA {
			t.Errorf("%s certificate is a CA", name)
		}
		if !c.NotBefore.Equal(now.Add(-time.Hour)) || !c.NotAfter.Equal(now.Add(certValidity)) {
			t.Errorf("%s certificate valid %s to %s, want from an hour before %s for %s", name, c.NotBefore, c.NotAfter, now, certValidity)
		}
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	verify := func(c *x509.Certificate, usage x509.ExtKeyUsage) error {
		_, err := c.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}
	if err := verify(client, x509.ExtKeyUsageServerAuth); err == nil {
		t.Error("the client certificate is valid for server authentication")
	}
	if err := verify(server, x509.ExtKeyUsageClientAuth); err == nil {
		t.Error("the server certificate is valid for client authentication")
	}
	if len(client.DNSNames) != 0 {
		t.Errorf("client certificate names hosts %v", client.DNSNames)
	}
	if err := verify(server, x509.ExtKeyUsageServerAuth); err != nil {
		t.Errorf("server certificate: %v", err)
	}
	if err := verify(client, x509.ExtKeyUsageClientAuth); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	if strings.Contains(string(pki.CACert), "PRIVATE KEY") {
		t.Error("the CA's PEM carries a private key")
	}
}

func parseCert(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	b, rest := pem.Decode(certPEM)
	if b == nil || b.Type != "CERTIFICATE" || len(rest) != 0 {
		t.Fatalf("want exactly one PEM certificate, got %q", certPEM)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// handshake runs a TLS handshake over an in-memory connection between a
// server that requires client certificates signed by clientCA and a client
// that verifies the server as host against serverCA. It returns the
// client's error, or the server's when only the server failed.
func handshake(t *testing.T, serverCert, serverKey, clientCA, clientCert, clientKey, serverCA []byte, host string) error {
	t.Helper()
	sc, err := tls.X509KeyPair(serverCert, serverKey)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := tls.X509KeyPair(clientCert, clientKey)
	if err != nil {
		t.Fatal(err)
	}
	clientPool, serverPool := x509.NewCertPool(), x509.NewCertPool()
	if !clientPool.AppendCertsFromPEM(clientCA) || !serverPool.AppendCertsFromPEM(serverCA) {
		t.Fatal("CA PEM does not parse")
	}
	a, b := net.Pipe()
	defer func() { _ = a.Close() }()
	defer func() { _ = b.Close() }()
	srv := tls.Server(a, &tls.Config{
		Certificates: []tls.Certificate{sc}, ClientCAs: clientPool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13,
	})
	cli := tls.Client(b, &tls.Config{
		Certificates: []tls.Certificate{cc}, RootCAs: serverPool, ServerName: host, MinVersion: tls.VersionTLS13,
	})
	srvErr := make(chan error, 1)
	go func() {
		err := srv.HandshakeContext(t.Context())
		if err == nil {
			// TLS 1.3 checks the client's certificate after the client
			// finished: read once so that a rejection reaches the client.
			_, err = srv.Write([]byte{0})
		}
		_ = a.Close()
		srvErr <- err
	}()
	err = cli.HandshakeContext(t.Context())
	if err == nil {
		_, err = cli.Read(make([]byte, 1))
	}
	_ = b.Close()
	if sErr := <-srvErr; err == nil {
		err = sErr
	}
	return err
}
