//go:build integration

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientretry "k8s.io/client-go/util/retry"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/cli"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// day2 is a logged-in CLI against one server, for the day-2 commands'
// tests.
type day2 struct {
	s    *authServer
	home string
	kube ctrlclient.Client
}

func startDay2(t *testing.T, serverArgs ...string) *day2 {
	t.Helper()
	s := startAuthServer(t, serverArgs...)
	d := &day2{s: s, home: t.TempDir()}
	secret, err := cluster.Client.CoreV1().Secrets(s.namespace).Get(t.Context(), "graphcd-initial-admin-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.ok(t, string(secret.Data["password"])+"\n", "login", s.base, "--username", "admin", "--password-stdin")
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if d.kube, err = ctrlclient.New(cluster.Config, ctrlclient.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d *day2) run(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	return d.s.runCLIBinary(t, d.home, stdin, nil, args...)
}

// ok runs the CLI and fails the test unless it exits 0.
func (d *day2) ok(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	r := d.run(t, stdin, args...)
	if r.code != 0 {
		t.Fatalf("graphcd %s = exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// fails runs the CLI and fails the test unless it exits with code and
// says want on stderr.
func (d *day2) fails(t *testing.T, code int, want string, args ...string) {
	t.Helper()
	r := d.run(t, "", args...)
	if r.code != code || !strings.Contains(r.stderr, want) {
		t.Errorf("graphcd %s = exit %d %q, want exit %d saying %q", strings.Join(args, " "), r.code, r.stderr, code, want)
	}
}

func (d *day2) project(t *testing.T, name string) *v1alpha1.AppProject {
	t.Helper()
	p := &v1alpha1.AppProject{}
	if err := d.kube.Get(t.Context(), types.NamespacedName{Namespace: d.s.namespace, Name: name}, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The day-2 commands against a real server with its controller: sync
// windows and source parameters, each read back from the objects in the
// cluster.
func TestCLIDay2(t *testing.T) {
	d := startDay2(t, "--controller=true")

	t.Run("proj windows", func(t *testing.T) {
		t.Parallel()
		d.ok(t, "", "proj", "create", "-f", writeFile(t, filepath.Join(t.TempDir(), "p.yaml"), `apiVersion: graphcd.io/v1alpha1
kind: AppProject
metadata: {name: windows}
spec:
  description: keeps its other fields
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: "*"}]
`))
		if got := d.ok(t, "", "proj", "windows", "list", "windows", "-o", "json"); strings.TrimSpace(got) != "[]" {
			t.Errorf("windows of a new project = %q, want []", got)
		}
		d.ok(t, "", "proj", "windows", "add", "windows", "--kind", "deny", "--schedule", "0 22 * * *", "--duration", "8h",
			"--applications", "*", "--description", "nightly freeze")
		d.ok(t, "", "proj", "windows", "add", "windows", "--kind", "allow", "--schedule", "* * * * *", "--duration", "1h",
			"--namespaces", "prod-*,web", "--clusters", "in-cluster", "--manual-sync", "--time-zone", "Europe/Berlin", "--use-and-operator")
		p := d.project(t, "windows")
		want := []v1alpha1.SyncWindow{
			{Kind: "deny", Schedule: "0 22 * * *", Duration: "8h", Applications: []string{"*"}, Description: "nightly freeze"},
			{Kind: "allow", Schedule: "* * * * *", Duration: "1h", Namespaces: []string{"prod-*", "web"}, Clusters: []string{"in-cluster"},
				ManualSync: true, TimeZone: "Europe/Berlin", UseAndOperator: true},
		}
		if d := diffJSON(p.Spec.SyncWindows, want); d != "" {
			t.Errorf("windows after two adds (-got +want):\n%s", d)
		}
		if p.Spec.Description != "keeps its other fields" || len(p.Spec.Destinations) != 1 {
			t.Errorf("adding windows changed the rest of the spec: %+v", p.Spec)
		}
		// The every-minute window, open for an hour, is active now.
		table := d.ok(t, "", "proj", "windows", "list", "windows")
		if lines := strings.Split(strings.TrimSpace(table), "\n"); len(lines) != 3 ||
			!strings.HasPrefix(lines[2], "1") || !strings.Contains(lines[2], "Active") || !strings.Contains(lines[2], "Europe/Berlin") {
			t.Errorf("windows list =\n%s", table)
		}

		d.ok(t, "", "proj", "windows", "update", "windows", "0", "--duration", "4h", "--namespaces", "batch")
		d.ok(t, "", "proj", "windows", "disable-manual-sync", "windows", "1")
		p = d.project(t, "windows")
		if w := p.Spec.SyncWindows[0]; w.Duration != "4h" || w.Schedule != "0 22 * * *" || w.Kind != "deny" || strings.Join(w.Namespaces, ",") != "batch" {
			t.Errorf("window 0 after update = %+v", w)
		}
		if p.Spec.SyncWindows[1].ManualSync {
			t.Error("disable-manual-sync left manualSync on")
		}
		d.ok(t, "", "proj", "windows", "enable-manual-sync", "windows", "1")
		if !d.project(t, "windows").Spec.SyncWindows[1].ManualSync {
			t.Error("enable-manual-sync left manualSync off")
		}

		// Bad input is refused before anything is written.
		d.fails(t, command.ExitUsage, "--kind", "proj", "windows", "add", "windows", "--kind", "maybe", "--schedule", "* * * * *", "--duration", "1h", "--applications", "*")
		d.fails(t, command.ExitUsage, "--schedule", "proj", "windows", "add", "windows", "--kind", "deny", "--schedule", "at noon", "--duration", "1h", "--applications", "*")
		d.fails(t, command.ExitUsage, "--duration", "proj", "windows", "add", "windows", "--kind", "deny", "--schedule", "@daily", "--duration", "long", "--applications", "*")
		d.fails(t, command.ExitUsage, "--time-zone", "proj", "windows", "add", "windows", "--kind", "deny", "--schedule", "@daily", "--duration", "1h", "--applications", "*", "--time-zone", "Mars/Olympus")
		d.fails(t, command.ExitUsage, "applies to nothing", "proj", "windows", "add", "windows", "--kind", "deny", "--schedule", "@daily", "--duration", "1h")
		d.fails(t, cli.ExitError, "no sync window 7", "proj", "windows", "update", "windows", "7", "--duration", "1h")
		d.fails(t, command.ExitUsage, "want a number", "proj", "windows", "delete", "windows", "first")
		d.fails(t, cli.ExitError, "NOT_FOUND", "proj", "windows", "list", "no-such-project")
		if n := len(d.project(t, "windows").Spec.SyncWindows); n != 2 {
			t.Errorf("bad input left %d windows, want 2", n)
		}

		d.ok(t, "", "proj", "windows", "delete", "windows", "0")
		p = d.project(t, "windows")
		if len(p.Spec.SyncWindows) != 1 || p.Spec.SyncWindows[0].Kind != "allow" {
			t.Errorf("after deleting window 0: %+v", p.Spec.SyncWindows)
		}
		d.ok(t, "", "proj", "windows", "delete", "windows", "0")
		if got := d.project(t, "windows").Spec.SyncWindows; len(got) != 0 {
			t.Errorf("after deleting every window: %+v", got)
		}
	})
	t.Run("app set and unset", func(t *testing.T) {
		t.Parallel()
		testAppSetUnset(t, d)
	})
	t.Run("sync and diff --local", func(t *testing.T) {
		t.Parallel()
		testLocal(t, d)
	})
}

// app set and app unset change the source's rendering options and leave
// the rest of the spec as it was; a multi-source app's changes go to the
// source --source-position names.
func testAppSetUnset(t *testing.T, d *day2) {
	ctx := t.Context()
	apps := map[string]v1alpha1.ApplicationSpec{
		"params": {
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/charts.git", Path: "web", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"},
		},
		"params-multi": {
			Project: "default",
			Sources: []v1alpha1.ApplicationSource{
				{RepoURL: "https://git.example.com/values.git", TargetRevision: "main", Ref: "values"},
				{RepoURL: "https://git.example.com/apps.git", Path: "kust", TargetRevision: "main"},
			},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"},
		},
	}
	for name, spec := range apps {
		if err := d.kube.Create(ctx, &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.s.namespace}, Spec: spec}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(name string) v1alpha1.ApplicationSpec {
		t.Helper()
		a := &v1alpha1.Application{}
		if err := d.kube.Get(ctx, types.NamespacedName{Namespace: d.s.namespace, Name: name}, a); err != nil {
			t.Fatal(err)
		}
		return a.Spec
	}
	literal := writeFile(t, filepath.Join(t.TempDir(), "values.yaml"), "replicas: 2\n")

	d.ok(t, "", "app", "set", "params", "-p", "image.tag=v2", "--helm-set-string", "build=0042", "--helm-set-file", "ca=certs/ca.pem",
		"--values", "values.yaml", "--values", "values-prod.yaml", "--values-literal-file", literal, "--release-name", "web",
		"--helm-skip-crds", "--ignore-missing-value-files", "--helm-pass-credentials")
	h := get("params").Source.Helm
	if h == nil || len(h.Parameters) != 2 || h.Parameters[0] != (v1alpha1.HelmParameter{Name: "image.tag", Value: "v2"}) ||
		h.Parameters[1] != (v1alpha1.HelmParameter{Name: "build", Value: "0042", ForceString: true}) ||
		len(h.FileParameters) != 1 || h.FileParameters[0].Path != "certs/ca.pem" || strings.Join(h.ValueFiles, ",") != "values.yaml,values-prod.yaml" ||
		h.Values != "replicas: 2\n" || h.ReleaseName != "web" || !h.SkipCrds || !h.IgnoreMissingValueFiles || !h.PassCredentials {
		t.Errorf("helm after app set = %+v", h)
	}
	d.ok(t, "", "app", "unset", "params", "-p", "image.tag", "-p", "ca", "--values", "values.yaml", "--values-literal", "--pass-credentials", "--ignore-missing-value-files")
	spec := get("params")
	h = spec.Source.Helm
	if h == nil || len(h.Parameters) != 1 || h.Parameters[0].Name != "build" || len(h.FileParameters) != 0 ||
		strings.Join(h.ValueFiles, ",") != "values-prod.yaml" || h.Values != "" || h.PassCredentials || h.IgnoreMissingValueFiles || h.ReleaseName != "web" {
		t.Errorf("helm after app unset = %+v", h)
	}
	if spec.Source.Path != "web" || spec.Destination.Namespace != "web" {
		t.Errorf("app unset changed the rest of the spec: %+v", spec)
	}

	// The Kustomize source of the multi-source app is the second.
	d.fails(t, command.ExitUsage, "--source-position 1..2", "app", "set", "params-multi", "--nameprefix", "p-")
	d.ok(t, "", "app", "set", "params-multi", "--source-position", "2", "--kustomize-image", "nginx=nginx:1.27", "--nameprefix", "p-",
		"--namesuffix", "-s", "--kustomize-replica", "web=3", "--kustomize-namespace", "team", "--kustomize-common-label", "team=web",
		"--plugin-env", "MODE=fast")
	spec = get("params-multi")
	k := spec.Sources[1].Kustomize
	if k == nil || strings.Join(k.Images, ",") != "nginx=nginx:1.27" || k.NamePrefix != "p-" || k.NameSuffix != "-s" || k.Namespace != "team" ||
		len(k.Replicas) != 1 || k.Replicas[0].Name != "web" || k.CommonLabels["team"] != "web" {
		t.Errorf("kustomize of source 2 after app set = %+v", k)
	}
	if p := spec.Sources[1].Plugin; p == nil || len(p.Env) != 1 || p.Env[0].Name != "MODE" || p.Env[0].Value != "fast" {
		t.Errorf("plugin of source 2 after app set = %+v", p)
	}
	if spec.Sources[0].Kustomize != nil || spec.Sources[0].Ref != "values" {
		t.Errorf("app set --source-position 2 changed source 1: %+v", spec.Sources[0])
	}
	d.ok(t, "", "app", "unset", "params-multi", "--source-position", "2", "--kustomize-image", "nginx", "--nameprefix", "--namesuffix",
		"--kustomize-replica", "web", "--kustomize-namespace", "--plugin-env", "MODE")
	d.ok(t, "", "app", "unset", "params-multi", "--source-position", "1", "--ref")
	spec = get("params-multi")
	if k := spec.Sources[1].Kustomize; k == nil || len(k.Images) != 0 || k.NamePrefix != "" || len(k.Replicas) != 0 || k.CommonLabels["team"] != "web" {
		t.Errorf("kustomize of source 2 after app unset = %+v", k)
	}
	if spec.Sources[0].Ref != "" {
		t.Errorf("app unset --ref left ref %q", spec.Sources[0].Ref)
	}

	d.ok(t, "", "app", "set", "params", "--directory-recurse", "--directory-include", "*.yaml", "--jsonnet-tla-str", "env=prod", "--jsonnet-ext-var-code", "n=1+1", "--jsonnet-libs", "vendor")
	if dir := get("params").Source.Directory; dir == nil || !dir.Recurse || dir.Include != "*.yaml" || len(dir.Jsonnet.TLAs) != 1 ||
		!dir.Jsonnet.ExtVars[0].Code || strings.Join(dir.Jsonnet.Libs, ",") != "vendor" {
		t.Errorf("directory after app set = %+v", dir)
	}
	// Application names complete from the server, for set and unset too.
	if out := d.ok(t, "", "__complete", "app", "unset", "params-"); !strings.Contains(out, "params-multi\n") || strings.Contains(out, "params\n") {
		t.Errorf("completing app unset params- = %q, want params-multi only", out)
	}
	d.fails(t, command.ExitUsage, "nothing to unset", "app", "unset", "params")
	d.fails(t, command.ExitUsage, "want NAME=VALUE", "app", "set", "params", "-p", "novalue")
	d.fails(t, cli.ExitError, "NOT_FOUND", "app", "unset", "no-such-app", "--nameprefix")
}

// app sync --local deploys the manifests of a local directory instead of
// Git's, needs the override right, keeps every project rule and refuses
// while automated sync is on; app diff --local compares the live objects
// with those manifests.
func testLocal(t *testing.T, d *day2) {
	ctx := t.Context()
	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		"app/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: git\n",
	})
	repo := serveGit(t, dir)
	dest := cluster.Namespace(t)
	if err := d.kube.Create(ctx, &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: "local", Namespace: d.s.namespace},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:                []string{"*"},
			Destinations:               []v1alpha1.ApplicationDestination{{Server: "*", Namespace: dest}},
			NamespaceResourceWhitelist: []metav1.GroupKind{{Kind: "ConfigMap"}},
			Roles: []v1alpha1.ProjectRole{{Name: "ci", Policies: []string{
				"p, proj:local:ci, applications, get, local/*, allow",
				"p, proj:local:ci, applications, sync, local/*, allow",
			}}},
		},
	}); err != nil {
		t.Fatal(err)
	}
	if err := d.kube.Create(ctx, &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "local-app", Namespace: d.s.namespace},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "local",
			Source:      &v1alpha1.ApplicationSource{RepoURL: repo, Path: "app", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Name: controller.InClusterName, Namespace: dest},
		},
	}); err != nil {
		t.Fatal(err)
	}
	local := t.TempDir()
	writeFile(t, filepath.Join(local, "settings.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: local\n")
	writeFile(t, filepath.Join(local, "more", "extra.json"), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"extra"},"data":{"from":"disk"}}`)
	writeFile(t, filepath.Join(local, "notes.txt"), "not a manifest")
	configMap := func(name string) map[string]string {
		t.Helper()
		cm, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return cm.Data
	}

	// Without override, the project's CI role may sync but not sync
	// local manifests.
	token := strings.TrimSpace(d.ok(t, "", "proj", "role", "token", "create", "local", "ci"))
	ci := func(args ...string) cliResult {
		return d.s.runCLIBinary(t, t.TempDir(), "", []string{"GRAPHCD_SERVER=" + d.s.base, "GRAPHCD_AUTH_TOKEN=" + token}, args...)
	}
	poll(t, "the CI token to see local-app", func() (bool, string) {
		r := ci("app", "get", "local-app")
		return r.code == 0, r.stderr
	})
	if r := ci("app", "sync", "local-app", "--local", local); r.code != cli.ExitError || !strings.Contains(r.stderr, "FORBIDDEN") {
		t.Errorf("sync --local without override = %d %q, want exit 2 FORBIDDEN", r.code, r.stderr)
	}
	if configMap("settings") != nil {
		t.Fatal("a refused sync --local deployed something")
	}

	// Synced with Git first, with ApplyOutOfSyncOnly: a local sync must
	// still apply what is Synced with Git but differs locally.
	d.ok(t, "", "app", "sync", "local-app", "--timeout", "2m")
	if got := configMap("settings"); got["mode"] != "git" {
		t.Fatalf("settings after the sync from Git = %v", got)
	}
	if err := clientretry.RetryOnConflict(clientretry.DefaultRetry, func() error {
		app := &v1alpha1.Application{}
		if err := d.kube.Get(ctx, types.NamespacedName{Namespace: d.s.namespace, Name: "local-app"}, app); err != nil {
			return err
		}
		app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{SyncOptions: []string{"ApplyOutOfSyncOnly=true"}}
		return d.kube.Update(ctx, app)
	}); err != nil {
		t.Fatal(err)
	}
	d.ok(t, "", "app", "wait", "local-app", "--sync", "--timeout", "1m")

	// The local manifests differ from the cluster.
	r := d.run(t, "", "app", "diff", "local-app", "--local", local)
	if r.code != cli.ExitNotAsExpected || !strings.Contains(r.stdout, "+  mode: local") || !strings.Contains(r.stdout, "+  from: disk") {
		t.Errorf("diff --local before the sync = %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// The admin may: the local manifests are what is deployed.
	out := d.ok(t, "", "app", "sync", "local-app", "--local", local, "--timeout", "2m")
	if !strings.Contains(out, "Succeeded") || !strings.Contains(out, "extra") {
		t.Errorf("sync --local printed:\n%s", out)
	}
	if got := configMap("settings"); got["mode"] != "local" {
		t.Errorf("settings after sync --local = %v, want mode local", got)
	}
	if got := configMap("extra"); got["from"] != "disk" {
		t.Errorf("extra after sync --local = %v", got)
	}
	app := &v1alpha1.Application{}
	if err := d.kube.Get(ctx, types.NamespacedName{Namespace: d.s.namespace, Name: "local-app"}, app); err != nil {
		t.Fatal(err)
	}
	if st := app.Status.OperationState; st == nil || st.Phase != v1alpha1.OperationSucceeded || st.Operation.Sync == nil ||
		len(st.Operation.Sync.Manifests) != 2 || st.SyncResult == nil || len(st.SyncResult.Resources) != 2 {
		t.Errorf("operation state after sync --local = %+v", st)
	}
	if len(app.Status.History) != 1 {
		t.Errorf("history after a sync from Git and one --local = %+v, want the first only", app.Status.History)
	}
	// The cluster now agrees with the local manifests and not with Git.
	poll(t, "diff --local to find nothing after the sync", func() (bool, string) {
		r := d.run(t, "", "app", "diff", "local-app", "--local", local)
		return r.code == 0, r.stdout + r.stderr
	})
	poll(t, "diff against Git to show the local change", func() (bool, string) {
		r := d.run(t, "", "app", "diff", "local-app")
		return r.code == cli.ExitNotAsExpected && strings.Contains(r.stdout, "mode"), r.stdout + r.stderr
	})

	// Each local object meets the project's rules: a Secret is not in the
	// project's whitelist, so the sync fails and applies nothing.
	denied := t.TempDir()
	writeFile(t, filepath.Join(denied, "all.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: denied}\n---\n"+
		"apiVersion: v1\nkind: Secret\nmetadata: {name: token}\nstringData: {k: v}\n")
	r = d.run(t, "", "app", "sync", "local-app", "--local", denied, "--timeout", "2m")
	if r.code != cli.ExitNotAsExpected || !strings.Contains(r.stdout+r.stderr, "Secret") {
		t.Errorf("sync --local of a kind the project refuses = %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := cluster.Client.CoreV1().Secrets(dest).Get(ctx, "token", metav1.GetOptions{}); err == nil {
		t.Error("the project's refused Secret was created")
	}
	if got := configMap("settings"); got["mode"] != "local" {
		t.Errorf("settings after a refused sync = %v, want it untouched", got)
	}

	// Bad input.
	d.fails(t, cli.ExitError, "no such file", "app", "sync", "local-app", "--local", filepath.Join(local, "nope"))
	kust := t.TempDir()
	writeFile(t, filepath.Join(kust, "kustomization.yaml"), "resources: []\n")
	d.fails(t, cli.ExitError, "kustomize build", "app", "diff", "local-app", "--local", kust)
	var many strings.Builder
	for i := range 251 {
		fmt.Fprintf(&many, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x-%d}\n---\n", i)
	}
	d.fails(t, cli.ExitError, "at most 250", "app", "sync", "local-app", "--local", writeFile(t, filepath.Join(t.TempDir(), "many.yaml"), many.String()))
	d.fails(t, command.ExitUsage, "--local-include needs --local", "app", "diff", "local-app", "--local-include", "*.yml")

	// Automated sync would put Git back at once: refused, but a dry run
	// is fine.
	d.ok(t, "", "app", "set", "local-app", "--sync-policy", "automated")
	d.fails(t, cli.ExitError, "automated sync is enabled", "app", "sync", "local-app", "--local", local, "--async")
}

// diffJSON compares got and want as their JSON, so nil and empty agree.
func diffJSON(got, want any) string {
	g, _ := json.MarshalIndent(got, "", "  ")
	w, _ := json.MarshalIndent(want, "", "  ")
	if string(g) == string(w) {
		return ""
	}
	return "got:  " + string(g) + "\nwant: " + string(w)
}
