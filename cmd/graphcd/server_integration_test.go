//go:build integration

package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/selfsigned"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Minimal}, &cluster))
}

// The server renders through a separate repo-server over TLS when told
// to: /readyz turns ready only once the repo-server answers, and says so
// when it goes away. It runs after TestServerAgainstCluster (file order),
// which needs the CRDs absent at its start.
func TestServerWithRepoServer(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	certFile, keyFile := repoServerCert(t, dir)
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	repoAddr := "127.0.0.1:" + strconv.Itoa(port)
	repo := exec.CommandContext(t.Context(), bin, "repo-server", "--listen", repoAddr, "--tls-cert", certFile, "--tls-key", keyFile)
	repo.Env = binaryEnv()
	if err := repo.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = repo.Process.Kill(); _ = repo.Wait() })

	install := exec.CommandContext(t.Context(), bin, "install", "crds", "--kubeconfig", cluster.Kubeconfig)
	install.Env = binaryEnv()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("graphcd install crds: %v\n%s", err, out)
	}

	srv := exec.CommandContext(t.Context(), bin, "server", "--insecure", "--listen", "127.0.0.1:0", "--kubeconfig", cluster.Kubeconfig,
		"--repo-server-addr", repoAddr, "--repo-server-ca-file", certFile)
	srv.Env = binaryEnv()
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	lines := bufio.NewScanner(stderr)
	addrRE := regexp.MustCompile(`msg="serving HTTP" addr=(\S+)`)
	var addr string
	for addr == "" && lines.Scan() {
		if m := addrRE.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatal("server did not report its address")
	}
	go func() {
		for lines.Scan() {
		}
	}()
	waitReadyz := func(wantCode int, wantBody string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			code, body := get(t, "http://"+addr+"/readyz")
			if code == wantCode && strings.Contains(body, wantBody) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("/readyz = %d %q, want %d containing %q", code, body, wantCode, wantBody)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitReadyz(http.StatusOK, "ok")
	_ = repo.Process.Kill()
	_ = repo.Wait()
	waitReadyz(http.StatusServiceUnavailable, "repo-server unreachable")
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// syncBuffer collects log lines from a reader goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) WriteString(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.WriteString(s)
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// repoServerCert writes a self-signed serving certificate for a
// repo-server on 127.0.0.1 and its key into dir.
func repoServerCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	certPEM, keyPEM, err := selfsigned.Certificate("graphcd-repo-server", []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// kubeClient is a client of the test cluster that knows graphcd's types.
func kubeClient(t *testing.T) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
