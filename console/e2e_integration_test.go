//go:build integration

package console

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/cgi" //nolint:gosec // G504: Go 1.26 is not affected; serves git http-backend on loopback
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/testenv/graphcdbin"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// chromium is where Debian's package puts the browser (make test-deps
// installs it).
const chromium = "/usr/bin/chromium"

var (
	cluster *localcluster.Cluster
	// skipReason says why the browser tests cannot run here; empty when
	// they can.
	skipReason string
)

func TestMain(m *testing.M) {
	if skipReason = missingForBrowser(); skipReason != "" {
		os.Exit(m.Run()) // no cluster: the browser tests skip
	}
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Full}, &cluster))
}

// missingForBrowser names what the end-to-end tests lack, if anything.
func missingForBrowser() string {
	if _, err := os.Stat(chromium); err != nil {
		return chromium + " is missing (make test-deps installs Debian's chromium)"
	}
	if _, err := exec.LookPath("node"); err != nil {
		return "node is not on PATH (install Node.js 20 or later)"
	}
	if _, err := os.Stat("web/node_modules/playwright-core"); err != nil {
		return "console/web/node_modules is missing (run make console, or npm ci in console/web)"
	}
	if !Built() {
		return "this binary was built without the console (run make console first)"
	}
	return ""
}

// syncBuffer collects a process's output while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServer builds `graphcd server` with this console embedded and runs
// it on the cluster in a namespace of its own, with or without the
// controller (without it the test writes the apps' status itself). It
// returns the base URL and the namespace. Config maps (graphcd-cm,
// graphcd-rbac-cm) are created before the server starts.
// serverMemoryLimit is the GOMEMLIMIT of the servers the tests start.
const serverMemoryLimit = 1 << 30

func startServer(t testing.TB, controller bool, config ...*corev1.ConfigMap) (base, ns string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "graphcd")
	if err := graphcdbin.Build(t.Context(), bin); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(t.Context(), bin, "install", "crds", "--kubeconfig", cluster.Kubeconfig).CombinedOutput(); err != nil {
		t.Fatalf("graphcd install crds: %v\n%s", err, out)
	}
	ns = cluster.Namespace(t)
	for _, cm := range config {
		if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	base = "https://127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), bin, "server", "--kubeconfig", cluster.Kubeconfig,
		"--namespace", ns, "--listen", "127.0.0.1:"+strconv.Itoa(port), "--controller="+strconv.FormatBool(controller), "--log-format", "text")
	// Under a memory limit, as a manifest runs it: the status page shows it.
	cmd.Env = append(os.Environ(), "GOMEMLIMIT="+strconv.Itoa(serverMemoryLimit))
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("graphcd server log:\n%s", logs)
		}
	})
	deadline := time.Now().Add(2 * time.Minute)
	for {
		// The server serves HTTPS with the self-signed certificate it
		// keeps in graphcd-secret; this client trusts only that one.
		var resp *http.Response
		cert, err := serverCert(t, ns)
		if err == nil {
			pool := x509.NewCertPool()
			pool.AddCert(cert)
			c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
			resp, err = c.Get(base + "/readyz")
		}
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, ns
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("graphcd server not ready after 2m (%v)\n%s", err, logs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// createApps creates the three apps the browser script expects, with the
// status a controller would have written; cache is in project "locked".
func createApps(t *testing.T, kube client.Client, ns string) {
	t.Helper()
	for _, a := range []struct {
		name, project string
		sync          v1alpha1.SyncStatusCode
		health        v1alpha1.HealthStatusCode
	}{
		{"web", "default", v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy},
		{"db", "default", v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.HealthStatusDegraded},
		{"cache", "locked", v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusProgressing},
	} {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: a.name, Namespace: ns},
			Spec: v1alpha1.ApplicationSpec{
				Project:     a.project,
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: a.name, TargetRevision: "main"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: a.name},
			},
		}
		if err := kube.Create(t.Context(), app); err != nil {
			t.Fatal(err)
		}
		app.Status.Sync.Status = a.sync
		app.Status.Health.Status = a.health
		app.Status.Health.Message = fmt.Sprintf("%s is %s", a.name, a.health)
		if err := kube.Status().Update(t.Context(), app); err != nil {
			t.Fatal(err)
		}
	}
}

// createManyApps creates n apps named app-00001 ... with a mix of
// statuses, eight at a time.
func createManyApps(t testing.TB, kube client.Client, ns string, n int) {
	t.Helper()
	syncs := []v1alpha1.SyncStatusCode{v1alpha1.SyncStatusCodeSynced, v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.SyncStatusCodeSynced}
	healths := []v1alpha1.HealthStatusCode{v1alpha1.HealthStatusHealthy, v1alpha1.HealthStatusHealthy, v1alpha1.HealthStatusDegraded, v1alpha1.HealthStatusProgressing, v1alpha1.HealthStatusHealthy}
	inParallel(t, "create apps", n, func(i int) error {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%05d", i), Namespace: ns},
			Spec: v1alpha1.ApplicationSpec{
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: fmt.Sprintf("apps/%d", i)},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: fmt.Sprintf("team-%d", i%50)},
			},
		}
		if err := kube.Create(context.Background(), app); err != nil {
			return err
		}
		app.Status.Sync.Status = syncs[i%len(syncs)]
		app.Status.Health.Status = healths[i%len(healths)]
		return kube.Status().Update(context.Background(), app)
	})
}

// inParallel runs do(0) ... do(n-1) eight at a time and fails tb with the
// first error, once all have run.
func inParallel(tb testing.TB, what string, n int, do func(i int) error) {
	tb.Helper()
	next := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := do(i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
}

// TestLoginAndList drives the console in Chromium against the real server:
// login through the form, the apps with their badges, Sync buttons only
// where RBAC allows (admin may not sync project "locked"), a health filter
// that lands in the URL (see web/e2e/login-and-list.mjs for every step).
// Screenshots go to the test's artifact directory (go test -artifacts).
func TestLoginAndList(t *testing.T) {
	if skipReason != "" {
		t.Skip("browser test skipped: " + skipReason)
	}
	base, ns := startServer(t, false, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "graphcd-rbac-cm"},
		Data:       map[string]string{"policy.csv": "p, admin, applications, sync, locked/*, deny\n"},
	})
	createApps(t, newKube(t), ns)
	runScript(t, "e2e/login-and-list.mjs", base, ns)
}

// TestLiveBadges drives the console against a server running its
// controller and a real git server: an app whose ConfigMap is not in the
// cluster shows OutOfSync + Missing; after a click on its Sync button the
// row turns Healthy with the sync done, without a reload (see
// web/e2e/live-badges.mjs).
func TestLiveBadges(t *testing.T) {
	if skipReason != "" {
		t.Skip("browser test skipped: " + skipReason)
	}
	base, ns := startServer(t, true)
	repo := serveRepo(t, map[string]string{
		"live/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: live\ndata:\n  greeting: hello\n",
	})
	kube := newKube(t)
	ensureDefaultProject(t, kube, ns)
	if err := kube.Create(t.Context(), gitApp(ns, "live", "default", repo, "live")); err != nil {
		t.Fatal(err)
	}
	runScript(t, "e2e/live-badges.mjs", base, ns)
}

// ensureDefaultProject creates the default project of ns, allowing every
// source and destination.
func ensureDefaultProject(t testing.TB, kube client.Client, ns string) {
	t.Helper()
	project := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:  []string{"*"},
			Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		},
	}
	// The server may have created the default project already.
	if err := kube.Create(t.Context(), project); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// gitApp is an application of path in repo at main, in project, deployed
// to ns of the cluster graphcd runs in, without automated sync.
func gitApp(ns, name, project, repo, path string) *v1alpha1.Application {
	return &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     project,
			Source:      &v1alpha1.ApplicationSource{RepoURL: repo, Path: path, TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
		},
	}
}

// serverCert returns the certificate graphcd server generated in ns.
func serverCert(t testing.TB, ns string) (*x509.Certificate, error) {
	sec, err := cluster.Client.CoreV1().Secrets(ns).Get(t.Context(), "graphcd-secret", metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(sec.Data["tls.crt"])
	if block == nil {
		return nil, errors.New("graphcd-secret has no tls.crt yet")
	}
	return x509.ParseCertificate(block.Bytes)
}

// runScript runs a browser script as admin against base, with env added
// to its environment; screenshots go to the test's artifact directory.
func runScript(t testing.TB, script, base, ns string, env ...string) []byte {
	t.Helper()
	secret, err := cluster.Client.CoreV1().Secrets(ns).Get(t.Context(), "graphcd-initial-admin-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("initial admin secret: %v", err)
	}
	cert, err := serverCert(t, ns)
	if err != nil {
		t.Fatalf("server certificate: %v", err)
	}
	// Chromium trusts exactly the server's key, as a user who accepted it.
	spki := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	artifacts := t.ArtifactDir()
	cmd := exec.CommandContext(t.Context(), "node", script, base, "admin", string(secret.Data["password"]), artifacts)
	cmd.Dir = "web"
	cmd.Env = append(append(os.Environ(), "CHROMIUM="+chromium, "GRAPHCD_E2E_TRUST_SPKI="+base64.StdEncoding.EncodeToString(spki[:])), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	t.Logf("%s:\n%s", script, out)
	if err != nil {
		t.Fatalf("%s: %v (screenshots in %s)", script, err, artifacts)
	}
	return out
}

func newKube(t testing.TB) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	kube, err := client.New(cluster.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return kube
}

// serveRepo commits files on branch main of a new repository and serves it
// read-only with `git http-backend` on loopback; it returns the clone URL.
func serveRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not on PATH (make test-deps installs it)")
	}
	work, root := t.TempDir(), t.TempDir()
	for name, content := range files {
		path := filepath.Join(work, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=graphcd test", "GIT_AUTHOR_EMAIL=test@graphcd.invalid",
		"GIT_COMMITTER_NAME=graphcd test", "GIT_COMMITTER_EMAIL=test@graphcd.invalid")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "."},
		{"commit", "-q", "-m", "Add the app"},
		{"clone", "-q", "--bare", ".", filepath.Join(root, "apps.git")},
	} {
		cmd := exec.CommandContext(t.Context(), gitBin, args...)
		cmd.Dir, cmd.Env = work, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	srv := httptest.NewServer(&cgi.Handler{Path: gitBin, Args: []string{"http-backend"}, Env: []string{
		"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull,
	}})
	t.Cleanup(srv.Close)
	return srv.URL + "/apps.git"
}

// BenchmarkListScale measures the console's applications list with
// GRAPHCD_CONSOLE_APPS applications (default 10,000; created once) through
// web/e2e/list-scale.mjs: ms from navigation to the first row, to the
// total count, and for the next page after a scroll to the end.
func BenchmarkListScale(b *testing.B) {
	if skipReason != "" {
		b.Skip("browser benchmark skipped: " + skipReason)
	}
	n := 10_000
	if v := os.Getenv("GRAPHCD_CONSOLE_APPS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatalf("GRAPHCD_CONSOLE_APPS=%q: %v", v, err)
		}
	}
	base, ns := startServer(b, false)
	createManyApps(b, newKube(b), ns, n)
	var firstRow, total, nextPage float64
	for b.Loop() {
		out := runScript(b, "e2e/list-scale.mjs", base, ns)
		var m struct{ FirstRowMs, TotalMs, NextPageMs float64 }
		var figures []byte
		for line := range bytes.Lines(out) {
			if bytes.HasPrefix(line, []byte("{")) {
				figures = line
			}
		}
		if err := json.Unmarshal(figures, &m); err != nil {
			b.Fatalf("figures from the script: %v\n%s", err, out)
		}
		firstRow, total, nextPage = firstRow+m.FirstRowMs, total+m.TotalMs, nextPage+m.NextPageMs
	}
	b.ReportMetric(firstRow/float64(b.N), "ms-first-row")
	b.ReportMetric(total/float64(b.N), "ms-total-count")
	b.ReportMetric(nextPage/float64(b.N), "ms-next-page")
}
