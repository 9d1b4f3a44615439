//go:build integration

package console

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// guestbook is a Deployment of two replicas; KWOK makes its Pods Ready.
const guestbook = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: guestbook
spec:
  replicas: 2
  selector:
    matchLabels:
      app: guestbook
  template:
    metadata:
      labels:
        app: guestbook
    spec:
      containers:
      - name: web
        image: registry.example.com/guestbook:1.0
`

// createDefaultProject lets applications deploy anything anywhere.
func createDefaultProject(t testing.TB, kube client.Client, ns string) {
	t.Helper()
	project := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:  []string{"*"},
			Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		},
	}
	// The server may have created it already.
	if err := kube.Create(t.Context(), project); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// createApp creates an application of path in repo, deployed to ns,
// without automated sync.
func createApp(t testing.TB, kube client.Client, ns, name, repo, path string) {
	t.Helper()
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repo, Path: path, TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: ns},
		},
	}
	if err := kube.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
}

// waitForFile waits until path exists or ctx ends.
func waitForFile(ctx context.Context, path string) error {
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestAppPage drives the application page in Chromium against a server
// running its controller and a real git server (see web/e2e/app-page.mjs):
// from the list to the page, a sync, the Deployment → ReplicaSet → Pod
// graph and table; then this test scales the Deployment in the cluster
// behind the controller's back, and the page turns OutOfSync live with
// replicas 3 against 2 in the resource panel's diff. Screenshots: list,
// tree, diff.
func TestAppPage(t *testing.T) {
	if skipReason != "" {
		t.Skip("browser test skipped: " + skipReason)
	}
	base, ns := startServer(t, true)
	repo := serveRepo(t, map[string]string{"guestbook/deployment.yaml": guestbook})
	kube := newKube(t)
	createDefaultProject(t, kube, ns)
	createApp(t, kube, ns, "guestbook", repo, "guestbook")

	signals := t.TempDir()
	t.Setenv("SIGNALS", signals)
	edited := make(chan error, 1)
	go func() {
		edited <- func() error {
			if err := waitForFile(t.Context(), filepath.Join(signals, "tree-shown")); err != nil {
				return err
			}
			patch := []byte(`{"spec":{"replicas":3}}`)
			if _, err := cluster.Client.AppsV1().Deployments(ns).Patch(context.WithoutCancel(t.Context()), "guestbook", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(signals, "edited"), nil, 0o600)
		}()
	}()
	runScript(t, "e2e/app-page.mjs", base, ns)
	if err := <-edited; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("edit the Deployment: %v", err)
	}
}
