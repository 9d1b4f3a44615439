//go:build integration

package main

import (
	"crypto/x509"
	"encoding/pem"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/internal/bootstrap"
)

// `graphcd install secrets` creates the Redis and repo-server TLS Secrets
// once; a second run changes nothing; a half-deleted TLS pair is refused
// with what to delete.
func TestInstallSecrets(t *testing.T) {
	ns := cluster.Namespace(t)
	env := map[string]string{"GRAPHCD_KUBECONFIG": cluster.Kubeconfig}
	code, stdout, stderr := runCLI(t, env, "install", "secrets", "--namespace", ns)
	if code != command.ExitOK {
		t.Fatalf("first run: exit %d, stderr %q", code, stderr)
	}
	want := "secret/graphcd-redis created\nsecret/graphcd-repo-server-tls created\nsecret/graphcd-repo-server-client-tls created\n"
	if diff := cmp.Diff(stdout, want); diff != "" {
		t.Errorf("first run printed (-got +want):\n%s", diff)
	}
	first := secretVersions(t, ns)

	server := getSecret(t, ns, bootstrap.RepoServerTLSSecret)
	client := getSecret(t, ns, bootstrap.RepoServerClientTLSSecret)
	for _, s := range []*corev1.Secret{server, client} {
		if s.Type != corev1.SecretTypeTLS || len(s.Data["tls.crt"]) == 0 || len(s.Data["tls.key"]) == 0 || len(s.Data["ca.crt"]) == 0 {
			t.Errorf("secret %s: type %s, keys %v; want kubernetes.io/tls with tls.crt, tls.key and ca.crt", s.Name, s.Type, keys(s))
		}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(server.Data["ca.crt"]) {
		t.Fatal("ca.crt does not parse")
	}
	cert := pemCert(t, server.Data["tls.crt"])
	_, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "graphcd-repo-server." + ns + ".svc", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	if err != nil {
		t.Errorf("server certificate for the Service in %s: %v", ns, err)
	}
	_, err = pemCert(t, client.Data["tls.crt"]).Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		t.Errorf("client certificate against the server's ca.crt: %v", err)
	}
	redis := getSecret(t, ns, bootstrap.RedisSecret)
	if got := keys(redis); !cmp.Equal(got, []string{"auth", "cache.key", "shared.key"}) {
		t.Errorf("secret %s keys %v, want auth, cache.key, shared.key", redis.Name, got)
	}

	code, stdout, stderr = runCLI(t, env, "install", "secrets", "--namespace", ns)
	if code != command.ExitOK {
		t.Fatalf("second run: exit %d, stderr %q", code, stderr)
	}
	if want := strings.ReplaceAll(want, "created", "unchanged"); stdout != want {
		t.Errorf("second run printed %q, want %q", stdout, want)
	}
	if diff := cmp.Diff(secretVersions(t, ns), first); diff != "" {
		t.Errorf("the second run changed Secrets (resourceVersion -got +want):\n%s", diff)
	}

	err = cluster.Client.CoreV1().Secrets(ns).Delete(t.Context(), bootstrap.RepoServerClientTLSSecret, metav1.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, env, "install", "secrets", "--namespace", ns)
	if code != command.ExitError || !strings.Contains(stderr, "delete graphcd-repo-server-tls and run again") {
		t.Errorf("run with only the server TLS Secret: exit %d, stderr %q; want 1 and what to delete", code, stderr)
	}
}

func getSecret(t *testing.T, ns, name string) *corev1.Secret {
	t.Helper()
	s, err := cluster.Client.CoreV1().Secrets(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// secretVersions maps each Secret of ns to its resourceVersion.
func secretVersions(t *testing.T, ns string) map[string]string {
	t.Helper()
	list, err := cluster.Client.CoreV1().Secrets(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list.Items {
		out[s.Name] = s.ResourceVersion
	}
	return out
}

func keys(s *corev1.Secret) []string {
	var out []string
	for k := range s.Data {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func pemCert(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("no PEM block in %q", b)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
