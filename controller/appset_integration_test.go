//go:build integration

package controller_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/appset"
	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/wellknown"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// createAppSet creates the ApplicationSet manifest (YAML) in the
// controller's namespace; the test's end deletes it.
func createAppSet(t *testing.T, manifest string) *v1alpha1.ApplicationSet {
	t.Helper()
	var set v1alpha1.ApplicationSet
	if err := yaml.UnmarshalStrict([]byte(manifest), &set); err != nil {
		t.Fatal(err)
	}
	set.Namespace = appNamespace
	if err := apps.Create(t.Context(), &set); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() { // show why the set generated what it did
			var got v1alpha1.ApplicationSet
			if err := apps.Get(context.Background(), client.ObjectKeyFromObject(&set), &got); err == nil {
				for _, c := range got.Status.Conditions {
					t.Logf("ApplicationSet %s: %s=%s %s: %s", set.Name, c.Type, c.Status, c.Reason, c.Message)
				}
			}
		}
		_ = apps.Delete(context.Background(), &set)
	})
	return &set
}

// updateAppSet changes the set's spec, retrying on conflicts.
func updateAppSet(t *testing.T, name string, edit func(*v1alpha1.ApplicationSetSpec)) {
	t.Helper()
	update(t, &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: name}}, func(s *v1alpha1.ApplicationSet) { edit(&s.Spec) })
}

// update reads obj, edits and writes it, again while the write
// conflicts (the controllers write the same objects).
func update[T client.Object](t *testing.T, obj T, edit func(T)) {
	t.Helper()
	poll(t, "update "+obj.GetName(), func(ctx context.Context) (bool, error) {
		if err := apps.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		edit(obj)
		err := apps.Update(ctx, obj)
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// fleetCluster registers a cluster Secret named name for the server
// https://NAME.example.com (never contacted by these tests), labelled
// fleet=fleet unless fleet is "", and deletes it when the test ends.
func fleetCluster(t *testing.T, name, fleet string) *corev1.Secret {
	t.Helper()
	labels := map[string]string{wellknown.SecretTypeLabel: secretcodec.TypeCluster}
	if fleet != "" {
		labels["fleet"] = fleet
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: name, Labels: labels},
		StringData: map[string]string{"name": name, "server": "https://" + name + ".example.com", "config": `{"bearerToken":"unused"}`},
	}
	s, err := cluster.Client.CoreV1().Secrets(appNamespace).Create(t.Context(), s, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Secrets(appNamespace).Delete(context.Background(), s.Name, metav1.DeleteOptions{})
	})
	return s
}

func rawJSON(s string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(s)} }

// ownedApps lists the Applications the set controls, by name.
func ownedApps(ctx context.Context, set string) (map[string]*v1alpha1.Application, error) {
	var list v1alpha1.ApplicationList
	if err := apps.List(ctx, &list, client.InNamespace(appNamespace)); err != nil {
		return nil, err
	}
	out := map[string]*v1alpha1.Application{}
	for i := range list.Items {
		a := &list.Items[i]
		if ref := metav1.GetControllerOf(a); ref != nil && ref.Kind == "ApplicationSet" && ref.Name == set {
			out[a.Name] = a
		}
	}
	return out, nil
}

// waitOwned waits until the set controls exactly the Applications named.
func waitOwned(t *testing.T, set string, want ...string) map[string]*v1alpha1.Application {
	t.Helper()
	slices.Sort(want)
	var got map[string]*v1alpha1.Application
	poll(t, fmt.Sprintf("ApplicationSet %s to own %v", set, want), func(ctx context.Context) (bool, error) {
		var err error
		if got, err = ownedApps(ctx, set); err != nil {
			return false, err
		}
		var names []string
		for n, a := range got {
			if a.DeletionTimestamp == nil {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		return slices.Equal(names, want), nil
	})
	return got
}

// waitSetStatus waits until the set's status satisfies cond.
func waitSetStatus(t *testing.T, name, what string, cond func(*v1alpha1.ApplicationSetStatus) bool) *v1alpha1.ApplicationSet {
	t.Helper()
	var set v1alpha1.ApplicationSet
	poll(t, what, func(ctx context.Context) (bool, error) {
		if err := apps.Get(ctx, client.ObjectKey{Namespace: appNamespace, Name: name}, &set); err != nil {
			return false, err
		}
		return cond(&set.Status), nil
	})
	return &set
}

func setCondition(s *v1alpha1.ApplicationSetStatus, t v1alpha1.ApplicationSetConditionType) *v1alpha1.ApplicationSetCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

func generatedEntry(s *v1alpha1.ApplicationSetStatus, name string) *v1alpha1.ApplicationSetGeneratedApp {
	for i := range s.Generated {
		if s.Generated[i].Name == name {
			return &s.Generated[i]
		}
	}
	return nil
}

// A list set creates its Applications with the set as their controller;
// an element whose template fails is reported by its parameters and
// leaves the others untouched; a hand edit is put back; an element
// removed deletes its Application; another owner's Application of the
// same name and a project that refuses the destination are reported, not
// written; deleting the set deletes its Applications.
func TestApplicationSetList(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	p := uniqueName("als")
	foreign := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: p + "-taken", Namespace: appNamespace},
		Spec: v1alpha1.ApplicationSpec{Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/other.git", Path: "x"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "other"}},
	}
	if err := apps.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apps.Delete(context.Background(), foreign) })
	newProject(t, p+"-narrow", v1alpha1.AppProjectSpec{
		SourceRepos:  []string{"*"},
		Destinations: []v1alpha1.ApplicationDestination{{Server: "https://kubernetes.default.svc", Namespace: "allowed"}},
	})
	createAppSet(t, fmt.Sprintf(`
metadata: {name: %[1]s}
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - list:
      elements:
      - {name: a, env: prod}
      - {name: b, env: dev}
      - {name: c}
      - {name: taken, env: dev}
      - {name: refused, env: dev, project: %[1]s-narrow}
  template:
    metadata:
      name: '%[1]s-{{ .name }}'
      labels: {env: '{{ .env }}'}
    spec:
      project: '{{ dig "project" "default" . }}'
      source: {repoURL: https://git.example.com/apps.git, path: '{{ .name }}', targetRevision: main}
      destination: {server: https://kubernetes.default.svc, namespace: '{{ .env }}'}
`, p))
	owned := waitOwned(t, p, p+"-a", p+"-b")
	if a := owned[p+"-a"]; a.Labels["env"] != "prod" || a.Spec.Destination.Namespace != "prod" || a.Spec.Source.Path != "a" {
		t.Errorf("app a: labels %v, spec %+v", a.Labels, a.Spec)
	}
	set := waitSetStatus(t, p, "the failures reported", func(s *v1alpha1.ApplicationSetStatus) bool {
		return len(s.Generated) == 5 && s.ResourcesCount == 2
	})
	for _, g := range set.Status.Generated {
		t.Logf("%s %q generator %d params %s: %s", g.Action, g.Name, g.Generator, g.Params, g.Message)
	}
	for _, c := range set.Status.Conditions {
		t.Logf("condition %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	failedC := set.Status.Generated[slices.IndexFunc(set.Status.Generated, func(g v1alpha1.ApplicationSetGeneratedApp) bool {
		return strings.Contains(g.Params, `"name":"c"`)
	})]
	if failedC.Action != v1alpha1.ApplicationSetFailed || !strings.Contains(failedC.Message, `map has no entry for key "env"`) {
		t.Errorf("element c: %+v, want Failed with its template error", failedC)
	}
	if g := generatedEntry(&set.Status, p+"-taken"); g == nil || g.Action != v1alpha1.ApplicationSetFailed || !strings.Contains(g.Message, "not this ApplicationSet's") {
		t.Errorf("the taken name: %+v", g)
	}
	if g := generatedEntry(&set.Status, p+"-refused"); g == nil || g.Action != v1alpha1.ApplicationSetFailed || !strings.Contains(g.Message, "allowed destinations in project '"+p+"-narrow'") {
		t.Errorf("the refused project: %+v", g)
	}
	if g := generatedEntry(&set.Status, p+"-a"); g == nil || (g.Action != v1alpha1.ApplicationSetCreated && g.Action != v1alpha1.ApplicationSetUnchanged) || g.Params != `{"env":"prod","name":"a"}` {
		t.Errorf("app a's entry: %+v", g)
	}
	if c := setCondition(&set.Status, v1alpha1.ApplicationSetConditionErrorOccurred); c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "3 of 5 elements failed") {
		t.Errorf("ErrorOccurred: %+v", c)
	}
	var untouched v1alpha1.Application
	if err := apps.Get(ctx, client.ObjectKeyFromObject(foreign), &untouched); err != nil || untouched.Spec.Source.Path != "x" || len(untouched.OwnerReferences) != 0 {
		t.Errorf("the other owner's app: %v, %+v", err, untouched.OwnerReferences)
	}

	// A hand edit is put back.
	a := owned[p+"-a"]
	update(t, a, func(a *v1alpha1.Application) { a.Spec.Destination.Namespace = "edited" })
	poll(t, "the hand edit put back", func(ctx context.Context) (bool, error) {
		var got v1alpha1.Application
		err := apps.Get(ctx, client.ObjectKeyFromObject(a), &got)
		return err == nil && got.Spec.Destination.Namespace == "prod", err
	})

	// Fixing element c and dropping b, the others' failures gone too:
	// c is created, b deleted.
	updateAppSet(t, p, func(s *v1alpha1.ApplicationSetSpec) {
		s.Generators[0].List.Elements = s.Generators[0].List.Elements[:1]
		s.Generators[0].List.Elements = append(s.Generators[0].List.Elements, rawJSON(`{"name":"c","env":"qa"}`))
	})
	waitOwned(t, p, p+"-a", p+"-c")
	waitSetStatus(t, p, "the set up to date", func(s *v1alpha1.ApplicationSetStatus) bool {
		c := setCondition(s, v1alpha1.ApplicationSetConditionResourcesUpToDate)
		return c != nil && c.Status == metav1.ConditionTrue && s.ResourcesCount == 2
	})

	// Deleting the set deletes its Applications (owner references).
	if err := apps.Delete(ctx, &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: p}}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the generated apps deleted with the set", func(ctx context.Context) (bool, error) {
		var list v1alpha1.ApplicationList
		if err := apps.List(ctx, &list, client.InNamespace(appNamespace)); err != nil {
			return false, err
		}
		return !slices.ContainsFunc(list.Items, func(a v1alpha1.Application) bool { return a.Name == p+"-a" || a.Name == p+"-c" }), nil
	})
}

// applicationsSync create-only neither updates nor deletes; create-update
// updates but keeps; a removed element's app under create-delete goes;
// preserveResourcesOnDeletion strips the resources finalizer;
// ignoreApplicationDifferences keeps a field users change; preserved
// annotations stay.
func TestApplicationSetPolicies(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	p := uniqueName("asp")
	createAppSet(t, fmt.Sprintf(`
metadata: {name: %[1]s}
spec:
  generators:
  - list:
      elements: [{name: one}, {name: two}]
  syncPolicy: {applicationsSync: create-only, preserveResourcesOnDeletion: true}
  preservedFields: {annotations: [team.example.com/owner]}
  ignoreApplicationDifferences:
  - jsonPointers: [/spec/source/targetRevision]
  template:
    metadata:
      name: '%[1]s-{{name}}'
      finalizers: [resources-finalizer.argocd.argoproj.io]
      annotations: {generated: "1"}
    spec:
      project: default
      source: {repoURL: https://git.example.com/apps.git, path: '{{name}}', targetRevision: main}
      destination: {server: https://kubernetes.default.svc, namespace: '{{name}}'}
`, p))
	owned := waitOwned(t, p, p+"-one", p+"-two")
	if f := owned[p+"-one"].Finalizers; len(f) != 0 {
		t.Errorf("finalizers %v under preserveResourcesOnDeletion, want none", f)
	}
	one := owned[p+"-one"]
	update(t, one, func(a *v1alpha1.Application) {
		a.Annotations["team.example.com/owner"] = "alice"
		a.Spec.Source.TargetRevision = "v2"
	})

	// create-only: a template change and a removed element change nothing.
	updateAppSet(t, p, func(s *v1alpha1.ApplicationSetSpec) {
		s.Generators[0].List.Elements = s.Generators[0].List.Elements[:1]
		s.Template.Annotations["generated"] = "2"
	})
	set := waitSetStatus(t, p, "create-only reported", func(s *v1alpha1.ApplicationSetStatus) bool {
		g := generatedEntry(s, p+"-two")
		return g != nil && g.Action == v1alpha1.ApplicationSetKept
	})
	if g := generatedEntry(&set.Status, p+"-one"); g == nil || g.Action != v1alpha1.ApplicationSetSkipped || !strings.Contains(g.Message, "create-only") {
		t.Errorf("one under create-only: %+v", g)
	}
	waitOwned(t, p, p+"-one", p+"-two")

	// create-update: updated, the preserved annotation and the ignored
	// revision kept; two still kept.
	updateAppSet(t, p, func(s *v1alpha1.ApplicationSetSpec) {
		s.SyncPolicy.ApplicationsSync = new(v1alpha1.ApplicationsSyncCreateUpdate)
	})
	poll(t, "one updated under create-update", func(ctx context.Context) (bool, error) {
		var got v1alpha1.Application
		err := apps.Get(ctx, client.ObjectKeyFromObject(one), &got)
		return err == nil && got.Annotations["generated"] == "2", err
	})
	var got v1alpha1.Application
	if err := apps.Get(ctx, client.ObjectKeyFromObject(one), &got); err != nil {
		t.Fatal(err)
	}
	if got.Annotations["team.example.com/owner"] != "alice" || got.Spec.Source.TargetRevision != "v2" {
		t.Errorf("after the update: annotations %v, targetRevision %q; want the preserved annotation and the ignored revision", got.Annotations, got.Spec.Source.TargetRevision)
	}
	waitOwned(t, p, p+"-one", p+"-two")

	// create-delete: two goes.
	updateAppSet(t, p, func(s *v1alpha1.ApplicationSetSpec) {
		s.SyncPolicy.ApplicationsSync = new(v1alpha1.ApplicationsSyncCreateDelete)
	})
	waitOwned(t, p, p+"-one")
}

// A clusters generator makes one Application per selected cluster; a new
// cluster Secret adds one, and a Secret losing the label removes its
// Application.
func TestApplicationSetClusters(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	p := uniqueName("asc")
	fleetCluster(t, p+"-east", p)
	createAppSet(t, fmt.Sprintf(`
metadata: {name: %[1]s}
spec:
  generators:
  - clusters:
      selector: {matchLabels: {fleet: %[1]s}}
  template:
    metadata: {name: '%[1]s-{{name}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/apps.git, path: guestbook}
      destination: {server: '{{server}}', namespace: guestbook}
`, p))
	owned := waitOwned(t, p, p+"-"+p+"-east")
	if s := owned[p+"-"+p+"-east"].Spec.Destination.Server; s != "https://"+p+"-east.example.com" {
		t.Errorf("destination %q", s)
	}
	west := fleetCluster(t, p+"-west", p)
	waitOwned(t, p, p+"-"+p+"-east", p+"-"+p+"-west")

	delete(west.Labels, "fleet")
	if _, err := cluster.Client.CoreV1().Secrets(appNamespace).Update(ctx, west, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitOwned(t, p, p+"-"+p+"-east")
}

// A git directories set follows the commits of its repository when asked
// to refresh (as the push webhook asks): a new directory adds an
// Application, a removed one deletes its Application under the default
// policy and keeps it under create-only; a matrix of clusters × directories
// gives one Application per pair.
func TestApplicationSetGitDirectories(t *testing.T) {
	t.Parallel()
	p := uniqueName("asg")
	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		"apps/web/cm.yaml": "kind: ConfigMap", "apps/api/cm.yaml": "kind: ConfigMap", "docs/readme.md": "not an app",
	})
	repoURL := "file://" + dir
	manifest := func(name, policy string) string {
		return fmt.Sprintf(`
metadata: {name: %[1]s}
spec:
  generators:
  - git:
      repoURL: %[2]s
      revision: main
      directories: [{path: 'apps/*'}]
  syncPolicy: {applicationsSync: %[3]s}
  template:
    metadata: {name: '%[1]s-{{path.basename}}'}
    spec:
      project: default
      source: {repoURL: %[2]s, path: '{{path}}', targetRevision: main}
      destination: {server: https://kubernetes.default.svc, namespace: '{{path.basename}}'}
`, name, repoURL, policy)
	}
	createAppSet(t, manifest(p+"-sync", "sync"))
	createAppSet(t, manifest(p+"-keep", "create-only"))
	owned := waitOwned(t, p+"-sync", p+"-sync-api", p+"-sync-web")
	if src := owned[p+"-sync-web"].Spec.Source; src.Path != "apps/web" {
		t.Errorf("source %+v", src)
	}
	waitOwned(t, p+"-keep", p+"-keep-api", p+"-keep-web")

	// Matrix: the clusters of a fleet label × the directories.
	fleetCluster(t, p+"-east", p)
	fleetCluster(t, p+"-west", p)
	createAppSet(t, fmt.Sprintf(`
metadata: {name: %[1]s-mx}
spec:
  goTemplate: true
  generators:
  - matrix:
      generators:
      - clusters: {selector: {matchLabels: {fleet: %[1]s}}}
      - git: {repoURL: %[2]s, revision: main, directories: [{path: 'apps/*'}]}
  template:
    metadata: {name: '{{ .path.basename }}-{{ .name }}'}
    spec:
      project: default
      source: {repoURL: %[2]s, path: '{{ .path.path }}', targetRevision: main}
      destination: {server: '{{ .server }}', namespace: '{{ .path.basename }}'}
`, p, repoURL))
	waitOwned(t, p+"-mx", "api-"+p+"-east", "api-"+p+"-west", "web-"+p+"-east", "web-"+p+"-west")

	// A push adds docs/ under apps and removes api; the refresh
	// annotation (what the webhook sets) makes the sets read it.
	if err := os.RemoveAll(filepath.Join(dir, "apps", "api")); err != nil {
		t.Fatal(err)
	}
	reposervertest.CommitMore(t, dir, map[string]string{"apps/docs/cm.yaml": "kind: ConfigMap"})
	for _, name := range []string{p + "-sync", p + "-keep"} {
		refreshSet(t, name)
	}
	waitOwned(t, p+"-sync", p+"-sync-docs", p+"-sync-web")
	waitOwned(t, p+"-keep", p+"-keep-api", p+"-keep-docs", p+"-keep-web")
	set := waitSetStatus(t, p+"-keep", "the refresh annotation removed", func(*v1alpha1.ApplicationSetStatus) bool { return true })
	poll(t, "the refresh annotation removed", func(ctx context.Context) (bool, error) {
		err := apps.Get(ctx, client.ObjectKeyFromObject(set), set)
		return err == nil && set.Annotations[appset.RefreshAnnotation] == "", err
	})
	if g := generatedEntry(&set.Status, p+"-keep-api"); g == nil || g.Action != v1alpha1.ApplicationSetKept {
		t.Errorf("api under create-only: %+v", g)
	}
}

// RollingSync syncs step 1, waits until it is Healthy, then syncs step 2:
// a step-1 app whose Deployment cannot become available holds step 2
// back; once a commit fixes it, step 1 is synced again, turns Healthy, and
// only then does step 2 sync.
func TestApplicationSetRollingSync(t *testing.T) {
	t.Parallel()
	p := uniqueName("asr")
	devNS, prodNS := cluster.Namespace(t), cluster.Namespace(t)
	blocked := `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {graphcd.io/no-such-node: "true"}
      containers: [{name: web, image: "nginx:1.27"}]
`
	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		"apps/dev/deploy.yaml": blocked,
		"apps/prod/cm.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: prod}\n",
	})
	createAppSet(t, fmt.Sprintf(`
metadata: {name: %[1]s}
spec:
  generators:
  - list:
      elements:
      - {env: dev, ns: %[2]s}
      - {env: prod, ns: %[3]s}
  strategy:
    type: RollingSync
    rollingSync:
      steps:
      - matchExpressions: [{key: env, operator: In, values: [dev]}]
      - matchExpressions: [{key: env, operator: In, values: [prod]}]
        maxUpdate: 1
  template:
    metadata:
      name: '%[1]s-{{env}}'
      labels: {env: '{{env}}'}
    spec:
      project: default
      source: {repoURL: 'file://%[4]s', path: 'apps/{{env}}', targetRevision: main}
      destination: {server: https://kubernetes.default.svc, namespace: '{{ns}}'}
      syncPolicy:
        automated: {prune: true}
`, p, devNS, prodNS, dir))
	dev, prod := p+"-dev", p+"-prod"
	owned := waitOwned(t, p, dev, prod)
	if sp := owned[dev].Spec.SyncPolicy; sp != nil && sp.Automated != nil {
		t.Errorf("generated with automated sync %+v under RollingSync", sp.Automated)
	}

	// Step 1 syncs but its Deployment never becomes available: step 2
	// waits, unsynced.
	set := waitSetStatus(t, p, "step 1 synced and Progressing, step 2 waiting", func(s *v1alpha1.ApplicationSetStatus) bool {
		return rolloutOf(s, dev) == "Progressing 1" && rolloutOf(s, prod) == "Waiting 2"
	})
	for _, a := range set.Status.ApplicationStatus {
		t.Logf("%s step %s %s: %s", a.Application, a.Step, a.Status, a.Message)
	}
	if c := setCondition(&set.Status, v1alpha1.ApplicationSetConditionRolloutProgressing); c == nil || c.Status != metav1.ConditionTrue || c.Message != "the rollout is at step 1" {
		t.Errorf("RolloutProgressing = %+v", c)
	}
	devApp := waitStatus(t, dev, "step 1 synced by the set", func(s *v1alpha1.ApplicationStatus) bool {
		return s.OperationState != nil && s.OperationState.Operation.InitiatedBy.Username == "applicationset-controller" && s.OperationState.Phase == v1alpha1.OperationSucceeded
	})
	var prodApp v1alpha1.Application
	if err := apps.Get(t.Context(), client.ObjectKey{Namespace: appNamespace, Name: prod}, &prodApp); err != nil {
		t.Fatal(err)
	}
	if prodApp.Operation != nil || prodApp.Status.OperationState != nil {
		t.Fatalf("step 2 synced while step 1 is %s: %+v", devApp.Status.Health.Status, prodApp.Status.OperationState)
	}

	// A commit lets the Deployment schedule: step 1 turns OutOfSync, is
	// synced again and turns Healthy; then step 2 syncs.
	reposervertest.CommitMore(t, dir, map[string]string{"apps/dev/deploy.yaml": strings.Replace(blocked, "      nodeSelector: {graphcd.io/no-such-node: \"true\"}\n", "", 1)})
	update(t, &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: dev}}, func(a *v1alpha1.Application) {
		metav1.SetMetaDataAnnotation(&a.ObjectMeta, v1alpha1.RefreshAnnotation, v1alpha1.RefreshNormal)
	})
	waitSetStatus(t, p, "the rollout complete", func(s *v1alpha1.ApplicationSetStatus) bool {
		c := setCondition(s, v1alpha1.ApplicationSetConditionRolloutProgressing)
		return rolloutOf(s, dev) == "Healthy 1" && rolloutOf(s, prod) == "Healthy 2" && c != nil && c.Status == metav1.ConditionFalse
	})
	devApp = waitStatus(t, dev, "step 1 synced", func(s *v1alpha1.ApplicationStatus) bool {
		return s.OperationState != nil && s.OperationState.FinishedAt != nil
	})
	prodSynced := waitStatus(t, prod, "step 2 synced", func(s *v1alpha1.ApplicationStatus) bool {
		return s.OperationState != nil && s.OperationState.FinishedAt != nil
	})
	devDone, prodStart := devApp.Status.OperationState.FinishedAt, prodSynced.Status.OperationState.StartedAt
	if prodStart.Before(devDone) {
		t.Errorf("step 2 started syncing at %v, before step 1's sync finished at %v", prodStart, devDone)
	}
	t.Logf("step 1 synced by %v; step 2 started at %v", devDone, prodStart)
}

// rolloutOf is an app's RollingSync progress as "Status step".
func rolloutOf(s *v1alpha1.ApplicationSetStatus, app string) string {
	for _, a := range s.ApplicationStatus {
		if a.Application == app {
			return a.Status + " " + a.Step
		}
	}
	return ""
}

// A clusterDecisionResource generator makes one Application per decision
// of a duck-typed resource's status that names a registered cluster, as
// the ConfigMap says where to look; a new decision adds one.
func TestApplicationSetClusterDecisionResource(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	p := uniqueName("asd")
	cs := apiextensionsclientset.NewForConfigOrDie(cluster.Config)
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "placementdecisions.test.graphcd.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "test.graphcd.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "placementdecisions", Singular: "placementdecision", Kind: "PlacementDecision", ListKind: "PlacementDecisionList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: new(true)}},
			}},
		},
	}
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cluster.Config)
	gvr := schema.GroupVersionResource{Group: "test.graphcd.io", Version: "v1", Resource: "placementdecisions"}
	decisions := func(names ...string) []any {
		var out []any
		for _, n := range names {
			out = append(out, map[string]any{"clusterName": n, "reason": "placed by " + p})
		}
		return out
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.graphcd.io/v1", "kind": "PlacementDecision",
		"metadata": map[string]any{"name": p, "namespace": appNamespace},
		"status":   map[string]any{"decisions": decisions(p+"-east", "not-registered")},
	}}
	poll(t, "the PlacementDecision created", func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(gvr).Namespace(appNamespace).Create(ctx, obj, metav1.CreateOptions{})
		return err == nil, nil // the CRD may not be served yet
	})
	t.Cleanup(func() {
		_ = dyn.Resource(gvr).Namespace(appNamespace).Delete(context.Background(), p, metav1.DeleteOptions{})
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: p},
		Data: map[string]string{"apiVersion": "test.graphcd.io/v1", "kind": "placementdecisions", "statusListKey": "decisions", "matchKey": "clusterName"}}
	if _, err := cluster.Client.CoreV1().ConfigMaps(appNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().ConfigMaps(appNamespace).Delete(context.Background(), p, metav1.DeleteOptions{})
	})
	fleetCluster(t, p+"-east", "")
	fleetCluster(t, p+"-west", "")
	createAppSet(t, fmt.Sprintf(`
metadata: {name: %[1]s}
spec:
  goTemplate: true
  generators:
  - clusterDecisionResource:
      configMapRef: %[1]s
      name: %[1]s
      values: {why: '{{ .reason }}'}
  template:
    metadata: {name: 'app-{{ .name }}', annotations: {why: '{{ .values.why }}'}}
    spec:
      project: default
      source: {repoURL: https://git.example.com/apps.git, path: guestbook}
      destination: {server: '{{ .server }}', namespace: guestbook}
`, p))
	owned := waitOwned(t, p, "app-"+p+"-east")
	if a := owned["app-"+p+"-east"]; a.Spec.Destination.Server != "https://"+p+"-east.example.com" || a.Annotations["why"] != "placed by "+p {
		t.Errorf("generated %+v with annotations %v", a.Spec.Destination, a.Annotations)
	}

	// A new decision, then a refresh: one more app.
	cur, err := dyn.Resource(gvr).Namespace(appNamespace).Get(ctx, p, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedSlice(cur.Object, decisions(p+"-east", p+"-west"), "status", "decisions")
	if _, err := dyn.Resource(gvr).Namespace(appNamespace).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	refreshSet(t, p)
	waitOwned(t, p, "app-"+p+"-east", "app-"+p+"-west")
}

// A git generator reads with credentials only for a set whose projects
// all permit the repository: a set of a project that may not deploy from
// it cannot read it through graphcd's repository Secret.
func TestApplicationSetGitCredentialsFollowProjects(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	startScopedController(t, ns)
	url := serveAuthGit(t, "git", "s3cret", map[string]string{"apps/web/cm.yaml": "kind: ConfigMap"})
	createSecret(t, ns, "repo", secretcodec.TypeRepository, map[string]string{"url": url, "username": "git", "password": "s3cret"})
	createProjects(t, ns, false, "open")
	narrow := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "narrow"}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos: []string{"https://elsewhere.example.com/*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
	}}
	if err := apps.Create(t.Context(), narrow); err != nil {
		t.Fatal(err)
	}
	for _, project := range []string{"open", "narrow"} {
		var set v1alpha1.ApplicationSet
		if err := yaml.UnmarshalStrict([]byte(fmt.Sprintf(`
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  generators: [{git: {repoURL: '%[3]s', revision: main, directories: [{path: 'apps/*'}]}}]
  template:
    metadata: {name: '%[1]s-{{path.basename}}'}
    spec:
      project: %[1]s
      source: {repoURL: 'https://elsewhere.example.com/apps.git', path: '{{path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: web}
`, project, ns, url)), &set); err != nil {
			t.Fatal(err)
		}
		if err := apps.Create(t.Context(), &set); err != nil {
			t.Fatal(err)
		}
	}
	var got v1alpha1.ApplicationSet
	poll(t, "the open project's set to generate and the narrow one's to fail", func(ctx context.Context) (bool, error) {
		var open, narrow v1alpha1.ApplicationSet
		if err := apps.Get(ctx, client.ObjectKey{Namespace: ns, Name: "open"}, &open); err != nil {
			return false, err
		}
		if err := apps.Get(ctx, client.ObjectKey{Namespace: ns, Name: "narrow"}, &narrow); err != nil {
			return false, err
		}
		got = narrow
		c := setCondition(&narrow.Status, v1alpha1.ApplicationSetConditionErrorOccurred)
		return open.Status.ResourcesCount == 1 && c != nil && c.Status == metav1.ConditionTrue, nil
	})
	c := setCondition(&got.Status, v1alpha1.ApplicationSetConditionErrorOccurred)
	t.Logf("narrow: %s", c.Message)
	if !strings.Contains(strings.ToLower(c.Message), "auth") || strings.Contains(c.Message, "s3cret") {
		t.Errorf("the narrow project's set: %q, want an authentication failure (and no password)", c.Message)
	}
}
