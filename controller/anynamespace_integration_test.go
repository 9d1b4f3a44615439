//go:build integration

package controller_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/controller/cache"
	"github.com/graphcd/graphcd/controller/project"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// namedNamespace creates the namespace name for the test.
func namedNamespace(t *testing.T, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cluster.Client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// waitApp polls the Application at key until cond holds.
func waitApp(t *testing.T, key types.NamespacedName, what string, cond func(*v1alpha1.ApplicationStatus) bool) *v1alpha1.Application {
	t.Helper()
	var app v1alpha1.Application
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := apps.Get(ctx, key, &app); err != nil {
			return false, err
		}
		return cond(&app.Status), nil
	})
	if err != nil {
		b, _ := yaml.Marshal(app.Status)
		t.Fatalf("app %s never %s: %v\nstatus:\n%s", key, what, err, b)
	}
	return &app
}

// A controller with --application-namespaces reconciles and syncs the
// apps of the tenant namespaces it matches, two apps of one name in two
// namespaces apart (their objects carry <namespace>_<name>); it refuses an
// app whose project does not allow its namespace with an InvalidSpecError
// condition, and never touches an app in a namespace it does not serve.
func TestAppsInAnyNamespace(t *testing.T) {
	t.Parallel()
	own := cluster.Namespace(t)
	teamA, teamB := namedNamespace(t, own+"-team-a"), namedNamespace(t, own+"-team-b")
	other := namedNamespace(t, own+"-other")
	tenants := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: own, Name: "tenants"}}
	tenants.Spec.SourceRepos = []string{"*"}
	tenants.Spec.Destinations = []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}}
	tenants.Spec.SourceNamespaces = []string{own + "-team-*"}
	if err := apps.Create(t.Context(), tenants); err != nil {
		t.Fatal(err)
	}
	served, err := project.CompileAppNamespaces(own, []string{own + "-team-*"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(runController(t, controller.Config{Namespace: own, AppNamespaces: served, Repo: repoSvc}))

	// newTenantApp creates an auto-synced app of a ConfigMap in a
	// destination namespace of its own.
	newTenantApp := func(namespace, name, proj string) (key types.NamespacedName, dest string) {
		dest = cluster.Namespace(t)
		cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: " + dest + "\ndata:\n  from: " + namespace + "\n"
		dir, _ := reposervertest.CommitFiles(t, map[string]string{"app/cm.yaml": cm})
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			Spec: v1alpha1.ApplicationSpec{
				Project:     proj,
				Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + dir, Path: "app", TargetRevision: "main"},
				Destination: v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: dest},
				SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
			},
		}
		if err := apps.Create(t.Context(), app); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = apps.Delete(context.Background(), app) })
		return types.NamespacedName{Namespace: namespace, Name: name}, dest
	}
	// First the app of a namespace the controller does not serve: by the
	// time the others are synced it has had every chance to be seen.
	ignored, ignoredDest := newTenantApp(other, "web", "tenants")
	a, destA := newTenantApp(teamA, "web", "tenants")
	b, destB := newTenantApp(teamB, "web", "tenants")
	refused, refusedDest := newTenantApp(teamB, "sneaky", "default")

	synced := func(s *v1alpha1.ApplicationStatus) bool { return s.Sync.Status == v1alpha1.SyncStatusCodeSynced }
	for _, k := range []struct {
		key  types.NamespacedName
		dest string
	}{{a, destA}, {b, destB}} {
		waitApp(t, k.key, "Synced", synced)
		live, err := cluster.Client.CoreV1().ConfigMaps(k.dest).Get(t.Context(), "settings", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", k.key, err)
		}
		want := k.key.Namespace + "_web:/ConfigMap:" + k.dest + "/settings"
		if got := live.Annotations[cache.TrackingIDAnnotation]; got != want {
			t.Errorf("%s: tracking id %q, want %q", k.key, got, want)
		}
	}

	app := waitApp(t, refused, "refused", func(s *v1alpha1.ApplicationStatus) bool {
		for _, c := range s.Conditions {
			if c.Type == v1alpha1.ApplicationConditionInvalidSpecError && strings.Contains(c.Message, "not permitted in project 'default'") {
				return true
			}
		}
		return false
	})
	if app.Status.Sync.Status != v1alpha1.SyncStatusCodeUnknown {
		t.Errorf("refused app: sync status %q, want Unknown", app.Status.Sync.Status)
	}
	for _, ns := range []string{refusedDest, ignoredDest} {
		if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Get(t.Context(), "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the ConfigMap of a refused or ignored app was deployed to %s (err %v)", ns, err)
		}
	}
	var got v1alpha1.Application
	if err := apps.Get(t.Context(), ignored, &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.ReconciledAt != nil || got.Status.Sync.Status != "" || len(got.Status.Conditions) > 0 {
		t.Errorf("the app of a namespace not served was reconciled: %+v", got.Status)
	}

	// A live change reaches the app that owns the object, by its
	// namespace: team-a's web goes OutOfSync, team-b's stays Synced.
	live, err := cluster.Client.CoreV1().ConfigMaps(destA).Get(t.Context(), "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.Data["from"] = "someone else"
	if _, err := cluster.Client.CoreV1().ConfigMaps(destA).Update(t.Context(), live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitApp(t, a, "OutOfSync after a live change", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})
	var appB v1alpha1.Application
	if err := apps.Get(t.Context(), b, &appB); err != nil {
		t.Fatal(err)
	}
	if appB.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
		t.Errorf("%s: %s after a change to the other app's object, want Synced", b, appB.Status.Sync.Status)
	}
}
