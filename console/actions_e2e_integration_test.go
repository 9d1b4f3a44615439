//go:build integration

package console

import (
	"fmt"
	"net/http/cgi" //nolint:gosec // G504: Go 1.26 is not affected; serves git http-backend on loopback
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// TestSyncDialogAndRollback drives the application page's actions in
// Chromium against a server running its controller and a git repository
// of two commits: the app, deployed once at the first commit, is synced
// to the second through the sync dialog with prune (the operation's
// progress shown wave by wave until it succeeds and the app is Synced,
// without a reload), then rolled back to the first deployment from the
// history panel (see web/e2e/actions-sync.mjs). The cluster then holds the
// first commit's ConfigMap again.
func TestSyncDialogAndRollback(t *testing.T) {
	if skipReason != "" {
		t.Skip("browser test skipped: " + skipReason)
	}
	base, ns := startServer(t, true)
	repo, shas := serveRepoCommits(t, []map[string]string{
		{"waves/live.yaml": configMap("live", "hello", ""), "waves/old.yaml": configMap("old", "only in the first commit", "")},
		{"waves/live.yaml": configMap("live", "goodbye", ""), "waves/later.yaml": configMap("later", "second wave", "1")},
	})
	kube := newKube(t)
	ensureDefaultProject(t, kube, ns)
	// The first deployment, requested as the API would: the history then
	// has an entry to roll back to.
	app := gitApp(ns, "waves", "default", repo, "waves")
	app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: shas[0]}, InitiatedBy: v1alpha1.OperationInitiator{Username: "test"}}
	if err := kube.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	waitApp(t, kube, app, "the first deployment", func(a *v1alpha1.Application) bool {
		return len(a.Status.History) == 1 && a.Status.OperationState != nil && a.Status.OperationState.Phase == v1alpha1.OperationSucceeded
	})

	runScript(t, "e2e/actions-sync.mjs", base, ns)

	waitApp(t, kube, app, "the rollback recorded", func(a *v1alpha1.Application) bool {
		h := a.Status.History
		return len(h) == 3 && h[2].Revision == shas[0]
	})
	cm, err := cluster.Client.CoreV1().ConfigMaps(ns).Get(t.Context(), "live", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cm.Data["greeting"]; got != "hello" {
		t.Errorf("ConfigMap live after the rollback: greeting = %q, want the first commit's %q", got, "hello")
	}
}

// configMap is a ConfigMap manifest; wave, when set, is its sync wave.
func configMap(name, greeting, wave string) string {
	annotations := ""
	if wave != "" {
		annotations = fmt.Sprintf("  annotations:\n    argocd.argoproj.io/sync-wave: %q\n", wave)
	}
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n%sdata:\n  greeting: %s\n", name, annotations, greeting)
}

// waitApp polls app until done says so, for up to three minutes (the
// controller clones and renders first).
func waitApp(t *testing.T, kube client.Client, app *v1alpha1.Application, what string, done func(*v1alpha1.Application) bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	got := &v1alpha1.Application{}
	for {
		err := kube.Get(t.Context(), client.ObjectKeyFromObject(app), got)
		if err == nil && done(got) {
			return
		}
		if time.Now().After(deadline) {
			state := "none"
			if s := got.Status.OperationState; s != nil {
				state = fmt.Sprintf("%s: %s", s.Phase, s.Message)
			}
			t.Fatalf("waiting for %s of %s: get err %v, %d history entries, operation %s", what, app.Name, err, len(got.Status.History), state)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// serveRepoCommits commits each tree in turn on branch main of a new
// repository (each commit holds exactly its tree's files) and serves it
// read-only with `git http-backend` on loopback; it returns the clone URL
// and the commits' SHAs, oldest first.
func serveRepoCommits(t *testing.T, trees []map[string]string) (string, []string) {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not on PATH (make test-deps installs it)")
	}
	work, root := t.TempDir(), t.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=graphcd test", "GIT_AUTHOR_EMAIL=test@graphcd.invalid",
		"GIT_COMMITTER_NAME=graphcd test", "GIT_COMMITTER_EMAIL=test@graphcd.invalid")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), gitBin, args...)
		cmd.Dir, cmd.Env = work, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	var shas []string
	for i, files := range trees {
		if i > 0 {
			git("rm", "-rq", ".")
		}
		for name, content := range files {
			path := filepath.Join(work, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		git("add", ".")
		git("commit", "-q", "-m", fmt.Sprintf("Commit %d", i+1))
		shas = append(shas, git("rev-parse", "HEAD"))
	}
	git("clone", "-q", "--bare", ".", filepath.Join(root, "apps.git"))
	srv := httptest.NewServer(&cgi.Handler{Path: gitBin, Args: []string{"http-backend"}, Env: []string{
		"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull,
	}})
	t.Cleanup(srv.Close)
	return srv.URL + "/apps.git", shas
}

// TestSettingsPages drives the settings pages in Chromium against the real
// server: a repository added through the form (pointing at a served git
// repository) is listed with a successful connection test; a project is
// created and given a role, a token shown once and a sync window; a
// cluster is added and removed; account ci gets an API token, shown once,
// then deleted; user info lists admin's permissions; the audit page lists
// those changes and filters them by kind; the dark theme
// applies and survives a reload (see web/e2e/settings-pages.mjs). The
// objects the forms wrote are then checked in the cluster.
func TestSettingsPages(t *testing.T) {
	if skipReason != "" {
		t.Skip("browser test skipped: " + skipReason)
	}
	// Account ci may have API tokens.
	base, ns := startServer(t, true, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "graphcd-cm"},
		Data:       map[string]string{"accounts.ci": "apiKey"},
	})
	repo := serveRepo(t, map[string]string{"app/configmap.yaml": configMap("app", "hello", "")})
	runScript(t, "e2e/settings-pages.mjs", base, ns, "GRAPHCD_E2E_REPO="+repo)

	project := &v1alpha1.AppProject{}
	if err := newKube(t).Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "shop"}, project); err != nil {
		t.Fatalf("project shop: %v", err)
	}
	roles := project.Spec.Roles
	if len(roles) != 1 || roles[0].Name != "ci" || len(roles[0].JWTTokens) != 1 || len(roles[0].Policies) != 1 {
		t.Errorf("project shop roles = %+v, want role ci with one policy and one token", roles)
	}
	if w := project.Spec.SyncWindows; len(w) != 1 || w[0].Kind != "deny" || w[0].Schedule != "0 22 * * *" {
		t.Errorf("project shop sync windows = %+v, want one deny window at 0 22 * * *", w)
	}
	secrets, err := cluster.Client.CoreV1().Secrets(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range secrets.Items {
		found = found || string(s.Data["url"]) == repo
	}
	if !found {
		t.Errorf("no repository Secret for %s among %d", repo, len(secrets.Items))
	}
}

// TestCreateEditDeleteApp creates an application through the console's
// form and its YAML tab, edits it and deletes it without cascade, and
// finds no sync, edit or delete control on an app RBAC keeps admin from
// changing (see web/e2e/actions-create.mjs); the cluster then has no
// application fresh.
func TestCreateEditDeleteApp(t *testing.T) {
	if skipReason != "" {
		t.Skip("browser test skipped: " + skipReason)
	}
	// Admin may not change apps of project locked: their page must offer
	// no control that would be refused.
	base, ns := startServer(t, false, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "graphcd-rbac-cm"},
		Data: map[string]string{"policy.csv": "p, admin, applications, sync, locked/*, deny\n" +
			"p, admin, applications, update, locked/*, deny\n" +
			"p, admin, applications, delete, locked/*, deny\n"},
	})
	kube := newKube(t)
	ensureDefaultProject(t, kube, ns)
	repo := serveRepo(t, map[string]string{"app/configmap.yaml": configMap("app", "hello", "")})
	if err := kube.Create(t.Context(), gitApp(ns, "guarded", "locked", repo, "app")); err != nil {
		t.Fatal(err)
	}
	runScript(t, "e2e/actions-create.mjs", base, ns, "GRAPHCD_E2E_REPO="+repo, "GRAPHCD_E2E_NS="+ns)

	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "fresh", Namespace: ns}}
	deadline := time.Now().Add(time.Minute)
	for {
		err := kube.Get(t.Context(), client.ObjectKeyFromObject(app), app)
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("application fresh still there a minute after its deletion (get: %v)", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// hookPod is a PreSync hook that never ends on KWOK's fake nodes: a bare
// Pod stays Running there (only Jobs' Pods succeed).
const hookPod = `apiVersion: v1
kind: Pod
metadata:
  name: migrate
  annotations:
    argocd.argoproj.io/hook: PreSync
spec:
  restartPolicy: Never
  containers:
    - name: migrate
      image: registry.example/migrate:1
`

// TestSyncProgressAndTerminate follows a sync that cannot finish: the
// console shows its PreSync hook running and the Sync waves waiting, live,
// and its Terminate button stops it (see web/e2e/actions-terminate.mjs).
// Nothing of the Sync phase was applied.
func TestSyncProgressAndTerminate(t *testing.T) {
	if skipReason != "" {
		t.Skip("browser test skipped: " + skipReason)
	}
	base, ns := startServer(t, true)
	repo := serveRepo(t, map[string]string{
		"slow/hook.yaml":   hookPod,
		"slow/first.yaml":  configMap("first", "wave zero", ""),
		"slow/second.yaml": configMap("second", "wave one", "1"),
	})
	kube := newKube(t)
	ensureDefaultProject(t, kube, ns)
	app := gitApp(ns, "slow", "default", repo, "slow")
	if err := kube.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	runScript(t, "e2e/actions-terminate.mjs", base, ns)

	waitApp(t, kube, app, "the terminated operation", func(a *v1alpha1.Application) bool {
		s := a.Status.OperationState
		return s != nil && (s.Phase == v1alpha1.OperationFailed || s.Phase == v1alpha1.OperationError)
	})
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Get(t.Context(), "first", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap first of the Sync phase: got err %v, want NotFound (the sync stopped in PreSync)", err)
	}
}
