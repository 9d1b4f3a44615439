//go:build integration

package controller_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/secretcodec"
)

// A kustomize overlay whose base is in another authenticated Git
// repository syncs: the controller learns which repository the base
// needs, checks it against the app's project and sends its own
// repository Secret's credentials. A project whose sourceRepos leave the
// base's repository out gets a clear condition and nothing applied.
func TestKustomizeRemoteBaseSyncs(t *testing.T) {
	t.Parallel()
	ns, dest, narrowDest := cluster.Namespace(t), cluster.Namespace(t), cluster.Namespace(t)
	baseURL := serveAuthGit(t, "base-bot", "base-pw-1", map[string]string{
		"base/kustomization.yaml": "resources:\n- cm.yaml\n",
		"base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base-cm\ndata:\n  from: base\n",
	})
	overlayURL := serveAuthGit(t, "overlay-bot", "overlay-pw-2", map[string]string{
		"app/kustomization.yaml": "namePrefix: ovl-\nresources:\n- " + baseURL + "//base?ref=main\n",
	})
	createProjects(t, ns, false, "team-a")
	narrow := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "narrow"}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos: []string{overlayURL}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
	}}
	if err := apps.Create(t.Context(), narrow); err != nil {
		t.Fatal(err)
	}
	createSecret(t, ns, "base-repo", secretcodec.TypeRepository, map[string]string{"url": baseURL, "username": "base-bot", "password": "base-pw-1"})
	createSecret(t, ns, "overlay-repo", secretcodec.TypeRepository, map[string]string{"url": overlayURL, "username": "overlay-bot", "password": "overlay-pw-2"})
	startScopedController(t, ns)

	syncApp(t, ns, "remote-base", "team-a", overlayURL, v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: dest})
	if app := finished(t, ns, "remote-base"); app.Status.OperationState.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("the overlay's sync did not succeed:\n%s", dump(app))
	}
	if !exists(t, dest, "ConfigMap", "ovl-base-cm") {
		t.Error("the remote base's ConfigMap was not applied with the overlay's prefix")
	}

	syncApp(t, ns, "remote-base-narrow", "narrow", overlayURL, v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: narrowDest})
	app := finished(t, ns, "remote-base-narrow")
	cond := conditionMessage(app, v1alpha1.ApplicationConditionComparisonError)
	if app.Status.OperationState.Phase == v1alpha1.OperationSucceeded || !strings.Contains(cond, "remote base: application repo "+baseURL+" is not permitted in project 'narrow'") {
		t.Errorf("a base outside the project's sourceRepos: want a failed sync and a ComparisonError naming the repository; got:\n%s", dump(app))
	}
	if exists(t, narrowDest, "ConfigMap", "ovl-base-cm") {
		t.Error("the narrow project's app applied the remote base")
	}
}
