//go:build integration

package deploy_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// The manifests' RBAC is proven by running graphcd itself with nothing
// but the rights of a set's ServiceAccount (impersonated through the
// kubeconfig): it must become ready, its controller must write, and
// nothing it does at start may be forbidden.

// binDir holds the graphcd binary the role tests run; RunMain's setup
// removes it.
var binDir string

// graphcdBinary builds graphcd once for the package.
var graphcdBinary = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(binDir, "graphcd")
	out, err := exec.CommandContext(context.Background(), "go", "build", "-o", bin, "github.com/graphcd/graphcd/cmd/graphcd").CombinedOutput()
	if err != nil {
		return "", errors.New("go build: " + err.Error() + "\n" + string(out))
	}
	return bin, nil
})

// runAs runs `graphcd <args>` as ServiceAccount sa of ns until ready
// says it is ready, then stops it with SIGTERM and fails the test if any
// request it made was forbidden. It returns the logs.
func runAs(t *testing.T, ns, sa string, ready func(ctx context.Context, logs string) bool, args ...string) string {
	t.Helper()
	bin, err := graphcdBinary()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := impersonatingKubeconfig(t, ns, sa)
	args = append(args, "--kubeconfig", kubeconfig, "--namespace", ns, "--log-format", "text")
	cmd := exec.CommandContext(t.Context(), bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GRAPHCD_") && !strings.HasPrefix(kv, "KUBECONFIG=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			logs.add(lines.Text() + "\n")
		}
	}()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Signal(syscall.SIGTERM)
			<-drained
			_ = cmd.Wait()
		}
	}
	t.Cleanup(stop)

	err = wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return ready(ctx, logs.String()), nil
	})
	if err != nil {
		t.Fatalf("graphcd %s as %s not ready: %v\nlogs:\n%s", args[0], sa, err, logs)
	}
	// Let what starts after readiness (cluster caches, leader election,
	// the session keys) make its requests too.
	time.Sleep(3 * time.Second)
	stop()
	out := logs.String()
	if strings.Contains(strings.ToLower(out), "forbidden") {
		t.Errorf("graphcd %s as %s was refused a request:\n%s", args[0], sa, out)
	}
	return out
}

// impersonatingKubeconfig writes the cluster's admin kubeconfig acting as
// ServiceAccount sa of ns.
func impersonatingKubeconfig(t *testing.T, ns, sa string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, user := range cfg.AuthInfos {
		user.Impersonate = "system:serviceaccount:" + ns + ":" + sa
		user.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

var (
	servingRE     = regexp.MustCompile(`msg="serving HTTPS" addr=(\S+)`)
	certificateRE = regexp.MustCompile(`msg="serving TLS certificate" from=graphcd-secret .*sha256=([0-9a-f]{64})`)
)

// serverReady is ready once the server answers /readyz with 200 over
// HTTPS, with the certificate it generated and stored in graphcd-secret
// (so its ServiceAccount may write that Secret): the client accepts only
// the certificate whose fingerprint the server logged.
func serverReady(ctx context.Context, logs string) bool {
	m, fp := servingRE.FindStringSubmatch(logs), certificateRE.FindStringSubmatch(logs)
	if m == nil || fp == nil {
		return false
	}
	pinned := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, //nolint:gosec // VerifyPeerCertificate pins the logged certificate instead
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if sum := sha256.Sum256(raw[0]); hex.EncodeToString(sum[:]) != fp[1] {
				return errors.New("not the certificate the server logged")
			}
			return nil
		},
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: pinned}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+m[1]+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// defaultProjectIn is ready once the controller created the default
// AppProject in ns: it reconciles and writes.
func defaultProjectIn(ns string) func(context.Context, string) bool {
	projects := dynamic.NewForConfigOrDie(cluster.Config).Resource(schema.GroupVersionResource{Group: "graphcd.io", Version: "v1alpha1", Resource: "appprojects"})
	return func(ctx context.Context, _ string) bool {
		_, err := projects.Namespace(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	}
}

func both(a, b func(context.Context, string) bool) func(context.Context, string) bool {
	return func(ctx context.Context, logs string) bool { return a(ctx, logs) && b(ctx, logs) }
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
