//go:build integration

package deploy_test

import (
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The chart's renders applied to the local cluster as the kustomizations
// are (install_integration_test.go): server-side, in a namespace of their
// own under the restricted Pod Security profile, until every workload is
// ready; and Helm itself installs, upgrades and uninstalls the HA chart.

func TestChartInstall(t *testing.T) {
	t.Parallel()
	ns := applyChart(t, nil)
	checkAccess(t, ns, []access{
		{sa: "graphcd-server", verb: "create", group: "apps", resource: "deployments", namespace: "default", allowed: true},
		{sa: "graphcd-server", verb: "update", group: "graphcd.io", resource: "applications", sub: "status", namespace: "own", allowed: true},
	})
}

func TestChartHA(t *testing.T) {
	t.Parallel()
	ns := applyChart(t, map[string]any{"ha": map[string]any{"enabled": true}})
	checkAccess(t, ns, []access{
		{sa: "graphcd-server", verb: "create", group: "apps", resource: "deployments", namespace: "default", allowed: false},
		{sa: "graphcd-controller", verb: "create", group: "apps", resource: "deployments", namespace: "default", allowed: true},
		{sa: "graphcd-secret-init", verb: "create", resource: "secrets", namespace: "own", allowed: true},
		{sa: "graphcd-server", verb: "patch", group: "graphcd.io", resource: "applicationsets", namespace: "own", allowed: true},
	})
}

// applyChart renders the chart with values into a new restricted
// namespace, checks every object as the kustomizations' are checked,
// applies the hooks and then the rest, waits for the workloads and
// returns the namespace.
func applyChart(t *testing.T, values map[string]any) string {
	t.Helper()
	ns := restrictedNamespace(t)
	objs := renderChart(t, ns, values)
	for _, o := range objs {
		checkPodSecurity(t, o)
		checkLabels(t, o)
	}
	renameClusterRBAC(t, objs, ns)
	apply(t, objs)
	waitReady(t, ns, objs)
	return ns
}

// TestChartHelmLifecycle runs Helm itself on the HA chart: install with
// --wait (the secret-init hook first), an upgrade to another image tag,
// and uninstall. The CRDs are applied beforehand and left out of the
// release, as the other tests share them.
func TestChartHelmLifecycle(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := restrictedNamespace(t)
	var crds []*unstructured.Unstructured
	for _, o := range renderChart(t, ns, nil) {
		if o.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, o)
		}
	}
	apply(t, crds)

	settings := cli.New()
	settings.KubeConfig = cluster.Kubeconfig
	settings.SetNamespace(ns)
	cfg := new(action.Configuration)
	if err := cfg.Init(settings.RESTClientGetter(), ns, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	values := func(tag string) map[string]any {
		return map[string]any{
			"ha":    map[string]any{"enabled": true},
			"crds":  map[string]any{"install": false},
			"image": map[string]any{"tag": tag},
		}
	}

	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = releaseName, ns
	install.Wait, install.WaitForJobs, install.Timeout = true, true, readyTimeout
	if _, err := install.Run(chrt, values("v0.0.1")); err != nil {
		t.Fatalf("helm install: %v%s", err, podProblems(ctx, ns))
	}
	t.Cleanup(func() {
		// Removes the ClusterRoles and bindings if the test stopped early.
		_, _ = action.NewUninstall(cfg).Run(releaseName)
	})
	checkHookGone(t, ns)

	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = ns
	upgrade.Wait, upgrade.WaitForJobs, upgrade.Timeout = true, true, readyTimeout
	if _, err := upgrade.Run(releaseName, chrt, values("v0.0.2")); err != nil {
		t.Fatalf("helm upgrade: %v%s", err, podProblems(ctx, ns))
	}
	checkHookGone(t, ns)
	for _, name := range []string{"graphcd-server", "graphcd-repo-server"} {
		d, err := cluster.Client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Spec.Template.Spec.Containers[0].Image; got != "ghcr.io/graphcd/graphcd:v0.0.2" || !deploymentReady(d) {
			t.Errorf("Deployment %s after the upgrade: image %s, ready %v", name, got, deploymentReady(d))
		}
	}

	if _, err := action.NewUninstall(cfg).Run(releaseName); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	if _, err := cluster.Client.RbacV1().ClusterRoles().Get(ctx, "graphcd-controller", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ClusterRole graphcd-controller after helm uninstall: %v, want not found", err)
	}
}

// checkHookGone wants Helm to have deleted the secret-init hook's objects
// once its Job succeeded.
func checkHookGone(t *testing.T, ns string) {
	t.Helper()
	ctx := t.Context()
	if _, err := cluster.Client.BatchV1().Jobs(ns).Get(ctx, "graphcd-secret-init", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Job graphcd-secret-init after its hook succeeded: %v, want not found", err)
	}
	if _, err := cluster.Client.RbacV1().Roles(ns).Get(ctx, "graphcd-secret-init", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Role graphcd-secret-init after its hook succeeded: %v, want not found", err)
	}
}

// restrictedNamespace creates a namespace for the test whose Pods must
// meet the restricted Pod Security Standard.
func restrictedNamespace(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	nsObj, err := cluster.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nsObj.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	if _, err := cluster.Client.CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}
