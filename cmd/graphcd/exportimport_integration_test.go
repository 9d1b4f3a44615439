//go:build integration

package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/wellknown"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// backupPassword is a repository Secret's password, which only an export
// with --include-secrets may show.
const backupPassword = "backup-s3cret-Pa55word"

// Back up and restore against a real server and controller: two synced
// apps (one in graphcd's namespace, one in a tenant namespace it also
// serves), a project, the settings and a repository Secret are exported,
// deleted (the apps without their resources) and imported; the apps come
// back Synced on the very same live objects (uids unchanged). A second
// import changes nothing, a dry run writes nothing, --prune removes an app
// the file does not hold and leaves its resources, and a file with a
// foreign kind is refused before any write.
func TestAdminExportImport(t *testing.T) {
	tenant := cluster.Namespace(t)
	d := startDay2(t, "--controller=true", "--application-namespaces="+tenant)
	ns := d.s.namespace
	kubeconfig := cluster.Kubeconfig
	admin := func(t *testing.T, stdin string, args ...string) cliResult {
		t.Helper()
		return d.run(t, stdin, append(append([]string{"admin"}, args...), "--kubeconfig", kubeconfig, "-n", ns, "--application-namespaces", tenant)...)
	}
	adminOK := func(t *testing.T, args ...string) string {
		t.Helper()
		r := admin(t, "", args...)
		if r.code != 0 {
			t.Fatalf("graphcd admin %s = exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, backupPassword) && !strings.Contains(strings.Join(args, " "), "--include-secrets") {
			t.Fatalf("graphcd admin %s printed the repository password", strings.Join(args, " "))
		}
		return r.stdout
	}

	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		"web/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {tier: web}\n",
		"api/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: api}\ndata: {tier: api}\n",
		"extra/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\ndata: {tier: extra}\n",
	})
	repo := serveGit(t, dir)
	dest := cluster.Namespace(t)
	ctx := t.Context()

	project := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: ns}, Spec: v1alpha1.AppProjectSpec{
		Description:      "restored from a backup",
		SourceRepos:      []string{"*"},
		Destinations:     []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		SourceNamespaces: []string{tenant},
	}}
	if err := d.kube.Create(ctx, project); err != nil {
		t.Fatal(err)
	}
	// where is each app's namespace.
	where := map[string]string{"web": ns, "api": tenant, "extra": ns}
	newApp := func(name string) *v1alpha1.Application {
		return &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: where[name], Finalizers: []string{v1alpha1.ResourcesFinalizer}, Labels: map[string]string{"team": "a"}},
			Spec: v1alpha1.ApplicationSpec{
				Project:     "team",
				Source:      &v1alpha1.ApplicationSource{RepoURL: repo, Path: name, TargetRevision: "main"},
				Destination: v1alpha1.ApplicationDestination{Name: controller.InClusterName, Namespace: dest},
				SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
			},
		}
	}
	for _, name := range []string{"web", "api"} {
		if err := d.kube.Create(ctx, newApp(name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cluster.Client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "private-repo", Labels: map[string]string{wellknown.SecretTypeLabel: "repository"}},
		StringData: map[string]string{"url": "https://git.example.com/private.git", "username": "bot", "password": backupPassword},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	synced := func(t *testing.T, name string) {
		t.Helper()
		poll(t, name+" to be Synced", func() (bool, string) {
			a := &v1alpha1.Application{}
			if err := d.kube.Get(ctx, types.NamespacedName{Namespace: where[name], Name: name}, a); err != nil {
				return false, err.Error()
			}
			return a.Status.Sync.Status == "Synced", fmt.Sprintf("%+v", a.Status)
		})
	}
	liveUID := func(t *testing.T, name string) types.UID {
		t.Helper()
		cm, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("live ConfigMap %s: %v", name, err)
		}
		return cm.UID
	}
	synced(t, "web")
	synced(t, "api")
	uids := map[string]types.UID{"web": liveUID(t, "web"), "api": liveUID(t, "api")}

	// Without --include-secrets: no Secret at all, and the header says so.
	plain := adminOK(t, "export")
	for _, want := range []string{"Secrets are left out", "kind: Application\n", "name: web\n", "namespace: " + tenant + "\n", "kind: AppProject\n", "name: team\n", "name: graphcd-cm\n", v1alpha1.ResourcesFinalizer} {
		if !strings.Contains(plain, want) {
			t.Errorf("export lacks %q:\n%s", want, plain)
		}
	}
	for _, never := range []string{"kind: Secret", base64.StdEncoding.EncodeToString([]byte(backupPassword)), "uid:", "resourceVersion:", "managedFields", "creationTimestamp", "status:"} {
		if strings.Contains(plain, never) {
			t.Errorf("export without --include-secrets holds %q:\n%s", never, plain)
		}
	}
	// With it, to a file only its owner reads, even one that was readable.
	file := filepath.Join(t.TempDir(), "backup.yaml")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	adminOK(t, "export", "--include-secrets", "-o", file)
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("export file mode = %v, %v; want 0600", fi.Mode(), err)
	}
	if !strings.Contains(string(raw), "name: private-repo\n") || !strings.Contains(string(raw), base64.StdEncoding.EncodeToString([]byte(backupPassword))) {
		t.Errorf("export --include-secrets lacks the repository Secret:\n%s", raw)
	}

	// Delete everything graphcd holds; the apps without their resources.
	deleteApp := func(t *testing.T, name string) {
		t.Helper()
		a := &v1alpha1.Application{}
		if err := d.kube.Get(ctx, types.NamespacedName{Namespace: where[name], Name: name}, a); err != nil {
			t.Fatal(err)
		}
		a.Finalizers = nil
		if err := d.kube.Update(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := d.kube.Delete(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	deleteApp(t, "web")
	deleteApp(t, "api")
	projects := &v1alpha1.AppProjectList{}
	if err := d.kube.List(ctx, projects, ctrlclient.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for i := range projects.Items {
		if err := d.kube.Delete(ctx, &projects.Items[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, cm := range []string{wellknown.SettingsConfigMap, wellknown.RBACConfigMap} {
		if err := cluster.Client.CoreV1().ConfigMaps(ns).Delete(ctx, cm, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cluster.Client.CoreV1().Secrets(ns).Delete(ctx, "private-repo", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the apps to be gone", func() (bool, string) {
		n := 0
		for _, in := range []string{ns, tenant} {
			apps := &v1alpha1.ApplicationList{}
			if err := d.kube.List(ctx, apps, ctrlclient.InNamespace(in)); err != nil {
				return false, err.Error()
			}
			n += len(apps.Items)
		}
		return n == 0, fmt.Sprint(n, " apps left")
	})

	// A dry run reports and writes nothing.
	out := adminOK(t, "import", "-f", file, "--dry-run")
	for _, want := range []string{"created   Application " + ns + "/web (dry run)", "created   AppProject " + ns + "/team (dry run)", "created   Secret " + ns + "/private-repo (dry run)"} {
		if !strings.Contains(out, want) {
			t.Errorf("import --dry-run lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, backupPassword) {
		t.Error("import printed the repository password")
	}
	if err := d.kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, &v1alpha1.Application{}); !apierrors.IsNotFound(err) {
		t.Errorf("after a dry run, app web: %v; want not found", err)
	}

	// The import restores the apps, which find their resources Synced.
	out = adminOK(t, "import", "-f", file)
	for _, want := range []string{"created   Application " + ns + "/web", "created   Application " + tenant + "/api", "created   AppProject " + ns + "/team",
		"created   ConfigMap " + ns + "/" + wellknown.RBACConfigMap, "created   Secret " + ns + "/private-repo"} {
		if !strings.Contains(out, want) {
			t.Errorf("import lacks %q:\n%s", want, out)
		}
	}
	synced(t, "web")
	synced(t, "api")
	for name, uid := range uids {
		if got := liveUID(t, name); got != uid {
			t.Errorf("live ConfigMap %s was recreated: uid %s, was %s", name, got, uid)
		}
	}
	web := &v1alpha1.Application{}
	if err := d.kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, web); err != nil {
		t.Fatal(err)
	}
	if len(web.Finalizers) != 1 || web.Finalizers[0] != v1alpha1.ResourcesFinalizer || web.Labels["team"] != "a" || web.Spec.Project != "team" {
		t.Errorf("restored app web: finalizers %v labels %v project %q", web.Finalizers, web.Labels, web.Spec.Project)
	}
	secret, err := cluster.Client.CoreV1().Secrets(ns).Get(ctx, "private-repo", metav1.GetOptions{})
	if err != nil || string(secret.Data["password"]) != backupPassword {
		t.Errorf("restored repository Secret: %v", err)
	}

	// Importing again changes nothing, and says so.
	out = adminOK(t, "import", "-f", file)
	if !strings.Contains(out, "0 created, 0 updated,") || strings.Contains(out, "updated   ") || strings.Contains(out, "created   ") {
		t.Errorf("second import:\n%s\nwant every object unchanged", out)
	}

	// An app the file does not hold: --prune removes it, not its resources.
	if err := d.kube.Create(ctx, newApp("extra")); err != nil {
		t.Fatal(err)
	}
	synced(t, "extra")
	extraUID := liveUID(t, "extra")
	out = adminOK(t, "import", "-f", file, "--prune", "--dry-run")
	if !strings.Contains(out, "pruned    Application "+ns+"/extra (dry run)") {
		t.Errorf("import --prune --dry-run:\n%s\nwant extra pruned", out)
	}
	if err := d.kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: "extra"}, &v1alpha1.Application{}); err != nil {
		t.Errorf("after a dry run prune, app extra: %v", err)
	}
	out = adminOK(t, "import", "-f", file, "--prune")
	if !strings.Contains(out, "pruned    Application "+ns+"/extra\n") || !strings.Contains(out, "0 created, 0 updated,") || strings.Count(out, "pruned    ") != 1 {
		t.Errorf("import --prune:\n%s\nwant only extra pruned", out)
	}
	poll(t, "app extra to be gone", func() (bool, string) {
		err := d.kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: "extra"}, &v1alpha1.Application{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	if got := liveUID(t, "extra"); got != extraUID {
		t.Errorf("pruning app extra replaced its ConfigMap: uid %s, was %s", got, extraUID)
	}
	synced(t, "web")

	// Foreign and broken documents are refused, naming the document,
	// before anything is written.
	for _, tc := range []struct{ name, doc, want string }{
		{"deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: evil}\n", `document 2 (Deployment "evil"): apiVersion "apps/v1" kind "Deployment" is not imported`},
		{"argo app", "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: argo}\n", `document 2 (Application "argo")`},
		{"other secret", "apiVersion: v1\nkind: Secret\nmetadata: {name: db-password}\n", `document 2 (Secret "db-password"): not a repository`},
		{"bad yaml", "kind: [Application\n", "document 2: not YAML"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := writeFile(t, filepath.Join(t.TempDir(), "bad.yaml"), "apiVersion: graphcd.io/v1alpha1\nkind: AppProject\nmetadata: {name: sneaky}\nspec: {}\n---\n"+tc.doc)
			r := admin(t, "", "import", "-f", bad)
			if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("import of a file with %s = exit %d %q, want an error saying %q", tc.name, r.code, r.stderr, tc.want)
			}
			if err := d.kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: "sneaky"}, &v1alpha1.AppProject{}); !apierrors.IsNotFound(err) {
				t.Errorf("a refused file's first object was written: %v", err)
			}
		})
	}
}
