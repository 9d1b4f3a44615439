//go:build integration

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// argoCDModule is the Argo CD release whose CRDs the test installs, read
// from the Go module cache (go mod download fetches it on a fresh machine).
const argoCDModule = "github.com/argoproj/argo-cd/v3@v3.1.16"

// repoPassword is the repository Secret's password, which the report must
// never show.
const repoPassword = "argo-repo-s3cret-Pa55"

// An Argo CD installation made of Argo CD's own CRDs and objects in the
// form its documentation gives (label tracking, or annotation tracking as
// Argo CD 3's default, an AppProject with a role
// and a sync window, an ApplicationSet, argocd-cm with dex.config and a
// health customization, argocd-rbac-cm, argocd-secret, a repository and a
// cluster Secret, the notifications ConfigMap, a running application
// controller), and the live resources Argo CD deployed. import-argocd
// reports what maps, refuses nothing, writes nothing in a dry run, and with
// --apply writes graphcd's objects; graphcd then reconciles the app Synced
// and Healthy on the very same live objects (uid and resourceVersion
// unchanged), and a second --apply changes nothing.
func TestAdminImportArgoCD(t *testing.T) {
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	installArgoCRDs(t, dyn)
	bin := buildBinary(t)
	install := exec.CommandContext(t.Context(), bin, "install", "crds", "--kubeconfig", cluster.Kubeconfig)
	install.Env = binaryEnv()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("graphcd install crds: %v\n%s", err, out)
	}
	t.Run("label", func(t *testing.T) {
		testImportArgoCD(t, dyn, bin, argoTracking{
			setting: "application.resourceTrackingMethod: label",
			report:  "  unchanged:   application.resourceTrackingMethod label\n",
			method:  "label",
			live:    func(string) string { return "labels: {app.kubernetes.io/instance: guestbook}" },
		})
	})
	t.Run("annotation by default", func(t *testing.T) {
		testImportArgoCD(t, dyn, bin, argoTracking{
			report: "  changed:     application.resourceTrackingMethod unset, which Argo CD 3 reads as annotation: set to annotation (if this Argo CD is 2.x, set it to label)\n",
			method: "annotation",
			live: func(dest string) string {
				return fmt.Sprintf("annotations: {argocd.argoproj.io/tracking-id: 'guestbook:/ConfigMap:%s/guestbook'}", dest)
			},
		})
	})
}

// argoTracking is how the Argo CD of a test tracked resources.
type argoTracking struct {
	// setting is argocd-cm's line, if any.
	setting string
	// report is the report's line on it.
	report string
	// method is what graphcd-cm must say.
	method string
	// live is the metadata Argo CD left on a live object in dest.
	live func(dest string) string
}

func testImportArgoCD(t *testing.T, dyn dynamic.Interface, bin string, tracking argoTracking) {
	ctx := t.Context()
	argo, ns, dest, tenant := cluster.Namespace(t), cluster.Namespace(t), cluster.Namespace(t), cluster.Namespace(t)
	// Argo CD's and graphcd's Applications keep their finalizers once the
	// controllers stop: take them off, so the namespaces go.
	t.Cleanup(func() {
		for _, gvr := range []schema.GroupVersionResource{v1alpha1.GroupVersion.WithResource("applications"), {Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}} {
			for _, in := range []string{argo, ns, tenant} {
				l, _ := dyn.Resource(gvr).Namespace(in).List(context.WithoutCancel(ctx), metav1.ListOptions{})
				for _, a := range l.Items {
					_, _ = dyn.Resource(gvr).Namespace(in).Patch(context.WithoutCancel(ctx), a.GetName(), types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
				}
			}
		}
	})
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &authServer{base: "http://127.0.0.1:" + strconv.Itoa(port), namespace: ns, bin: bin}

	manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: guestbook}\ndata: {tier: web}\n"
	dir, _ := reposervertest.CommitFiles(t, map[string]string{"guestbook/cm.yaml": manifest})
	repo := serveGit(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("argo-admin-pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	createYAML(t, dyn, argo, fmt.Sprintf(argoInstall, repo, dest, s.base, repoPassword, hash, tracking.setting))
	// An app in another namespace Argo CD serves (apps in any namespace).
	createYAML(t, dyn, argo, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cmd-params-cm}\ndata: {application.namespaces: '"+tenant+"'}\n")
	createYAML(t, dyn, tenant, fmt.Sprintf("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: tenant-app}\nspec:\n  project: team\n  source: {repoURL: %s, path: guestbook}\n  destination: {name: in-cluster, namespace: %s}\n", repo, tenant))
	// The live object as Argo CD's tracking left it.
	live := createYAML(t, dyn, dest, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: guestbook\n  "+tracking.live(dest)+"\ndata: {tier: web}\n")[0]

	importArgo := func(t *testing.T, args ...string) string {
		t.Helper()
		r := s.runCLIBinary(t, t.TempDir(), "", nil, append([]string{"admin", "import-argocd", "--kubeconfig", cluster.Kubeconfig, "--namespace", argo, "--graphcd-namespace", ns}, args...)...)
		if r.code != 0 {
			t.Fatalf("import-argocd %v = exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, repoPassword) || strings.Contains(r.stdout+r.stderr, "super-secret") {
			t.Fatalf("import-argocd %v printed a secret value:\n%s", args, r.stdout)
		}
		return r.stdout
	}

	// A namespace without Argo CD is an error, not an empty import.
	if r := s.runCLIBinary(t, t.TempDir(), "", nil, "admin", "import-argocd", "--kubeconfig", cluster.Kubeconfig, "--namespace", dest, "--graphcd-namespace", ns); r.code != 1 ||
		!strings.Contains(r.stderr, "no Argo CD in namespace "+dest+": no Applications") {
		t.Errorf("import-argocd of a namespace without Argo CD = exit %d, %q", r.code, r.stderr)
	}

	// The dry run: the report, and nothing written.
	out := importArgo(t)
	t.Logf("dry run:\n%s", out)
	for _, want := range []string{
		"WARNING: Argo CD's application controller still runs (StatefulSet " + argo + "/argocd-application-controller, 1 replicas)",
		"Application " + argo + "/guestbook -> Application " + ns + "/guestbook\n",
		"  changed:     apiVersion argoproj.io/v1alpha1 -> graphcd.io/v1alpha1\n",
		"  changed:     namespace " + argo + " -> " + ns + "\n",
		"  unchanged:   tracking id guestbook: live resources keep their owner\n",
		"Application " + tenant + "/tenant-app -> Application " + tenant + "/tenant-app\n",
		"  unchanged:   tracking id " + tenant + "_tenant-app: live resources keep their owner\n",
		"  changed:     stays in namespace " + tenant + ": graphcd serves it only when --application-namespaces names it\n",
		"  unchanged:   finalizers [resources-finalizer.argocd.argoproj.io] (graphcd honours Argo CD's)\n",
		"  changed:     spec.syncPolicy.automated.enabled: true left out: automated sync is on in graphcd while automated is set\n",
		"  changed:     status left out: graphcd compares again; sync history starts anew\n",
		"AppProject " + argo + "/team -> AppProject " + ns + "/team\n",
		"  changed:     role deployer: 1 token(s) Argo CD issued left out: they do not verify in graphcd; issue new ones (createProjectToken)\n",
		"  unchanged:   role deployer: 1 policy line(s), 1 group(s), the same subject proj:team:deployer\n",
		"  unchanged:   1 sync window(s)\n",
		"ApplicationSet " + argo + "/guestbooks -> ApplicationSet " + ns + "/guestbooks\n",
		"ConfigMap " + argo + "/argocd-cm -> ConfigMap " + ns + "/graphcd-cm\n",
		tracking.report,
		"  unchanged:   application.instanceLabelKey app.kubernetes.io/instance (the default of both)\n",
		"  unchanged:   account ci (apiKey, login)\n",
		"  cannot move: timeout.reconciliation: graphcd does not read it; use graphcd's --app-resync\n",
		"ConfigMap " + argo + "/argocd-rbac-cm -> ConfigMap " + ns + "/graphcd-rbac-cm\n",
		"  unchanged:   policy.csv\n",
		"  unchanged:   policy.default\n",
		"  unchanged:   roles role:org-admin: the same names, built-in role:readonly and role:admin included\n",
		"  unchanged:   default role role:readonly\n",
		"ConfigMap " + argo + "/argocd-notifications-cm -> ConfigMap " + ns + "/graphcd-notifications-cm\n",
		"Secret " + argo + "/argocd-secret -> Secret " + ns + "/graphcd-secret\n",
		"  unchanged:   admin.password (copied, value not shown)\n",
		"  unchanged:   dex.github.clientSecret (copied, value not shown)\n",
		"  cannot move: server.secretkey: not copied; graphcd signs sessions with its own key: users log in again\n",
		"Secret " + argo + "/private-repo -> Secret " + ns + "/private-repo\n",
		"  unchanged:   label argocd.argoproj.io/secret-type=repository, keys [password url username] (values not shown)\n",
		"Secret " + argo + "/prod -> Secret " + ns + "/prod\n",
		"created   Application " + ns + "/guestbook (dry run)\n",
		"created   ConfigMap " + ns + "/graphcd-cm (dry run)\n",
		"created   Secret " + ns + "/graphcd-secret (dry run)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run report lacks %q", want)
		}
	}
	if _, err := dyn.Resource(v1alpha1.GroupVersion.WithResource("applications")).Namespace(ns).Get(ctx, "guestbook", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the dry run created the Application: %v", err)
	}

	// Stop Argo CD's controller, apply, and graphcd adopts the live object.
	if _, err := cluster.Client.AppsV1().StatefulSets(argo).Patch(ctx, "argocd-application-controller", types.MergePatchType, []byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	out = importArgo(t, "--apply")
	if strings.Contains(out, "WARNING") || strings.Contains(out, "(dry run)") {
		t.Errorf("--apply with the controller stopped:\n%s", out)
	}
	cm, err := cluster.Client.CoreV1().ConfigMaps(ns).Get(ctx, "graphcd-cm", metav1.GetOptions{})
	if err != nil || cm.Data["application.resourceTrackingMethod"] != tracking.method || cm.Data["timeout.reconciliation"] != "" || !strings.Contains(cm.Data["dex.config"], "$dex.github.clientSecret") {
		t.Fatalf("graphcd-cm = %v, %v", cm.Data, err)
	}
	sec, err := cluster.Client.CoreV1().Secrets(ns).Get(ctx, "private-repo", metav1.GetOptions{})
	if err != nil || string(sec.Data["password"]) != repoPassword {
		t.Fatalf("repository Secret not copied: %v", err)
	}
	s.serve(t, "--controller=true")
	poll(t, "the imported app to be Synced and Healthy", func() (bool, string) {
		a, err := dyn.Resource(v1alpha1.GroupVersion.WithResource("applications")).Namespace(ns).Get(ctx, "guestbook", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		sync, _, _ := unstructured.NestedString(a.Object, "status", "sync", "status")
		health, _, _ := unstructured.NestedString(a.Object, "status", "health", "status")
		b, _ := json.Marshal(a.Object["status"])
		return sync == "Synced" && health == "Healthy", string(b)
	})
	after, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(ctx, "guestbook", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.UID != live.GetUID() || after.ResourceVersion != live.GetResourceVersion() {
		t.Errorf("live ConfigMap uid %s -> %s, resourceVersion %s -> %s: want it adopted untouched", live.GetUID(), after.UID, live.GetResourceVersion(), after.ResourceVersion)
	}

	// Again: nothing changes.
	var again struct {
		DryRun  bool `json:"dryRun"`
		Actions []struct {
			Action, Kind, Namespace, Name string
		} `json:"actions"`
	}
	if err := json.Unmarshal([]byte(importArgo(t, "--apply", "-o", "json")), &again); err != nil {
		t.Fatal(err)
	}
	if again.DryRun || len(again.Actions) == 0 {
		t.Fatalf("second --apply: %+v", again)
	}
	for _, a := range again.Actions {
		if a.Action != "unchanged" {
			t.Errorf("second --apply: %s %s %s/%s, want unchanged", a.Action, a.Kind, a.Namespace, a.Name)
		}
	}
}

// installArgoCRDs installs Argo CD's Application, AppProject and
// ApplicationSet CRDs from the Argo CD module and waits until they serve.
func installArgoCRDs(t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not in PATH")
	}
	dl := exec.CommandContext(t.Context(), goTool, "mod", "download", "-json", argoCDModule)
	dl.Dir = t.TempDir() // outside graphcd's module: the version is not one of its requirements
	dl.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on")
	raw, err := dl.Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v\n%s", argoCDModule, err, raw)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(raw, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download %s: %v\n%s", argoCDModule, err, raw)
	}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	for _, name := range []string{"application", "appproject", "applicationset"} {
		b, err := os.ReadFile(filepath.Join(mod.Dir, "manifests", "crds", name+"-crd.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &obj.Object); err != nil {
			t.Fatal(err)
		}
		if _, err := crds.Create(t.Context(), obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	for _, r := range []string{"applications", "appprojects", "applicationsets"} {
		poll(t, r+".argoproj.io to be served", func() (bool, string) {
			_, err := dyn.Resource(schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: r}).List(t.Context(), metav1.ListOptions{})
			return err == nil, fmt.Sprint(err)
		})
	}
}

// createYAML creates the objects of a YAML stream in namespace.
func createYAML(t *testing.T, dyn dynamic.Interface, namespace, stream string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for doc := range strings.SplitSeq(stream, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		gvk := obj.GroupVersionKind()
		resource := strings.ToLower(gvk.Kind) + "s" // every kind here
		created, err := dyn.Resource(gvk.GroupVersion().WithResource(resource)).Namespace(namespace).Create(t.Context(), obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s %s: %v", gvk.Kind, obj.GetName(), err)
		}
		out = append(out, created)
	}
	return out
}

// argoInstall is an Argo CD installation's objects, in the form of Argo
// CD's declarative setup documentation. Arguments: the repository URL, the
// destination namespace, the URL, the repository password, the admin's
// bcrypt hash, the tracking method's line of argocd-cm.
const argoInstall = `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: team
spec:
  description: the web team
  sourceRepos: ['*']
  destinations:
  - namespace: '*'
    server: https://kubernetes.default.svc
  clusterResourceWhitelist:
  - group: ''
    kind: Namespace
  roles:
  - name: deployer
    description: CI deploys
    policies:
    - p, proj:team:deployer, applications, sync, team/*, allow
    groups: [team-deployers]
    jwtTokens:
    - iat: 1700000000
  syncWindows:
  - kind: allow
    schedule: '10 1 * * *'
    duration: 1h
    applications: ['*']
    manualSync: true
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
  finalizers: [resources-finalizer.argocd.argoproj.io]
  labels: {team: web}
spec:
  project: team
  source:
    repoURL: %[1]s
    targetRevision: main
    path: guestbook
  destination:
    server: https://kubernetes.default.svc
    namespace: %[2]s
  syncPolicy:
    automated: {enabled: true, prune: true, selfHeal: true}
    syncOptions: [ApplyOutOfSyncOnly=true]
status:
  sync: {status: Synced}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: guestbooks
spec:
  goTemplate: true
  generators:
  - list:
      elements: []
  template:
    metadata:
      name: '{{.cluster}}-guestbook'
    spec:
      project: team
      source: {repoURL: %[1]s, targetRevision: main, path: guestbook}
      destination: {server: '{{.url}}', namespace: guestbook}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  labels: {app.kubernetes.io/name: argocd-cm, app.kubernetes.io/part-of: argocd}
data:
  url: %[3]s
  %[6]s
  timeout.reconciliation: 180s
  accounts.ci: apiKey, login
  admin.enabled: "true"
  dex.config: |
    connectors:
    - type: github
      id: github
      name: GitHub
      config:
        clientID: aabbccddeeff00112233
        clientSecret: $dex.github.clientSecret
        orgs:
        - name: example
  resource.customizations.health.example.com_Widget: |
    hs = {}
    hs.status = "Healthy"
    return hs
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-rbac-cm
  labels: {app.kubernetes.io/name: argocd-rbac-cm, app.kubernetes.io/part-of: argocd}
data:
  policy.default: role:readonly
  policy.csv: |
    p, role:org-admin, applications, *, */*, allow
    p, role:org-admin, clusters, get, *, allow
    g, example:ops, role:org-admin
  scopes: '[groups, email]'
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-notifications-cm
data:
  template.app-synced: |
    message: Application {{.app.metadata.name}} has been synced.
  trigger.on-synced: |
    - when: app.status.operationState.phase in ['Succeeded']
      send: [app-synced]
---
apiVersion: v1
kind: Secret
metadata:
  name: argocd-secret
  labels: {app.kubernetes.io/name: argocd-secret, app.kubernetes.io/part-of: argocd}
type: Opaque
stringData:
  admin.password: '%[5]s'
  admin.passwordMtime: '2024-01-01T00:00:00Z'
  server.secretkey: super-secret
  dex.github.clientSecret: super-secret
  webhook.github.secret: super-secret
---
apiVersion: v1
kind: Secret
metadata:
  name: private-repo
  labels: {argocd.argoproj.io/secret-type: repository}
stringData:
  url: https://git.example.com/org/private.git
  username: bot
  password: %[4]s
---
apiVersion: v1
kind: Secret
metadata:
  name: prod
  labels: {argocd.argoproj.io/secret-type: cluster}
stringData:
  name: prod
  server: https://prod.example.com:6443
  config: '{"bearerToken": "super-secret", "tlsClientConfig": {"insecure": false}}'
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: argocd-application-controller
  labels: {app.kubernetes.io/name: argocd-application-controller}
spec:
  replicas: 1
  serviceName: argocd-application-controller
  selector:
    matchLabels: {app.kubernetes.io/name: argocd-application-controller}
  template:
    metadata:
      labels: {app.kubernetes.io/name: argocd-application-controller}
    spec:
      containers:
      - name: argocd-application-controller
        image: quay.io/argoproj/argocd:v3.1.16
`
