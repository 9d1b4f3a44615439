//go:build integration

package controller_test

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		apply(t,
			fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: %[1]s\n  annotations: {argocd.argoproj.io/tracking-id: \"%[2]s:rbac.authorization.k8s.io/ClusterRole:%[3]s/%[1]s\"}\nrules: [{apiGroups: [\"\"], resources: [configmaps], verbs: [get]}]\n", role, name, dest),
			fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: %[1]s\n  annotations: {argocd.argoproj.io/tracking-id: \"%[2]s:/ConfigMap:%[1]s/settings\"}\ndata:\n  mode: prod\n", dest, name))
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
