//go:build integration

package console

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/auth/accounts"
	"github.com/graphcd/graphcd/internal/kubewatch"
)

// shellPod is the Pod the terminal opens a shell in; on the KWOK node the
// shell runs on this machine (KWOK's ClusterExec, see localcluster).
const shellPod = `apiVersion: v1
kind: Pod
metadata:
  name: shell
spec:
  containers:
  - name: app
    image: registry.example.com/app:1.0
`

// TestTerminal drives the web terminal in Chromium against a server
// running its controller, with exec.enabled: admin opens a terminal into
// the app's Pod, runs a command and sees its output; logging out revokes
// the session's token and the server closes the terminal saying so; the
// account viewer, who may see the app but has no exec permission, is
// refused with the reason shown (see web/e2e/terminal.mjs).
func TestTerminal(t *testing.T) {
	if skipReason != "" {
		t.Skip("browser test skipped: " + skipReason)
	}
	base, ns := startServer(t, true,
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "graphcd-cm"},
			Data:       map[string]string{"exec.enabled": "true", "accounts.viewer": "login"},
		},
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "graphcd-rbac-cm"},
			Data:       map[string]string{"policy.csv": "p, viewer, applications, get, */*, allow\n"},
		})
	store := accounts.NewStore(kubewatch.NewSource(t.Context(), cluster.Client, ns))
	if err := store.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	const viewerPassword = "viewer-password-1"
	if err := store.SetPassword(t.Context(), "viewer", viewerPassword); err != nil {
		t.Fatal(err)
	}
	repo := serveRepo(t, map[string]string{"shell/pod.yaml": shellPod})
	kube := newKube(t)
	ensureDefaultProject(t, kube, ns)
	app := gitApp(ns, "shell", "default", repo, "shell")
	app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}
	if err := kube.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	runScript(t, "e2e/terminal.mjs", base, ns, "VIEWER_PASSWORD="+viewerPassword)
}
