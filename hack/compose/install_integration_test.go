//go:build integration

package compose

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/auth/accounts"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// TestInstallScript runs hack/compose/install.sh, the install service's
// script, with the environment docker-compose.yml gives it, against a
// local cluster whose KWOK nodes roll the Deployment out, in place of
// kind. Docker, kind and curl cannot run here: stand-ins record their
// calls and answer as they would, and the test writes the admin password
// as graphcd server would. So this proves the script's Kubernetes half
// (namespace, install manifests, rollout, CRDs, Applications, password,
// the message) and only the order and arguments of its Docker half.
func TestInstallScript(t *testing.T) {
	ctx, root := t.Context(), localcluster.RepoRoot()
	p, err := loadProject(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	bins, err := localcluster.EnsureBinaries(ctx, localcluster.BinKubectl)
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := localcluster.Start(ctx, localcluster.Options{Mode: localcluster.Full})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Error(err)
		}
	})

	env := map[string]string{}
	for k, v := range p.Services["install"].Environment {
		if v != nil {
			env[k] = *v
		}
	}
	ns := env["GRAPHCD_NAMESPACE"]

	bin := t.TempDir()
	calls := filepath.Join(bin, "calls")
	standIn := func(name, body string) {
		t.Helper()
		script := "#!/bin/sh\necho \"" + name + " $*\" >>" + calls + "\n" + body
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o700); err != nil { //nolint:gosec // a test's stand-in command
			t.Fatal(err)
		}
	}
	standIn("docker", `[ "$1" = load ] && echo "Loaded image: graphcd:compose-amd64"`+"\nexit 0\n")
	standIn("kind", "exit 0\n")
	standIn("curl", "exit 0\n")
	if err := os.Symlink(bins.Kubectl, filepath.Join(bin, "kubectl")); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(root, "hack/compose/install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(bin, "install.sh")
	if err := os.WriteFile(script, []byte(strings.ReplaceAll(string(text), src+"/", root+"/")), 0o600); err != nil {
		t.Fatal(err)
	}

	// graphcd server's part: the password, once its Deployment exists.
	const password = "test-admin-password" //nolint:gosec // a test's stand-in
	serverCtx, stopServer := context.WithCancel(ctx)
	defer stopServer()
	go func() {
		for serverCtx.Err() == nil {
			if _, err := cluster.Client.AppsV1().Deployments(ns).Get(serverCtx, env["GRAPHCD_DEPLOYMENT"], metav1.GetOptions{}); err == nil {
				_, _ = cluster.Client.CoreV1().Secrets(ns).Create(serverCtx, &corev1.Secret{
					ObjectMeta: metav1.ObjectMeta{Name: accounts.InitialAdminSecretName, Namespace: ns},
					Data:       map[string][]byte{"password": []byte(password)},
				}, metav1.CreateOptions{})
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()

	runCtx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(runCtx, "sh", script)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "KUBECONFIG="+cluster.Kubeconfig)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}

	for _, want := range []string{env["CONSOLE_URL"] + "/", "admin / " + password, env["GIT_URL"]} {
		if !strings.Contains(string(out), want) {
			t.Errorf("install.sh printed no %q:\n%s", want, out)
		}
	}
	got, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	wantCalls := []string{
		"docker load -i " + env["IMAGE_ARCHIVE"],
		"docker tag graphcd:compose-amd64 " + env["GRAPHCD_IMAGE"],
		"kind load docker-image " + env["GRAPHCD_IMAGE"] + " --name " + env["KIND_CLUSTER"],
		"docker image rm graphcd:compose-amd64 " + env["GRAPHCD_IMAGE"],
		"curl -fsSk -o /dev/null https://" + env["KIND_CLUSTER"] + "-control-plane:" + env["NODE_PORT"] + "/readyz",
	}
	if lines := strings.Split(strings.TrimSpace(string(got)), "\n"); !slices.Equal(lines, wantCalls) {
		t.Errorf("Docker, kind and curl calls:\n%s\nwant:\n%s", got, strings.Join(wantCalls, "\n"))
	}

	apps, err := decodeAll(string(mustRead(t, filepath.Join(root, appsFile))))
	if err != nil {
		t.Fatal(err)
	}
	kubectl := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, bins.Kubectl, append([]string{"--kubeconfig", cluster.Kubeconfig}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	for _, a := range apps {
		if a.GetKind() != "Application" {
			continue
		}
		if got := kubectl("-n", ns, "get", "applications.graphcd.io", a.GetName(), "-o", "jsonpath={.spec.source.repoURL}"); got == "" {
			t.Errorf("Application %s was not created", a.GetName())
		}
	}
	if got := kubectl("-n", ns, "get", "deployment", env["GRAPHCD_DEPLOYMENT"], "-o", "jsonpath={.spec.template.spec.containers[*].image}"); !strings.Contains(got, env["GRAPHCD_IMAGE"]) {
		t.Errorf("Deployment %s runs %q, want %s", env["GRAPHCD_DEPLOYMENT"], got, env["GRAPHCD_IMAGE"])
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
