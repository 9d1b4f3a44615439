//go:build integration

package controller_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/testenv/gitserver"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/wellknown"
	"github.com/graphcd/graphcd/reposerver/repocreds"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// serveAuthGit commits files to a repository and serves it behind basic
// auth user:password; it returns the repository's URL.
func serveAuthGit(t *testing.T, user, password string, files map[string]string) string {
	t.Helper()
	work, _ := reposervertest.CommitFiles(t, files)
	return gitserver.Serve(t, work, gitserver.Options{User: user, Password: password})
}

// startScopedController runs a controller of the test's own over the
// Applications, AppProjects and repository and cluster Secrets of ns,
// looking repository credentials up as graphcd's does.
func startScopedController(t *testing.T, ns string) {
	t.Helper()
	t.Cleanup(runController(t, controller.Config{Namespace: ns, Repo: repoSvc, RepoFor: repocreds.New(cluster.Client, ns).Lookup}))
}

// createProjects creates AppProjects in ns that permit every repository,
// destination and kind; onlyScoped sets permitOnlyProjectScopedClusters.
func createProjects(t *testing.T, ns string, onlyScoped bool, names ...string) {
	t.Helper()
	for _, name := range names {
		proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.AppProjectSpec{
			SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			ClusterResourceWhitelist:        []metav1.GroupKind{{Group: "*", Kind: "*"}},
			PermitOnlyProjectScopedClusters: onlyScoped,
		}}
		if err := apps.Create(t.Context(), proj); err != nil {
			t.Fatal(err)
		}
	}
}

// createSecret creates a Secret of graphcd's type typ in ns.
func createSecret(t *testing.T, ns, name, typ string, data map[string]string) {
	t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{wellknown.SecretTypeLabel: typ}},
		StringData: data,
	}
	if _, err := cluster.Client.CoreV1().Secrets(ns).Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// syncApp creates an Application in ns of project, from url's app/
// directory at main, to dest (creating its namespace), with a sync
// operation and no retries.
func syncApp(t *testing.T, ns, name, project, url string, dest v1alpha1.ApplicationDestination) {
	t.Helper()
	projectApp(t, ns, name, project, url, dest, true)
}

// projectApp is syncApp with the sync operation only when sync is set.
func projectApp(t *testing.T, ns, name, project, url string, dest v1alpha1.ApplicationDestination, sync bool) {
	t.Helper()
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project: project, Destination: dest,
			Source:     &v1alpha1.ApplicationSource{RepoURL: url, Path: "app", TargetRevision: "main"},
			SyncPolicy: &v1alpha1.SyncPolicy{SyncOptions: []string{"CreateNamespace=true"}},
		},
	}
	if sync {
		app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}}
	}
	if err := apps.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apps.Delete(context.Background(), app) })
}

// finished waits for the sync of app name in ns to end and returns the app.
func finished(t *testing.T, ns, name string) *v1alpha1.Application {
	t.Helper()
	var got v1alpha1.Application
	poll(t, name+"'s sync ended", func(ctx context.Context) (bool, error) {
		if err := apps.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &got); err != nil {
			return false, err
		}
		st := got.Status.OperationState
		return st != nil && st.FinishedAt != nil && st.Phase != v1alpha1.OperationRunning, nil
	})
	return &got
}

// conditionMessage is the message of app's condition of type typ, "" when
// it has none.
func conditionMessage(app *v1alpha1.Application, typ v1alpha1.ApplicationConditionType) string {
	for _, c := range app.Status.Conditions {
		if c.Type == typ {
			return c.Message
		}
	}
	return ""
}

// dump renders app's status for a failure message.
func dump(app *v1alpha1.Application) string {
	b, _ := yaml.Marshal(app.Status)
	return string(b)
}

const scopedConfigMap = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: scoped\ndata:\n  mode: private\n"

// A repository Secret scoped to one project gives its credentials to that
// project's apps only: an app of another project reaches the same
// authenticated git server without them, is refused there, and nothing
// from the repository reaches its destination. Its error names neither
// the Secret, the project it is scoped to, nor the password.
func TestProjectScopedRepositoryRefusedToAnotherProject(t *testing.T) {
	t.Parallel()
	ns, mineNS, theirsNS := cluster.Namespace(t), cluster.Namespace(t), cluster.Namespace(t)
	const password = "scoped-pw-4711"
	url := serveAuthGit(t, "bot", password, map[string]string{"app/cm.yaml": scopedConfigMap})
	createProjects(t, ns, false, "team-a", "team-b")
	createSecret(t, ns, "team-a-repo", secretcodec.TypeRepository, map[string]string{
		"url": url, "project": "team-a", "username": "bot", "password": password,
	})
	startScopedController(t, ns)
	syncApp(t, ns, "mine", "team-a", url, v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: mineNS})
	syncApp(t, ns, "theirs", "team-b", url, v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: theirsNS})

	if mine := finished(t, ns, "mine"); mine.Status.OperationState.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("the team-a app's sync did not succeed:\n%s", dump(mine))
	}
	if !exists(t, mineNS, "ConfigMap", "scoped") {
		t.Error("the team-a app's ConfigMap was not applied")
	}
	theirs := finished(t, ns, "theirs")
	op := theirs.Status.OperationState
	cond := conditionMessage(theirs, v1alpha1.ApplicationConditionComparisonError)
	if op.Phase == v1alpha1.OperationSucceeded || !strings.Contains(cond, "authentication") {
		t.Errorf("the team-b app: want a failed sync and a ComparisonError saying authentication failed; got:\n%s", dump(theirs))
	}
	for _, msg := range []string{op.Message, cond} {
		for _, leak := range []string{password, "team-a", "team-a-repo"} {
			if strings.Contains(msg, leak) {
				t.Errorf("the team-b app's message %q reveals %q", msg, leak)
			}
		}
	}
	if exists(t, theirsNS, "ConfigMap", "scoped") {
		t.Error("the team-b app's sync applied the private repository's ConfigMap")
	}
}

// clusterSecretData is what a cluster Secret for c, scoped to project,
// holds: its server and its admin client certificate.
func clusterSecretData(t *testing.T, c *localcluster.Cluster, name, project string) map[string]string {
	t.Helper()
	cfg, err := c.SecretConfig()
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]string{"name": name, "server": c.Config.Host, "config": cfg}
	if project != "" {
		data["project"] = project
	}
	return data
}

// invalidSpec waits for app name in ns to report an InvalidSpecError and
// returns its message.
func invalidSpec(t *testing.T, ns, name string) string {
	t.Helper()
	var msg string
	poll(t, name+" reported an InvalidSpecError", func(ctx context.Context) (bool, error) {
		var app v1alpha1.Application
		if err := apps.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &app); err != nil {
			return false, err
		}
		msg = conditionMessage(&app, v1alpha1.ApplicationConditionInvalidSpecError)
		return msg != "", nil
	})
	return msg
}

// A cluster Secret scoped to a project serves that project's apps only:
// another project's app is an invalid spec whose message does not name
// the project, and its sync applies nothing. With
// permitOnlyProjectScopedClusters a project deploys only to clusters
// scoped to it, not to global ones such as in-cluster.
func TestProjectScopedClusters(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	createProjects(t, ns, false, "team-a", "team-b")
	createProjects(t, ns, true, "only-own")
	scoped, only := uniqueName("scoped-cluster"), uniqueName("only-cluster")
	createSecret(t, ns, "team-a-cluster", secretcodec.TypeCluster, clusterSecretData(t, second, scoped, "team-a"))
	createSecret(t, ns, "only-own-cluster", secretcodec.TypeCluster, clusterSecretData(t, cluster, only, "only-own"))
	dir, _ := reposervertest.CommitFiles(t, map[string]string{"app/cm.yaml": scopedConfigMap})
	url := "file://" + dir
	startScopedController(t, ns)

	mineNS, theirsNS, ownNS, globalNS := uniqueName("scoped-mine"), uniqueName("scoped-theirs"), cluster.Namespace(t), cluster.Namespace(t)
	t.Cleanup(func() {
		for _, n := range []string{mineNS, theirsNS} {
			_ = second.Client.CoreV1().Namespaces().Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})
	syncApp(t, ns, "mine", "team-a", url, v1alpha1.ApplicationDestination{Name: scoped, Namespace: mineNS})
	projectApp(t, ns, "theirs", "team-b", url, v1alpha1.ApplicationDestination{Server: second.Config.Host, Namespace: theirsNS}, false)
	syncApp(t, ns, "own", "only-own", url, v1alpha1.ApplicationDestination{Name: only, Namespace: ownNS})
	projectApp(t, ns, "global", "only-own", url, v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: globalNS}, false)

	for _, name := range []string{"mine", "own"} {
		if app := finished(t, ns, name); app.Status.OperationState.Phase != v1alpha1.OperationSucceeded {
			t.Errorf("%s's sync onto its project's cluster did not succeed:\n%s", name, dump(app))
		}
	}
	if _, err := second.Client.CoreV1().ConfigMaps(mineNS).Get(t.Context(), "scoped", metav1.GetOptions{}); err != nil {
		t.Errorf("team-a's ConfigMap on its cluster: %v", err)
	}
	if !exists(t, ownNS, "ConfigMap", "scoped") {
		t.Error("only-own's ConfigMap was not applied to its cluster")
	}
	if msg := invalidSpec(t, ns, "theirs"); !strings.Contains(msg, "the cluster is scoped to another project") || strings.Contains(msg, "team-a") {
		t.Errorf("team-b's app on team-a's cluster: InvalidSpecError %q, want one saying the cluster is another project's without naming it", msg)
	}
	if msg := invalidSpec(t, ns, "global"); !strings.Contains(msg, "permitOnlyProjectScopedClusters") {
		t.Errorf("only-own's app on in-cluster: InvalidSpecError %q, want one naming permitOnlyProjectScopedClusters", msg)
	}

	// A sync asked of the refused apps fails and applies nothing.
	for _, name := range []string{"theirs", "global"} {
		patch := []byte(`{"operation": {"sync": {}, "initiatedBy": {"username": "alice"}}}`)
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if err := apps.Patch(t.Context(), app, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
		if got := finished(t, ns, name); got.Status.OperationState.Phase == v1alpha1.OperationSucceeded {
			t.Errorf("the sync of %s succeeded:\n%s", name, dump(got))
		}
	}
	if _, err := second.Client.CoreV1().Namespaces().Get(t.Context(), theirsNS, metav1.GetOptions{}); err == nil {
		t.Error("team-b's sync created its namespace on team-a's cluster")
	}
	if exists(t, globalNS, "ConfigMap", "scoped") {
		t.Error("only-own's sync applied to in-cluster")
	}
}
