//go:build integration

package deploy_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The chart's renders applied to the local cluster as the kustomizations
// are (install_integration_test.go): server-side, in a namespace of their
// own under the restricted Pod Security profile, until every workload is
// ready. Helm itself is not run: what it would apply is.

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
	})
}

// applyChart renders the chart with values into a new restricted
// namespace, checks every object as the kustomizations' are checked,
// applies the hooks and then the rest, waits for the workloads and
// returns the namespace.
func applyChart(t *testing.T, values map[string]any) string {
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
