//go:build integration

package controller_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// tenant is a namespace whose ServiceAccount "deployer" may do anything
// in that namespace and nothing elsewhere, as a platform team sets tenants
// up for sync impersonation.
func tenant(t *testing.T) string {
	t.Helper()
	ns := cluster.Namespace(t)
	ctx := t.Context()
	if _, err := cluster.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}},
	}
	if _, err := cluster.Client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "deployer"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "deployer", Namespace: ns}},
	}
	if _, err := cluster.Client.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}

// impersonationSettings writes graphcd-cm of the controller namespace ns
// with sync impersonation on or off.
func impersonationSettings(t *testing.T, ns string, on bool) {
	t.Helper()
	cms := cluster.Client.CoreV1().ConfigMaps(ns)
	data := map[string]string{"application.sync.impersonation.enabled": fmt.Sprint(on)}
	cm, err := cms.Get(t.Context(), controller.SettingsConfigMap, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: controller.SettingsConfigMap, Namespace: ns}, Data: data}
		_, err = cms.Create(t.Context(), cm, metav1.CreateOptions{})
	case err == nil:
		cm.Data = data
		_, err = cms.Update(t.Context(), cm, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// tenantApp creates an Application of project proj in namespace ns for
// files (with TENANT, OTHER and NAME replaced), deploying to dest.
func tenantApp(t *testing.T, ns, name, proj, dest string, files map[string]string, edit func(*v1alpha1.Application)) {
	t.Helper()
	dir, _ := reposervertest.CommitFiles(t, files)
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     proj,
			Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + dir, Path: "app", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: dest},
		},
	}
	if edit != nil {
		edit(app)
	}
	if err := apps.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apps.Delete(context.Background(), app) })
}

// syncRequests numbers the syncs syncIn requests.
var syncRequests atomic.Int64

// syncIn requests a manual sync of app ns/name and waits for it to end.
// Each request is told apart by its initiator, not by when it started:
// status keeps whole seconds, and two syncs of one app may start in the
// same second.
func syncIn(t *testing.T, ns, name string) *v1alpha1.Application {
	t.Helper()
	user := fmt.Sprintf("alice-%d", syncRequests.Add(1))
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"operation":{"sync":{},"initiatedBy":{"username":%q}}}`, user))
	if err := apps.Patch(t.Context(), app, patch); err != nil {
		t.Fatal(err)
	}
	return waitIn(t, ns, name, "the sync ended", func(s *v1alpha1.ApplicationStatus) bool {
		st := s.OperationState
		return st != nil && st.Operation.InitiatedBy.Username == user && st.FinishedAt != nil && st.Phase != v1alpha1.OperationRunning
	})
}

// waitIn polls app ns/name until cond holds.
func waitIn(t *testing.T, ns, name, what string, cond func(*v1alpha1.ApplicationStatus) bool) *v1alpha1.Application {
	t.Helper()
	var app v1alpha1.Application
	poll(t, name+": "+what, func(ctx context.Context) (bool, error) {
		if err := apps.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &app); err != nil {
			return false, err
		}
		return cond(&app.Status), nil
	})
	return &app
}

// withCondition is hasCondition as a condition of waitIn.
func withCondition(c v1alpha1.ApplicationConditionType, msg string) func(*v1alpha1.ApplicationStatus) bool {
	return func(s *v1alpha1.ApplicationStatus) bool { return hasCondition(s, c, msg) }
}

// dumpOp renders an operation state for failure messages.
func dumpOp(app *v1alpha1.Application) string {
	b, _ := yaml.Marshal(app.Status.OperationState)
	return string(b)
}

// With application.sync.impersonation.enabled, two tenants' apps sync as
// their projects' service accounts, whose Roles allow only their own
// namespace: tenant A's app that creates a ClusterRole, or writes into
// tenant B's namespace, fails with the API server's own Forbidden naming
// the account, and nothing is created; its server-side diff of an object
// in tenant B's namespace fails the same way; an app whose project names
// no account for its destination does not sync at all. An app that stays
// in its namespace syncs. Switched off in graphcd-cm (no restart), the
// same apps sync with graphcd's credentials and report that their
// project's accounts are ignored. Back on, deleting an app deletes its
// resources as the account, which may not delete the ClusterRole.
func TestImpersonatedSync(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	tenantA, tenantB := tenant(t), tenant(t)
	role := "imp-" + tenantA
	t.Cleanup(func() {
		_ = cluster.Client.RbacV1().ClusterRoles().Delete(context.Background(), role, metav1.DeleteOptions{})
	})
	// The projects allow every kind and namespace: what stops the tenants
	// is the API server's RBAC, not the project.
	for proj, accounts := range map[string][]v1alpha1.ApplicationDestinationServiceAccount{
		"tenant-a": {
			{Server: controller.InClusterServer, Namespace: tenantA, DefaultServiceAccount: "deployer"},
			{Server: "*", Namespace: "*", DefaultServiceAccount: tenantA + ":deployer"},
		},
		"tenant-b": {{Server: controller.InClusterServer, Namespace: tenantB, DefaultServiceAccount: "deployer"}},
	} {
		p := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: proj}, Spec: v1alpha1.AppProjectSpec{
			SourceRepos:                []string{"*"},
			Destinations:               []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			ClusterResourceWhitelist:   []metav1.GroupKind{{Group: "*", Kind: "*"}},
			DestinationServiceAccounts: accounts,
		}}
		if err := apps.Create(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	impersonationSettings(t, ns, true)

	cm := func(namespace, app string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %[2]s\n  namespace: %[1]s\n  annotations: {argocd.argoproj.io/tracking-id: \"%[2]s:/ConfigMap:%[1]s/%[2]s\"}\ndata: {owner: %[2]s}\n", namespace, app)
	}
	clusterRole := fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: %s\nrules: [{apiGroups: [\"\"], resources: [configmaps], verbs: [get]}]\n", role)
	tenantApp(t, ns, "a-own", "tenant-a", tenantA, map[string]string{"app/cm.yaml": cm(tenantA, "a-own")}, nil)
	tenantApp(t, ns, "a-cluster", "tenant-a", tenantA, map[string]string{"app/role.yaml": clusterRole, "app/cm.yaml": cm(tenantA, "a-cluster")}, nil)
	tenantApp(t, ns, "a-into-b", "tenant-a", tenantA, map[string]string{"app/cm.yaml": cm(tenantB, "a-into-b")}, nil)
	tenantApp(t, ns, "b-astray", "tenant-b", tenantA, map[string]string{"app/cm.yaml": cm(tenantA, "b-astray")}, nil)
	// Server-side diff of an object that exists in tenant B's namespace.
	apply(t, cm(tenantB, "a-ssd"))
	tenantApp(t, ns, "a-ssd", "tenant-a", tenantA, map[string]string{"app/cm.yaml": cm(tenantB, "a-ssd")}, func(a *v1alpha1.Application) {
		a.Annotations = map[string]string{"argocd.argoproj.io/compare-options": "ServerSideDiff=true"}
	})

	stop := startOwnController(t, ns, repoSvc, nil)
	defer stop()

	saA := fmt.Sprintf("User %q cannot", "system:serviceaccount:"+tenantA+":deployer")
	// First, as it also shows that the controller has read graphcd-cm.
	t.Run("server-side diff is forbidden", func(t *testing.T) {
		waitIn(t, ns, "a-ssd", "ComparisonError naming the account", withCondition(v1alpha1.ApplicationConditionComparisonError, saA))
	})
	t.Run("own namespace syncs", func(t *testing.T) {
		app := syncIn(t, ns, "a-own")
		if app.Status.OperationState.Phase != v1alpha1.OperationSucceeded {
			t.Fatalf("sync of an app in its own namespace:\n%s", dumpOp(app))
		}
		if _, err := cluster.Client.CoreV1().ConfigMaps(tenantA).Get(t.Context(), "a-own", metav1.GetOptions{}); err != nil {
			t.Errorf("the ConfigMap was not created: %v", err)
		}
	})
	forbidden := func(t *testing.T, name, kind string) {
		t.Helper()
		app := syncIn(t, ns, name)
		st := app.Status.OperationState
		failed := slices.ContainsFunc(st.SyncResult.Resources, func(r v1alpha1.ResourceResult) bool {
			return r.Kind == kind && r.Status == v1alpha1.ResultCodeSyncFailed && strings.Contains(r.Message, "forbidden") && strings.Contains(r.Message, saA)
		})
		if st.Phase != v1alpha1.OperationFailed || !failed {
			t.Errorf("want a Failed sync whose %s failed with the API server's Forbidden for %s:\n%s", kind, saA, dumpOp(app))
		}
	}
	t.Run("cluster-scoped object is forbidden", func(t *testing.T) {
		forbidden(t, "a-cluster", "ClusterRole")
		if _, err := cluster.Client.RbacV1().ClusterRoles().Get(t.Context(), role, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the ClusterRole: %v, want NotFound", err)
		}
		if _, err := cluster.Client.CoreV1().ConfigMaps(tenantA).Get(t.Context(), "a-cluster", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the app's ConfigMap was applied although the sync failed its dry run: %v", err)
		}
	})
	t.Run("other tenant's namespace is forbidden", func(t *testing.T) {
		forbidden(t, "a-into-b", "ConfigMap")
		if _, err := cluster.Client.CoreV1().ConfigMaps(tenantB).Get(t.Context(), "a-into-b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the ConfigMap in tenant B's namespace: %v, want NotFound", err)
		}
	})
	t.Run("no account for the destination", func(t *testing.T) {
		app := syncIn(t, ns, "b-astray")
		want := "failed to find a matching service account to impersonate: no matching service account found for destination server https://kubernetes.default.svc and namespace " + tenantA
		if st := app.Status.OperationState; st.Phase != v1alpha1.OperationError || st.Message != want || (st.SyncResult != nil && len(st.SyncResult.Resources) != 0) {
			t.Errorf("want an Error with %q and nothing done:\n%s", want, dumpOp(app))
		}
		if _, err := cluster.Client.CoreV1().ConfigMaps(tenantA).Get(t.Context(), "b-astray", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the ConfigMap: %v, want NotFound", err)
		}
	})
	if t.Failed() {
		return
	}

	impersonationSettings(t, ns, false)
	ignored := "spec.destinationServiceAccounts of project 'tenant-a' is ignored: sync impersonation is disabled"
	t.Run("off: the same apps sync", func(t *testing.T) {
		waitIn(t, ns, "a-cluster", "ImpersonationDisabledWarning", withCondition(v1alpha1.ApplicationConditionImpersonationDisabledWarning, ignored))
		for _, name := range []string{"a-cluster", "a-into-b", "b-astray"} {
			if app := syncIn(t, ns, name); app.Status.OperationState.Phase != v1alpha1.OperationSucceeded {
				t.Errorf("%s with impersonation off:\n%s", name, dumpOp(app))
			}
		}
		if _, err := cluster.Client.RbacV1().ClusterRoles().Get(t.Context(), role, metav1.GetOptions{}); err != nil {
			t.Errorf("the ClusterRole: %v", err)
		}
		waitIn(t, ns, "a-ssd", "compared without error", func(s *v1alpha1.ApplicationStatus) bool {
			return s.Sync.Status == v1alpha1.SyncStatusCodeSynced && !hasCondition(s, v1alpha1.ApplicationConditionComparisonError, "")
		})
	})
	t.Run("on again: the warning goes", func(t *testing.T) {
		impersonationSettings(t, ns, true)
		waitIn(t, ns, "a-cluster", "no ImpersonationDisabledWarning", func(s *v1alpha1.ApplicationStatus) bool {
			return !hasCondition(s, v1alpha1.ApplicationConditionImpersonationDisabledWarning, "")
		})
	})
	// The cascade deletes as the account too: the ClusterRole graphcd
	// created while impersonation was off stays, the ConfigMap goes.
	t.Run("cascade deletion as the account", func(t *testing.T) {
		key := types.NamespacedName{Namespace: ns, Name: "a-cluster"}
		var app v1alpha1.Application
		if err := apps.Get(t.Context(), key, &app); err != nil {
			t.Fatal(err)
		}
		app.Finalizers = append(app.Finalizers, v1alpha1.ResourcesFinalizer)
		if err := apps.Update(t.Context(), &app); err != nil {
			t.Fatal(err)
		}
		if err := apps.Delete(t.Context(), &app); err != nil {
			t.Fatal(err)
		}
		waitIn(t, ns, "a-cluster", "DeletionError naming the account", withCondition(v1alpha1.ApplicationConditionDeletionError, saA))
		poll(t, "the ConfigMap deleted", func(ctx context.Context) (bool, error) {
			_, err := cluster.Client.CoreV1().ConfigMaps(tenantA).Get(ctx, "a-cluster", metav1.GetOptions{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		if _, err := cluster.Client.RbacV1().ClusterRoles().Get(t.Context(), role, metav1.GetOptions{}); err != nil {
			t.Errorf("the ClusterRole the account may not delete: %v", err)
		}
		impersonationSettings(t, ns, false)
		poll(t, "the app deleted with impersonation off", func(ctx context.Context) (bool, error) {
			err := apps.Get(ctx, key, &app)
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	})
}
