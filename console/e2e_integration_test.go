//go:build integration

package console

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/hack/localcluster"
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
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Minimal}, &cluster))
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
// it on the cluster, without the controller (the test writes the apps'
// status itself), in a namespace of its own. It returns the base URL and
// the namespace.
func startServer(t *testing.T) (base, ns string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "graphcd")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/graphcd/graphcd/cmd/graphcd").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, err := exec.CommandContext(t.Context(), bin, "install", "crds", "--kubeconfig", cluster.Kubeconfig).CombinedOutput(); err != nil {
		t.Fatalf("graphcd install crds: %v\n%s", err, out)
	}
	ns = cluster.Namespace(t)
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	base = "http://127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), bin, "server", "--kubeconfig", cluster.Kubeconfig,
		"--namespace", ns, "--listen", "127.0.0.1:"+strconv.Itoa(port), "--controller=false", "--log-format", "text")
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
		resp, err := http.Get(base + "/readyz")
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
// status a controller would have written.
func createApps(t *testing.T, ns string) {
	t.Helper()
	ctrllog.SetLogger(logr.Discard())
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	kube, err := client.New(cluster.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct {
		name   string
		sync   v1alpha1.SyncStatusCode
		health v1alpha1.HealthStatusCode
	}{
		{"web", v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy},
		{"db", v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.HealthStatusDegraded},
		{"cache", v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusProgressing},
	} {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: a.name, Namespace: ns},
			Spec: v1alpha1.ApplicationSpec{
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

// TestLoginAndList drives the console in Chromium against the real server:
// login through the form, the apps with their badges, a health filter that
// lands in the URL (see web/e2e/login-and-list.mjs for every step).
// Screenshots go to the test's artifact directory (go test -artifacts).
func TestLoginAndList(t *testing.T) {
	if skipReason != "" {
		t.Skip("browser test skipped: " + skipReason)
	}
	base, ns := startServer(t)
	createApps(t, ns)
	secret, err := cluster.Client.CoreV1().Secrets(ns).Get(t.Context(), "graphcd-initial-admin-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("initial admin secret: %v", err)
	}
	artifacts := t.ArtifactDir()
	script := exec.CommandContext(t.Context(), "node", "e2e/login-and-list.mjs", base, "admin", string(secret.Data["password"]), artifacts)
	script.Dir = "web"
	script.Env = append(os.Environ(), "CHROMIUM="+chromium)
	out, err := script.CombinedOutput()
	t.Logf("browser script:\n%s", out)
	if err != nil {
		t.Fatalf("browser script: %v (screenshots in %s)", err, artifacts)
	}
}
