//go:build integration

package console

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// guestbookService and guestbookIngress put guestbook's Pods behind a
// Service and an Ingress, for the network view.
const (
	guestbookService = `apiVersion: v1
kind: Service
metadata:
  name: guestbook
spec:
  selector:
    app: guestbook
  ports:
  - port: 80
`
	guestbookIngress = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: guestbook
spec:
  rules:
  - host: guestbook.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: guestbook
            port:
              number: 80
`
)

// day2Settings turns status badges on and gives deep links to
// applications, projects and Deployments.
var day2Settings = &corev1.ConfigMap{
	ObjectMeta: metav1.ObjectMeta{Name: "graphcd-cm"},
	Data: map[string]string{
		"statusbadge.enabled": "true",
		"application.links":   "- title: Dashboard\n  url: https://dash.example.com/d/{{ .app.metadata.name }}\n  description: the app's dashboard\n",
		"project.links":       "- title: Audit\n  url: https://audit.example.com/?project={{ .project.metadata.name }}\n",
		"resource.links":      "- title: Deployment logs\n  url: https://logs.example.com/?deploy={{ .resource.metadata.name }}\n  if: resource.kind == \"Deployment\"\n",
	},
}

// TestAppDay2 drives the application page's day-2 views in Chromium
// against a server running its controller (see web/e2e/app-day2.mjs): the
// deep links of the app, a Deployment and the project; the status badge
// with its snippets; the project's orphaned resources shown on request,
// one created meanwhile appearing live; kind and health filters kept in
// the URL; the Pods view by owner and by node; the network view from
// Ingress to Service to Pods; the Parameters tab saving a directory
// option, which this test then reads from the Application, and showing
// another app's Helm parameters read-only to a user who may not update it.
func TestAppDay2(t *testing.T) {
	if skipReason != "" {
		t.Skip("browser test skipped: " + skipReason)
	}
	// admin may not change "readonly": its Parameters tab shows them read-only.
	base, ns := startServer(t, true, day2Settings, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "graphcd-rbac-cm"},
		Data:       map[string]string{"policy.csv": "p, admin, applications, update, default/readonly, deny\n"},
	})
	repo := serveRepo(t, map[string]string{
		"guestbook/deployment.yaml": guestbook,
		"guestbook/service.yaml":    guestbookService,
		"guestbook/ingress.yaml":    guestbookIngress,
		"chart/Chart.yaml":          "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"chart/templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  tag: {{ .Values.image.tag | quote }}\n",
	})
	kube := newKube(t)
	monitorOrphans(t, kube, ns)
	// An object of the namespace no application tracks.
	createConfigMap(t, ns, "stray")
	app := gitApp(ns, "guestbook", "default", repo, "guestbook")
	app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}
	if err := kube.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}

	readonly := gitApp(ns, "readonly", "default", repo, "chart")
	readonly.Spec.Source.Helm = &v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{{Name: "image.tag", Value: "v1"}}}
	if err := kube.Create(t.Context(), readonly); err != nil {
		t.Fatal(err)
	}

	signals := t.TempDir()
	t.Setenv("SIGNALS", signals)
	added := make(chan error, 1)
	go func() {
		added <- func() error {
			if err := waitForFile(t.Context(), filepath.Join(signals, "orphans-shown")); err != nil {
				return err
			}
			ctx := context.WithoutCancel(t.Context())
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stray-late", Namespace: ns}}
			if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(signals, "orphan-added"), nil, 0o600); err != nil {
				return err
			}
			if err := waitForFile(t.Context(), filepath.Join(signals, "orphan-seen")); err != nil {
				return err
			}
			if err := cluster.Client.CoreV1().ConfigMaps(ns).Delete(ctx, "stray-late", metav1.DeleteOptions{}); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(signals, "orphan-removed"), nil, 0o600)
		}()
	}()
	runScript(t, "e2e/app-day2.mjs", base, ns)
	if err := <-added; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("create an orphan: %v", err)
	}

	var got v1alpha1.Application
	if err := kube.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "guestbook"}, &got); err != nil {
		t.Fatal(err)
	}
	if d := got.Spec.Source.Directory; d == nil || !d.Recurse {
		t.Errorf("after saving the Parameters tab, spec.source.directory = %+v, want recurse: true", d)
	}
	if got.Spec.Source.Path != "guestbook" || got.Spec.SyncPolicy == nil || got.Spec.SyncPolicy.Automated == nil {
		t.Errorf("saving the parameters changed other fields: %+v", got.Spec)
	}
}

// monitorOrphans makes the default project report orphaned resources.
func monitorOrphans(t *testing.T, kube client.Client, ns string) {
	t.Helper()
	createDefaultProject(t, kube, ns)
	var p v1alpha1.AppProject
	if err := kube.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "default"}, &p); err != nil {
		t.Fatal(err)
	}
	p.Spec.OrphanedResources = &v1alpha1.OrphanedResourcesMonitorSettings{}
	if err := kube.Update(t.Context(), &p); err != nil {
		t.Fatal(err)
	}
}

// createConfigMap creates an empty ConfigMap name in ns.
func createConfigMap(t *testing.T, ns, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
