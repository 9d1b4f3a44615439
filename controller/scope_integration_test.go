//go:build integration

package controller_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/wellknown"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// scopedAccount creates a ServiceAccount that may do anything in
// namespaces and, when clusterRules are given, those cluster-wide; it
// returns a token for it.
func scopedAccount(t *testing.T, name string, namespaces []string, clusterRules ...rbacv1.PolicyRule) string {
	t.Helper()
	ctx, home := t.Context(), namespaces[0]
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: home}}
	if _, err := cluster.Client.CoreV1().ServiceAccounts(home).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: home}}
	rbac := cluster.Client.RbacV1()
	for _, ns := range namespaces {
		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}},
		}
		if _, err := rbac.Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   subject,
		}
		if _, err := rbac.RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(clusterRules) > 0 {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: clusterRules}
		if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   subject,
		}
		if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = rbac.ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
			_ = rbac.ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	tok, err := cluster.Client.CoreV1().ServiceAccounts(home).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Status.Token
}

// registerScoped registers the management cluster a second time, under
// its own API server URL, by a cluster Secret carrying Argo CD's label
// (graphcd accepts it) that logs in with token and limits graphcd to
// namespaces.
func registerScoped(t *testing.T, name, token string, namespaces []string) *corev1.Secret {
	t.Helper()
	tls := cluster.Config.TLSClientConfig
	ca := tls.CAData
	if len(ca) == 0 {
		var err error
		if ca, err = os.ReadFile(tls.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := json.Marshal(map[string]any{
		"bearerToken":     token,
		"tlsClientConfig": map[string]any{"caData": base64.StdEncoding.EncodeToString(ca)},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: name, Labels: map[string]string{wellknown.ArgoSecretTypeLabel: secretcodec.TypeCluster}},
		StringData: map[string]string{
			"name": name, "server": cluster.Config.Host, "config": string(cfg),
			"namespaces": strings.Join(namespaces, ", "),
		},
	}
	s, err = cluster.Client.CoreV1().Secrets(appNamespace).Create(t.Context(), s, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Secrets(appNamespace).Delete(context.Background(), s.Name, metav1.DeleteOptions{})
	})
	return s
}

// scopedApp commits files and creates an Application for them on the
// scoped cluster, destination namespace dest.
func scopedApp(t *testing.T, name, cluster, dest string, files map[string]string) {
	t.Helper()
	for k, v := range files {
		files[k] = strings.ReplaceAll(v, "DEST", dest)
	}
	dir, _ := reposervertest.CommitFiles(t, files)
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: appNamespace},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + dir, Path: "app", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Name: cluster, Namespace: dest},
		},
	}
	if err := apps.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apps.Delete(context.Background(), app) })
}

// priorityClass is a cluster-scoped object for an app.
func priorityClass(name, app string) string {
	return fmt.Sprintf("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: %[1]s\n  annotations: {argocd.argoproj.io/tracking-id: \"%[2]s:scheduling.k8s.io/PriorityClass:/%[1]s\"}\nvalue: 1000\n", name, app)
}

// A cluster Secret with namespaces limits graphcd to them: the cluster's
// cache lists and watches only those namespaces, with a token that may
// read nothing else (a cluster-wide list would be refused and the app
// could not turn Synced); an app that targets another namespace, or a
// cluster-scoped object without clusterResources, gets a comparison error
// and a sync that applies nothing; with clusterResources "true" the
// cluster-scoped object syncs.
func TestClusterSecretNamespaces(t *testing.T) {
	t.Parallel()
	a, b, outside := cluster.Namespace(t), cluster.Namespace(t), cluster.Namespace(t)
	secretName := uniqueName("scoped")
	pc := uniqueName("graphcd-scope")
	token := scopedAccount(t, secretName, []string{a, b}, rbacv1.PolicyRule{
		APIGroups: []string{"scheduling.k8s.io"}, Resources: []string{"priorityclasses"}, Verbs: []string{"*"},
	})
	t.Cleanup(func() {
		_ = cluster.Client.SchedulingV1().PriorityClasses().Delete(context.Background(), pc, metav1.DeleteOptions{})
	})
	secret := registerScoped(t, secretName, token, []string{a, b})

	inside, elsewhere, clusterWide := uniqueName("scoped-in"), uniqueName("scoped-out"), uniqueName("scoped-cluster")
	scopedApp(t, inside, secretName, b, map[string]string{"app/cm.yaml": configMap("DEST", inside, "prod"), "app/deploy.yaml": deployment("DEST", inside)})
	scopedApp(t, elsewhere, secretName, outside, map[string]string{"app/cm.yaml": configMap("DEST", elsewhere, "prod")})
	scopedApp(t, clusterWide, secretName, a, map[string]string{"app/cm.yaml": configMap("DEST", clusterWide, "prod"), "app/pc.yaml": priorityClass(pc, clusterWide)})

	// Inside the namespaces: compared, synced, and kept in sync by the
	// cache's events.
	waitStatus(t, inside, "compared", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync && len(s.Conditions) == 0
	})
	requestSync(t, inside, manual(v1alpha1.SyncOperation{}))
	waitStatus(t, inside, "synced", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	live := ctl.LiveFor(cluster.Config.Host)
	if live == nil {
		t.Fatal("no cache runs for the scoped cluster")
	}
	// Namespaces() is sorted; so must the expectation be ("x-10" < "x-9").
	if got, want := live.Namespaces(), slices.Sorted(slices.Values([]string{a, b})); !slices.Equal(got, want) {
		t.Errorf("the scoped cluster's cache covers %v, want %v", got, want)
	}
	scaleWeb(t, b, 5)
	waitStatus(t, inside, "OutOfSync after an edit", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})

	// Another namespace: a comparison error, and a sync that applies
	// nothing and fails at once: no retry can change the cluster
	// Secret, so the operation's retries are not used.
	wantOutside := "ConfigMap " + outside + "/settings is in namespace " + outside + ", which the cluster secret of " + cluster.Config.Host + " does not allow"
	waitStatus(t, elsewhere, "ComparisonError naming the namespace", func(s *v1alpha1.ApplicationStatus) bool {
		return hasCondition(s, v1alpha1.ApplicationConditionComparisonError, wantOutside)
	})
	op := manual(v1alpha1.SyncOperation{})
	op.Retry = v1alpha1.RetryStrategy{Limit: 2, Backoff: &v1alpha1.Backoff{Duration: "1s"}}
	requestSync(t, elsewhere, op)
	app := waitStatus(t, elsewhere, "sync refused", func(s *v1alpha1.ApplicationStatus) bool {
		return s.OperationState != nil && s.OperationState.FinishedAt != nil && s.OperationState.Phase != v1alpha1.OperationRunning
	})
	if st := app.Status.OperationState; st.Phase != v1alpha1.OperationFailed || st.RetryCount != 0 || !strings.Contains(st.Message, wantOutside) {
		t.Errorf("sync outside the namespaces: %s after %d retries, %q; want Failed without a retry, naming the namespace", st.Phase, st.RetryCount, st.Message)
	}
	if configMapExists(t, outside, "settings") {
		t.Errorf("the ConfigMap outside the namespaces was applied")
	}

	// A cluster-scoped object without clusterResources: the same, and
	// the app's namespaced ConfigMap is not applied either.
	wantScoped := "PriorityClass " + pc + " is cluster-scoped: the cluster secret of " + cluster.Config.Host + " allows only namespaces "
	waitStatus(t, clusterWide, "ComparisonError naming the cluster-scoped object", func(s *v1alpha1.ApplicationStatus) bool {
		return hasCondition(s, v1alpha1.ApplicationConditionComparisonError, wantScoped)
	})
	requestSync(t, clusterWide, manual(v1alpha1.SyncOperation{}))
	app = waitStatus(t, clusterWide, "sync refused", func(s *v1alpha1.ApplicationStatus) bool {
		return s.OperationState != nil && s.OperationState.FinishedAt != nil
	})
	if st := app.Status.OperationState; st.Phase != v1alpha1.OperationFailed || !strings.Contains(st.Message, wantScoped) {
		t.Errorf("sync of a cluster-scoped object: %s %q, want Failed naming it", st.Phase, st.Message)
	}
	if _, err := cluster.Client.SchedulingV1().PriorityClasses().Get(t.Context(), pc, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the PriorityClass was applied (err %v)", err)
	}
	if configMapExists(t, a, "settings") {
		t.Errorf("the ConfigMap of the refused sync was applied")
	}

	// clusterResources "true" lets the cluster-scoped object in: the
	// cache restarts with the new Secret and the app syncs.
	secret.StringData = map[string]string{"clusterResources": "true"}
	if _, err := cluster.Client.CoreV1().Secrets(appNamespace).Update(t.Context(), secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, clusterWide, "compared without an error", func(s *v1alpha1.ApplicationStatus) bool {
		return len(s.Conditions) == 0 && s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})
	requestSync(t, clusterWide, manual(v1alpha1.SyncOperation{}))
	waitStatus(t, clusterWide, "synced with clusterResources", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	if _, err := cluster.Client.SchedulingV1().PriorityClasses().Get(t.Context(), pc, metav1.GetOptions{}); err != nil {
		t.Errorf("the PriorityClass after the sync: %v", err)
	}
}
