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

	"github.com/graphcd/graphcd/internal/testenv/graphcdbin"
	"github.com/graphcd/graphcd/internal/testenv/install"
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
	return bin, graphcdbin.Build(context.Background(), bin)
})

// runAs runs `graphcd <args>` as ServiceAccount sa of ns until ready
// says it is ready, lets it run a few seconds more, then stops it with
// SIGTERM and fails the test if any request it made was forbidden. It
// returns the logs.
func runAs(t *testing.T, ns, sa string, ready func(ctx context.Context, logs string) bool, args ...string) string {
	t.Helper()
	p := start(t, ns, runOptions{sa: sa}, ready, args...)
	// Let what starts after readiness (cluster caches, leader election,
	// the session keys) make its requests too.
	time.Sleep(3 * time.Second)
	return p.finish(t)
}

// runOptions say how start runs graphcd.
type runOptions struct {
	// sa is the ServiceAccount of the namespace graphcd acts as, through
	// an impersonating kubeconfig, with --namespace set to it. Empty runs
	// graphcd with no Kubernetes credentials at all: no kubeconfig, no
	// KUBECONFIG or in-cluster variables, and a HOME of its own.
	sa string
	// refused, when set, accepts the log lines saying "forbidden" that a
	// run meant to be refused expects; every other such line fails the
	// test, as every one does without it.
	refused func(line string) bool
	// env is added to the environment (GRAPHCD_* of the test's own
	// environment never reaches graphcd).
	env []string
}

// process is a graphcd process a test started.
type process struct {
	// what names it in failures: "graphcd server as graphcd-server".
	what string
	logs *lockedBuffer
	cmd  *exec.Cmd
	// drained is closed once stderr is read to its end.
	drained  chan struct{}
	finished bool
	opts     runOptions
}

// start runs `graphcd <args>` as opts say and waits until ready says it
// is ready. It keeps running until finish, which the test's cleanup calls
// if the test did not.
func start(t *testing.T, ns string, opts runOptions, ready func(ctx context.Context, logs string) bool, args ...string) *process {
	t.Helper()
	bin, err := graphcdBinary()
	if err != nil {
		t.Fatal(err)
	}
	p := &process{what: "graphcd " + args[0], logs: &lockedBuffer{}, drained: make(chan struct{}), opts: opts}
	args = append(args, "--log-format", "text")
	if opts.sa != "" {
		p.what += " as " + opts.sa
		args = append(args, "--kubeconfig", impersonatingKubeconfig(t, ns, opts.sa), "--namespace", ns)
	} else {
		p.what += " without Kubernetes credentials"
	}
	// Not t.Context(): finish, in a cleanup, still needs the process.
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), bin, args...)
	for _, kv := range os.Environ() {
		// Without a ServiceAccount, nothing that leads to credentials:
		// the in-cluster variables, ~/.kube.
		noCredentials := opts.sa == "" && (strings.HasPrefix(kv, "KUBERNETES_") || strings.HasPrefix(kv, "HOME="))
		if !strings.HasPrefix(kv, "GRAPHCD_") && !strings.HasPrefix(kv, "KUBECONFIG=") && !noCredentials {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if opts.sa == "" {
		cmd.Env = append(cmd.Env, "HOME="+t.TempDir())
	}
	cmd.Env = append(cmd.Env, opts.env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.cmd = cmd
	go func() {
		defer close(p.drained)
		lines := bufio.NewScanner(stderr)
		lines.Buffer(nil, 1<<20)
		for lines.Scan() {
			p.logs.add(lines.Text() + "\n")
		}
		_, _ = io.Copy(io.Discard, stderr) // a line too long: never block graphcd
	}()
	t.Cleanup(func() { p.finish(t) })

	err = wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return ready(ctx, p.logs.String()), nil
	})
	if err != nil {
		t.Fatalf("%s not ready: %v\nlogs:\n%s", p.what, err, p.logs)
	}
	return p
}

// finish stops the process with SIGTERM, once, and fails the test if it
// logged a refusal opts.refused does not accept. It returns the logs.
func (p *process) finish(t *testing.T) string {
	t.Helper()
	if !p.finished {
		p.finished = true
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		<-p.drained
		_ = p.cmd.Wait()
		if bad := p.unexpectedRefusals(); bad != "" {
			t.Errorf("%s was refused a request:\n%s\nlogs:\n%s", p.what, bad, p.logs)
		}
	}
	return p.logs.String()
}

// unexpectedRefusals returns the log lines saying "forbidden" that
// opts.refused does not accept.
func (p *process) unexpectedRefusals() string {
	var bad strings.Builder
	for line := range strings.Lines(p.logs.String()) {
		if strings.Contains(strings.ToLower(line), "forbidden") && (p.opts.refused == nil || !p.opts.refused(line)) {
			bad.WriteString(line)
		}
	}
	return bad.String()
}

// impersonatingKubeconfig writes the cluster's admin kubeconfig acting as
// ServiceAccount sa of ns.
func impersonatingKubeconfig(t *testing.T, ns, sa string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := install.WriteKubeconfigAs(cluster.Kubeconfig, path, ns, sa); err != nil {
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
