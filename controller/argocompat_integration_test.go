//go:build integration

package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Resources Argo CD 3 deployed carry its tracking annotation; with the
// settings left at their defaults (an argocd-cm carried over without
// application.resourceTrackingMethod) graphcd finds them as they are,
// cluster-scoped ones whose id names the destination namespace included,
// and shows no difference, so nothing is re-applied. Resources tracked by
// the instance label alone, as Argo CD 2 left them, are not the app's.
func TestDefaultTrackingAdoptsArgoCD3Resources(t *testing.T) {
	t.Parallel()
	t.Run("annotation, as Argo CD 3 writes it", func(t *testing.T) {
		t.Parallel()
		const name = "argo3-app"
		role := "argo3-" + cluster.Namespace(t)
		gitRole := fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: %s\nrules: [{apiGroups: [\"\"], resources: [configmaps], verbs: [get]}]\n", role)
		gitCM := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: prod\n"
		dest, _ := newApp(t, name, map[string]string{"app/role.yaml": gitRole, "app/cm.yaml": gitCM})
		t.Cleanup(func() {
			_ = cluster.Client.RbacV1().ClusterRoles().Delete(context.Background(), role, metav1.DeleteOptions{})
		})
		createClusterRole(t, fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: %[1]s\n  annotations: {argocd.argoproj.io/tracking-id: \"%[2]s:rbac.authorization.k8s.io/ClusterRole:%[3]s/%[1]s\"}\nrules: [{apiGroups: [\"\"], resources: [configmaps], verbs: [get]}]\n", role, name, dest))
		apply(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: %[1]s\n  annotations: {argocd.argoproj.io/tracking-id: \"%[2]s:/ConfigMap:%[1]s/settings\"}\ndata:\n  mode: prod\n", dest, name))
		app := waitStatus(t, name, "Synced", func(s *v1alpha1.ApplicationStatus) bool {
			return s.Sync.Status == v1alpha1.SyncStatusCodeSynced && len(s.Resources) == 2
		})
		for _, r := range app.Status.Resources {
			if r.Status != v1alpha1.SyncStatusCodeSynced {
				t.Errorf("%s %s is %s, want Synced", r.Kind, r.Name, r.Status)
			}
		}
	})
	t.Run("label alone, as Argo CD 2 left it", func(t *testing.T) {
		t.Parallel()
		const name = "argo2-app"
		gitCM := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: prod\n"
		dest, _ := newApp(t, name, map[string]string{"app/cm.yaml": gitCM})
		apply(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: %s\n  labels: {app.kubernetes.io/instance: %s}\ndata:\n  mode: prod\n", dest, name))
		waitStatus(t, name, "OutOfSync with the ConfigMap Missing", func(s *v1alpha1.ApplicationStatus) bool {
			return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync && s.Health.Status == v1alpha1.HealthStatusMissing
		})
	})
}

// A cluster-scoped object Git gives a namespace is compared without one,
// as Argo CD compares it, so it pairs with the live object instead of
// showing one Missing resource and one not in Git.
func TestClusterScopedLosesGitNamespace(t *testing.T) {
	t.Parallel()
	const name = "clusterns-app"
	role := "clusterns-" + cluster.Namespace(t)
	manifest := func(ns string) string {
		return fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: %s\n  namespace: %s\nrules: [{apiGroups: [\"\"], resources: [secrets], verbs: [list]}]\n", role, ns)
	}
	dest, _ := newApp(t, name, map[string]string{"app/role.yaml": manifest("DEST")})
	t.Cleanup(func() {
		_ = cluster.Client.RbacV1().ClusterRoles().Delete(context.Background(), role, metav1.DeleteOptions{})
	})
	live := strings.Replace(manifest(""), "  namespace: \n", fmt.Sprintf("  annotations: {argocd.argoproj.io/tracking-id: \"%s:rbac.authorization.k8s.io/ClusterRole:%s/%s\"}\n", name, dest, role), 1)
	createClusterRole(t, live)
	app := waitStatus(t, name, "Synced", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	if len(app.Status.Resources) != 1 || app.Status.Resources[0].Namespace != "" {
		t.Errorf("resources = %+v, want the ClusterRole alone, without a namespace", app.Status.Resources)
	}
}

// createClusterRole creates a ClusterRole from YAML. (apply asks the
// controller's cache for the resource, which may not have discovered RBAC
// yet when a test starts.)
func createClusterRole(t *testing.T, manifest string) {
	t.Helper()
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict([]byte(manifest), &role); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Client.RbacV1().ClusterRoles().Create(t.Context(), &role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
