//go:build integration

package controller_test

import (
	"context"
	"slices"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// keptConfigMap is a ConfigMap that stays when its application is
// deleted.
func keptConfigMap(ns, app string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n  namespace: " + ns +
		"\n  annotations: {argocd.argoproj.io/sync-options: Delete=false, argocd.argoproj.io/tracking-id: \"" + app + ":/ConfigMap:" + ns + "/kept\"}\ndata:\n  mode: keep\n"
}

// syncedDeletionApp creates an app with a Deployment, a ConfigMap and a
// Delete=false ConfigMap, and the given finalizers, and syncs it.
func syncedDeletionApp(t *testing.T, name string, finalizers ...string) string {
	t.Helper()
	_, dest, _ := newAppWith(t, name, map[string]string{
		"app/deploy.yaml": deployment("DEST", name),
		"app/cm.yaml":     configMap("DEST", name, "prod"),
		"app/kept.yaml":   keptConfigMap("DEST", name),
	}, func(a *v1alpha1.Application) { a.Finalizers = finalizers })
	requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	waitStatus(t, name, "synced", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	return dest
}

// deleteAppAndWait deletes the Application and waits until it is gone.
func deleteAppAndWait(t *testing.T, name string) {
	t.Helper()
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: name}}
	if err := apps.Delete(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	poll(t, "the Application is gone", func(ctx context.Context) (bool, error) {
		err := apps.Get(ctx, types.NamespacedName{Namespace: appNamespace, Name: name}, app)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// exists reports whether the ConfigMap or the Deployment of dest exists.
func exists(t *testing.T, dest, kind, name string) bool {
	t.Helper()
	var err error
	switch kind {
	case "ConfigMap":
		_, err = cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), name, metav1.GetOptions{})
	case "Deployment":
		_, err = cluster.Client.AppsV1().Deployments(dest).Get(t.Context(), name, metav1.GetOptions{})
	default:
		t.Fatalf("unknown kind %s", kind)
	}
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// Deleting an app with a resources finalizer deletes its resources first
// (foreground, Argo CD's finalizer, or background): once the Application
// is gone, so are its Deployment and ConfigMap; the Delete=false ConfigMap
// stays.
func TestCascadingDelete(t *testing.T) {
	t.Parallel()
	for _, f := range []string{v1alpha1.ArgoResourcesFinalizer, v1alpha1.ArgoResourcesFinalizerBackground, v1alpha1.ResourcesFinalizer} {
		name := "cascade-" + map[string]string{
			v1alpha1.ArgoResourcesFinalizer: "argo", v1alpha1.ArgoResourcesFinalizerBackground: "background", v1alpha1.ResourcesFinalizer: "graphcd",
		}[f]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dest := syncedDeletionApp(t, name, f)
			deleteAppAndWait(t, name)
			if exists(t, dest, "Deployment", "web") {
				t.Error("the Deployment outlived its Application")
			}
			if exists(t, dest, "ConfigMap", "settings") {
				t.Error("the ConfigMap outlived its Application")
			}
			if !exists(t, dest, "ConfigMap", "kept") {
				t.Error("the Delete=false ConfigMap was deleted")
			}
		})
	}
}

// A cascading delete deletes only what the app's project permits: a
// Secret carrying the app's tracking id, of a kind the project forbids,
// is left where it is, while the ConfigMap goes.
func TestCascadingDeleteKeepsWhatTheProjectForbids(t *testing.T) {
	t.Parallel()
	const name = "cascade-forbidden"
	newProject(t, name, v1alpha1.AppProjectSpec{
		SourceRepos:                []string{"*"},
		Destinations:               []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		NamespaceResourceBlacklist: []metav1.GroupKind{{Group: "", Kind: "Secret"}},
	})
	_, dest, _ := newAppWith(t, name, map[string]string{"app/cm.yaml": configMap("DEST", name, "prod")}, func(a *v1alpha1.Application) {
		a.Spec.Project = name
		a.Finalizers = []string{v1alpha1.ArgoResourcesFinalizer}
	})
	requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	waitStatus(t, name, "synced", opDone(v1alpha1.OperationSucceeded))
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: "planted", Namespace: dest,
		Annotations: map[string]string{"argocd.argoproj.io/tracking-id": name + ":/Secret:" + dest + "/planted"},
	}}
	if _, err := cluster.Client.CoreV1().Secrets(dest).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The app sees the Secret as its own (extraneous) before the delete.
	waitStatus(t, name, "the planted Secret in the app's resources", func(s *v1alpha1.ApplicationStatus) bool {
		return slices.ContainsFunc(s.Resources, func(r v1alpha1.ResourceStatus) bool { return r.Kind == "Secret" && r.Name == "planted" })
	})
	deleteAppAndWait(t, name)
	if exists(t, dest, "ConfigMap", "settings") {
		t.Error("the ConfigMap outlived its Application")
	}
	if _, err := cluster.Client.CoreV1().Secrets(dest).Get(t.Context(), "planted", metav1.GetOptions{}); err != nil {
		t.Errorf("the Secret the project forbids: %v, want it left", err)
	}
}

// Deleting an app without a resources finalizer leaves its resources.
func TestNonCascadingDelete(t *testing.T) {
	t.Parallel()
	const name = "no-cascade"
	dest := syncedDeletionApp(t, name)
	deleteAppAndWait(t, name)
	for _, res := range [][2]string{{"Deployment", "web"}, {"ConfigMap", "settings"}, {"ConfigMap", "kept"}} {
		if !exists(t, dest, res[0], res[1]) {
			t.Errorf("%s %s was deleted with an Application without a resources finalizer", res[0], res[1])
		}
	}
}

// An app whose destination names no known cluster has nothing to delete:
// its resources finalizer does not keep it forever.
func TestCascadingDeleteUnknownCluster(t *testing.T) {
	t.Parallel()
	const name = "cascade-nowhere"
	newAppWith(t, name, map[string]string{"app/cm.yaml": configMap("DEST", name, "prod")}, func(a *v1alpha1.Application) {
		a.Finalizers = []string{v1alpha1.ArgoResourcesFinalizer}
		a.Spec.Destination = v1alpha1.ApplicationDestination{Name: "nowhere", Namespace: a.Spec.Destination.Namespace}
	})
	waitStatus(t, name, "InvalidSpecError", func(s *v1alpha1.ApplicationStatus) bool {
		return hasCondition(s, v1alpha1.ApplicationConditionInvalidSpecError, "there are no clusters with this name: nowhere")
	})
	deleteAppAndWait(t, name)
}

// A delete the API server refuses (here by a ValidatingAdmissionPolicy)
// keeps the Application, with a DeletionError condition that names the
// resource and the reason; once deletes are allowed again it goes away.
func TestCascadingDeleteError(t *testing.T) {
	t.Parallel()
	const name = "cascade-refused"
	_, dest, _ := newAppWith(t, name, map[string]string{"app/cm.yaml": configMap("DEST", name, "prod")},
		func(a *v1alpha1.Application) { a.Finalizers = []string{v1alpha1.ArgoResourcesFinalizer} })
	requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	waitStatus(t, name, "synced", opDone(v1alpha1.OperationSucceeded))

	adm := cluster.Client.AdmissionregistrationV1()
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "refuse-delete-" + dest},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Delete},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: "false", Message: "deletes are frozen"}},
		},
	}
	if _, err := adm.ValidatingAdmissionPolicies().Create(t.Context(), policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = adm.ValidatingAdmissionPolicies().Delete(context.Background(), policy.Name, metav1.DeleteOptions{})
	})
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": dest},
			}},
		},
	}
	if _, err := adm.ValidatingAdmissionPolicyBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = adm.ValidatingAdmissionPolicyBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
	})
	// The policy takes effect asynchronously: wait until it refuses.
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: dest}}
	if _, err := cluster.Client.CoreV1().ConfigMaps(dest).Create(t.Context(), probe, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the policy refuses deletes", func(ctx context.Context) (bool, error) {
		err := cluster.Client.CoreV1().ConfigMaps(dest).Delete(ctx, "probe", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsInvalid(err) || apierrors.IsForbidden(err), nil
	})

	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: name}}
	if err := apps.Delete(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, name, "DeletionError", func(s *v1alpha1.ApplicationStatus) bool {
		return hasCondition(s, v1alpha1.ApplicationConditionDeletionError, "delete ConfigMap "+dest+"/settings") &&
			hasCondition(s, v1alpha1.ApplicationConditionDeletionError, "deletes are frozen")
	})
	if !exists(t, dest, "ConfigMap", "settings") {
		t.Fatal("the refused ConfigMap is gone")
	}
	if err := adm.ValidatingAdmissionPolicyBindings().Delete(t.Context(), binding.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the Application is gone", func(ctx context.Context) (bool, error) {
		err := apps.Get(ctx, types.NamespacedName{Namespace: appNamespace, Name: name}, app)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if exists(t, dest, "ConfigMap", "settings") {
		t.Error("the ConfigMap outlived its Application")
	}
}
