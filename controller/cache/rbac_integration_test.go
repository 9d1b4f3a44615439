//go:build integration

package cache

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/graphcd/graphcd/internal/settings"
)

// A cache whose credentials may list only some kinds starts anyway and
// indexes what it can see.
func TestForbiddenKindsSkipped(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	app := "rbac-" + ns
	user := "cache-" + ns

	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"list", "watch"}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}},
	}
	rbac := cluster.Client.RbacV1()
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create role: %v", err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create binding: %v", err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(context.Background(), user, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(context.Background(), user, metav1.DeleteOptions{})
	})

	cfg := rest.CopyConfig(cluster.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c := startCache(t, Options{Config: cfg})

	createConfigMap(t, ns, "visible", map[string]string{settings.DefaultInstanceLabelKey: app}, nil)
	want := []ResourceKey{{Kind: "ConfigMap", Namespace: ns, Name: "visible"}}
	eventually(t, "configmap managed", func() bool { return len(c.Managed(app)) == 1 })
	if diff := cmp.Diff(c.Managed(app), want); diff != "" {
		t.Errorf("Managed (-got +want):\n%s", diff)
	}
}
