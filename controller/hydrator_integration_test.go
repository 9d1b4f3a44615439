//go:build integration

package controller_test

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/testenv/gitserver"
	"github.com/graphcd/graphcd/reposerver/git"
	"github.com/graphcd/graphcd/reposerver/repocreds"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

const hydratorUser, hydratorPassword = "bot", "hydrate-pw-8086"

// hydratedConfigMap is the dry source's one object, with a value that
// dry commits change.
func hydratedConfigMap(value string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hydrated\ndata:\n  value: " + value + "\n"
}

// serveDryRepo commits the dry source (base/cm.yaml) and serves it behind
// basic auth, accepting pushes; it returns the working copy, the URL and
// the first dry commit.
func serveDryRepo(t *testing.T) (work, repoURL, sha string) {
	t.Helper()
	work, sha = reposervertest.CommitFiles(t, map[string]string{"base/cm.yaml": hydratedConfigMap("one")})
	repoURL = gitserver.Serve(t, work, gitserver.Options{User: hydratorUser, Password: hydratorPassword, Push: true})
	return work, repoURL, sha
}

// startHydratingController runs a controller over ns that looks read and
// write credentials up as graphcd's does and pushes with go-git.
func startHydratingController(t *testing.T, ns string) {
	t.Helper()
	store := repocreds.New(cluster.Client, ns)
	t.Cleanup(runController(t, controller.Config{
		Namespace: ns, Repo: repoSvc, RepoFor: store.Lookup,
		WriteRepoFor: store.LookupWrite, Committer: git.New(git.Options{WorkDir: t.TempDir()}),
	}))
}

// hydratorApp creates an app of the default project in ns whose source
// hydrator renders base/ of repoURL at main into path of branch env/prod,
// synced automatically to dest; edits change its sourceHydrator first.
func hydratorApp(t *testing.T, ns, name, repoURL, path, dest string, edits ...func(*v1alpha1.SourceHydrator)) {
	t.Helper()
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Destination: v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: dest},
			SourceHydrator: &v1alpha1.SourceHydrator{
				DrySource:  v1alpha1.DrySource{RepoURL: repoURL, TargetRevision: "main", Path: "base"},
				SyncSource: v1alpha1.SyncSource{TargetBranch: "env/prod", Path: path},
			},
			SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}, SyncOptions: []string{"CreateNamespace=true"}},
		},
	}
	for _, edit := range edits {
		edit(app.Spec.SourceHydrator)
	}
	if err := apps.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apps.Delete(context.Background(), app) })
}

// gitCLI runs git in dir with the machine's configuration shut out and
// returns its trimmed output.
func gitCLI(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// withAuth is repoURL with the test server's credentials, for the git CLI.
func withAuth(t *testing.T, repoURL string) string {
	t.Helper()
	u, err := url.Parse(repoURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(hydratorUser, hydratorPassword)
	return u.String()
}

// An app with a source hydrator renders its dry source, commits the
// manifests with a README and hydrator.metadata to env/prod (a commit
// plain `git log` shows), and syncs from that branch; a new dry commit
// gives a new hydrated commit and reaches the cluster.
func TestSourceHydratorCommitsAndSyncs(t *testing.T) {
	t.Parallel()
	ns, dest := cluster.Namespace(t), cluster.Namespace(t)
	work, repoURL, dry1 := serveDryRepo(t)
	createProjects(t, ns, false, "default")
	creds := map[string]string{"url": repoURL, "username": hydratorUser, "password": hydratorPassword}
	createSecret(t, ns, "read", secretcodec.TypeRepository, creds)
	createSecret(t, ns, "write", secretcodec.TypeRepositoryWrite, creds)
	startHydratingController(t, ns)
	hydratorApp(t, ns, "web", repoURL, "apps/web", dest)

	app := waitApp(t, types.NamespacedName{Namespace: ns, Name: "web"}, "hydrated the first dry commit and synced it", func(a *v1alpha1.ApplicationStatus) bool {
		last := a.SourceHydrator.LastSuccessfulOperation
		return last != nil && last.DrySHA == dry1 && a.Sync.Status == v1alpha1.SyncStatusCodeSynced &&
			a.Sync.Revision == last.HydratedSHA && a.Health.Status == v1alpha1.HealthStatusHealthy
	})
	hydrated1 := app.Status.SourceHydrator.LastSuccessfulOperation.HydratedSHA
	if cur := app.Status.SourceHydrator.CurrentOperation; cur == nil || cur.Phase != v1alpha1.HydrateOperationPhaseHydrated || cur.HydratedSHA != hydrated1 {
		t.Errorf("currentOperation %+v, want Hydrated at %s", cur, hydrated1)
	}
	if got := app.Status.Sync.ComparedTo.Source; got.TargetRevision != "env/prod" || got.Path != "apps/web" {
		t.Errorf("compared to %+v, want env/prod apps/web", got)
	}
	if !exists(t, dest, "ConfigMap", "hydrated") {
		t.Fatal("the hydrated ConfigMap is not in the cluster")
	}

	clone := t.TempDir()
	gitCLI(t, clone, "clone", "-q", "--branch", "env/prod", withAuth(t, repoURL), ".")
	log := gitCLI(t, clone, "log", "--format=%H %an %s", "env/prod")
	if want := hydrated1 + " graphcd [graphcd] hydrate " + dry1; log != want {
		t.Errorf("git log of env/prod:\n%s\nwant:\n%s", log, want)
	}
	for file, want := range map[string]string{
		"apps/web/manifest.yaml":     "value: one",
		"apps/web/README.md":         dry1,
		"apps/web/hydrator.metadata": `"drySha": "` + dry1 + `"`,
	} {
		data, err := os.ReadFile(filepath.Join(clone, file))
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if !strings.Contains(string(data), want) {
			t.Errorf("%s does not contain %q:\n%s", file, want, data)
		}
		if strings.Contains(string(data), hydratorPassword) {
			t.Errorf("%s carries the password", file)
		}
	}
	if files := gitCLI(t, clone, "ls-tree", "-r", "--name-only", "env/prod"); files != "apps/web/README.md\napps/web/hydrator.metadata\napps/web/manifest.yaml" {
		t.Errorf("env/prod holds:\n%s", files)
	}

	// A new dry commit: a new hydrated commit on top, synced.
	reposervertest.CommitMore(t, work, map[string]string{"base/cm.yaml": hydratedConfigMap("two")})
	dry2 := gitCLI(t, work, "rev-parse", "HEAD")
	gitCLI(t, work, "push", "-q", withAuth(t, repoURL), "main")
	patch := client.MergeFrom(app.DeepCopy())
	app.Annotations = map[string]string{v1alpha1.RefreshAnnotation: v1alpha1.RefreshNormal}
	if err := apps.Patch(t.Context(), app, patch); err != nil {
		t.Fatal(err)
	}
	app = waitApp(t, types.NamespacedName{Namespace: ns, Name: "web"}, "hydrated the second dry commit and synced it", func(a *v1alpha1.ApplicationStatus) bool {
		last := a.SourceHydrator.LastSuccessfulOperation
		return last != nil && last.DrySHA == dry2 && a.Sync.Status == v1alpha1.SyncStatusCodeSynced && a.Sync.Revision == last.HydratedSHA
	})
	hydrated2 := app.Status.SourceHydrator.LastSuccessfulOperation.HydratedSHA
	if hydrated2 == hydrated1 {
		t.Fatal("the second dry commit made no new hydrated commit")
	}
	gitCLI(t, clone, "fetch", "-q", "origin", "env/prod")
	if log := gitCLI(t, clone, "log", "--format=%H %P", "FETCH_HEAD"); log != hydrated2+" "+hydrated1+"\n"+hydrated1+" " && log != hydrated2+" "+hydrated1+"\n"+hydrated1 {
		t.Errorf("git log of env/prod after the second dry commit:\n%s\nwant %s on top of %s", log, hydrated2, hydrated1)
	}
	poll(t, "the ConfigMap got the second dry commit's value", func(ctx context.Context) (bool, error) {
		cm, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(ctx, "hydrated", metav1.GetOptions{})
		return err == nil && cm.Data["value"] == "two", nil
	})
}

// A syncSource.path that could escape its directory, or the repository
// root, is refused with a clear condition and nothing is pushed; without
// a repository-write Secret (a read Secret never pushes) the hydration
// fails with a clear message that names no credential.
func TestSourceHydratorRefusals(t *testing.T) {
	t.Parallel()
	ns, dest := cluster.Namespace(t), cluster.Namespace(t)
	_, repoURL, dry := serveDryRepo(t)
	createProjects(t, ns, false, "default")
	createSecret(t, ns, "read", secretcodec.TypeRepository, map[string]string{"url": repoURL, "username": hydratorUser, "password": hydratorPassword})
	startHydratingController(t, ns)

	for name, path := range map[string]string{"dotdot": "../x", "abs": "/abs", "root": "."} {
		hydratorApp(t, ns, name, repoURL, path, dest)
	}
	hydratorApp(t, ns, "nowrite", repoURL, "apps/web", dest)

	for name, want := range map[string]string{"dotdot": "must not contain '..'", "abs": "must be relative", "root": "the repository root is not allowed"} {
		app := waitApp(t, types.NamespacedName{Namespace: ns, Name: name}, "refused its syncSource.path", func(a *v1alpha1.ApplicationStatus) bool {
			return hasCondition(a, v1alpha1.ApplicationConditionInvalidSpecError, "")
		})
		if msg := conditionMessage(app, v1alpha1.ApplicationConditionInvalidSpecError); !strings.Contains(msg, "syncSource.path") || !strings.Contains(msg, want) {
			t.Errorf("%s: InvalidSpecError %q, want it to name syncSource.path and say %q", name, msg, want)
		}
		if app.Status.SourceHydrator.LastSuccessfulOperation != nil {
			t.Errorf("%s: hydrated with a hostile path:\n%s", name, dump(app))
		}
	}

	app := waitApp(t, types.NamespacedName{Namespace: ns, Name: "nowrite"}, "failed to hydrate", func(a *v1alpha1.ApplicationStatus) bool {
		cur := a.SourceHydrator.CurrentOperation
		return cur != nil && cur.Phase == v1alpha1.HydrateOperationPhaseFailed
	})
	cur := app.Status.SourceHydrator.CurrentOperation
	if cur.DrySHA != dry || !strings.Contains(cur.Message, "no repository-write Secret") {
		t.Errorf("currentOperation %+v, want a failure of dry commit %s saying no repository-write Secret matches", cur, dry)
	}
	cond := conditionMessage(app, v1alpha1.ApplicationConditionHydrationError)
	if cond != cur.Message {
		t.Errorf("HydrationError condition %q, want the operation's message %q", cond, cur.Message)
	}
	for _, msg := range []string{cur.Message, cond} {
		if strings.Contains(msg, hydratorPassword) {
			t.Errorf("message %q carries the password", msg)
		}
	}
	// Nothing was pushed: the repository has no env/prod branch.
	clone := t.TempDir()
	gitCLI(t, clone, "init", "-q")
	if refs := gitCLI(t, clone, "ls-remote", withAuth(t, repoURL)); strings.Contains(refs, "env/prod") {
		t.Errorf("a refused app pushed:\n%s", refs)
	}
}

// With hydrateTo the manifests go to the staging branch and the app syncs
// only what is promoted to syncSource.targetBranch.
func TestSourceHydratorHydrateToStagesUntilPromoted(t *testing.T) {
	t.Parallel()
	ns, dest := cluster.Namespace(t), cluster.Namespace(t)
	_, repoURL, dry := serveDryRepo(t)
	createProjects(t, ns, false, "default")
	creds := map[string]string{"url": repoURL, "username": hydratorUser, "password": hydratorPassword}
	createSecret(t, ns, "read", secretcodec.TypeRepository, creds)
	createSecret(t, ns, "write", secretcodec.TypeRepositoryWrite, creds)
	startHydratingController(t, ns)
	hydratorApp(t, ns, "staged", repoURL, "apps/web", dest, func(sh *v1alpha1.SourceHydrator) {
		sh.HydrateTo = &v1alpha1.HydrateTo{TargetBranch: "env/prod-next"}
	})

	got := waitApp(t, types.NamespacedName{Namespace: ns, Name: "staged"}, "hydrated to the staging branch", func(s *v1alpha1.ApplicationStatus) bool {
		last := s.SourceHydrator.LastSuccessfulOperation
		return last != nil && last.DrySHA == dry
	})
	staged := got.Status.SourceHydrator.LastSuccessfulOperation.HydratedSHA
	clone := t.TempDir()
	gitCLI(t, clone, "init", "-q")
	refs := map[string]string{}
	for line := range strings.Lines(gitCLI(t, clone, "ls-remote", withAuth(t, repoURL))) {
		sha, name, _ := strings.Cut(strings.TrimSpace(line), "\t")
		refs[name] = sha
	}
	if refs["refs/heads/env/prod-next"] != staged || refs["refs/heads/env/prod"] != "" {
		t.Fatalf("want %s on env/prod-next and no env/prod; the server has %v", staged, refs)
	}
	if exists(t, dest, "ConfigMap", "hydrated") {
		t.Fatal("the app synced what was only staged")
	}

	// Promote: env/prod-next becomes env/prod.
	gitCLI(t, clone, "fetch", "-q", withAuth(t, repoURL), "env/prod-next")
	gitCLI(t, clone, "push", "-q", withAuth(t, repoURL), "FETCH_HEAD:refs/heads/env/prod")
	patch := client.MergeFrom(got.DeepCopy())
	got.Annotations = map[string]string{v1alpha1.RefreshAnnotation: v1alpha1.RefreshNormal}
	if err := apps.Patch(t.Context(), got, patch); err != nil {
		t.Fatal(err)
	}
	waitApp(t, types.NamespacedName{Namespace: ns, Name: "staged"}, "synced the promoted commit", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeSynced && s.Sync.Revision == staged
	})
	if !exists(t, dest, "ConfigMap", "hydrated") {
		t.Error("the promoted ConfigMap is not in the cluster")
	}
}
