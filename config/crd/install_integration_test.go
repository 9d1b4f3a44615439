//go:build integration

package crd_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/config/crd"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Minimal}, &cluster))
}

// Install makes the CRDs servable; an Argo-CD-style Application then
// round-trips through the typed client, and kubectl shows it with the
// printer columns and short names.
func TestInstallCreateAndList(t *testing.T) {
	ctx := t.Context()
	ext := apiextensionsclientset.NewForConfigOrDie(cluster.Config)
	if err := crd.Install(ctx, ext); err != nil {
		t.Fatalf("Install: %v", err)
	}
	if err := crd.Install(ctx, ext); err != nil {
		t.Fatalf("second Install (idempotent): %v", err)
	}
	if err := crd.Established(ctx, ext); err != nil {
		t.Fatalf("Established after Install: %v", err)
	}

	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	ns := cluster.Namespace(t)
	b, err := os.ReadFile("../../api/v1alpha1/testdata/application.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var app v1alpha1.Application
	if err := yaml.UnmarshalStrict(b, &app); err != nil {
		t.Fatal(err)
	}
	app.Namespace = ns
	app.Finalizers = nil // no controller runs here to remove it
	want := app.Spec.DeepCopy()
	if err := c.Create(ctx, &app); err != nil {
		t.Fatalf("create Application: %v", err)
	}

	app.Status.Sync.Status = v1alpha1.SyncStatusCodeSynced
	app.Status.Sync.Revision = "4.11.3"
	app.Status.Health.Status = v1alpha1.HealthStatusHealthy
	if err := c.Status().Update(ctx, &app); err != nil {
		t.Fatalf("update status: %v", err)
	}

	var got v1alpha1.Application
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: app.Name}, &got); err != nil {
		t.Fatalf("get Application: %v", err)
	}
	if diff := cmp.Diff(&got.Spec, want); diff != "" {
		t.Errorf("spec after round trip (-got +want):\n%s", diff)
	}
	if got.Status.Health.Status != v1alpha1.HealthStatusHealthy {
		t.Errorf("status.health.status = %q, want Healthy", got.Status.Health.Status)
	}

	for _, resource := range []string{"applications", "apps", "app"} {
		out := kubectl(t, "get", resource, "-n", ns)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 {
			t.Fatalf("kubectl get %s printed %d lines, want header + 1 row:\n%s", resource, len(lines), out)
		}
		header := strings.Fields(lines[0])
		if diff := cmp.Diff(header, []string{"NAME", "PROJECT", "SYNC", "HEALTH", "REVISION", "AGE"}); diff != "" {
			t.Errorf("kubectl get %s columns (-got +want):\n%s", resource, diff)
		}
		row := regexp.MustCompile(`^ingress-nginx\s+platform\s+Synced\s+Healthy\s+4\.11\.3\s+\d+s$`)
		if !row.MatchString(lines[1]) {
			t.Errorf("kubectl get %s row = %q, want name, project, sync, health, revision, age", resource, lines[1])
		}
	}
	if out := kubectl(t, "get", "appproj", "-n", ns); !strings.Contains(out, "No resources found") {
		t.Errorf("kubectl get appproj = %q, want the short name to resolve to an empty list", out)
	}
}

func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	bins, err := localcluster.EnsureBinaries(t.Context(), localcluster.BinKubectl)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), bins.Kubectl, append([]string{"--kubeconfig", cluster.Kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
