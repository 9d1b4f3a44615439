//go:build integration

package resolvers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/audit"
	"github.com/graphcd/graphcd/internal/testenv/gitserver"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// setManifest is an ApplicationSet of ns whose list generator makes one
// Application per env, in project (verbatim: it may be templated).
func setManifest(ns, name, project string, envs ...string) string {
	elements := make([]string, len(envs))
	for i, e := range envs {
		elements[i] = fmt.Sprintf("{env: %s}", e)
	}
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: %s, namespace: %s}
spec:
  generators:
  - list: {elements: [%s]}
  template:
    metadata: {name: '%s-{{env}}'}
    spec:
      project: '%s'
      source: {repoURL: https://git.example.com/apps.git, path: 'apps/{{env}}', targetRevision: main}
      destination: {server: https://kubernetes.default.svc, namespace: 'app-{{env}}'}
`, name, ns, strings.Join(elements, ", "), name, project)
}

const (
	createSet = `mutation($m: String!, $upsert: Boolean!) { createApplicationSet(input: {manifest: $m, upsert: $upsert}) { id name namespace project } }`
	getSet    = `query($n: String!, $ns: String) { applicationSet(name: $n, namespace: $ns) {
  name project uid can(action: "delete")
  spec { goTemplate generators template { name spec { project destination { namespace } source { path } } } syncPolicy { applicationsSync } }
  status { resourcesCount conditions { type status reason message } resources { name status health { status } }
    generated { name generator params action message } }
  applications { totalCount nodes { name } } } }`
	listSets  = `query($ns: [String!], $p: [String!]) { applicationSets(filter: {namespaces: $ns, projects: $p}) { totalCount nodes { name project } } }`
	deleteSet = `mutation($n: String!, $ns: String) { deleteApplicationSet(name: $n, namespace: $ns) }`
	updateSet = `mutation($n: String!, $ns: String, $s: String!) { updateApplicationSet(input: {name: $n, namespace: $ns, spec: $s}) { name project } }`
	dryRun    = `query($m: String!) { dryRunApplicationSet(input: {manifest: $m}) { totalCount failedCount
  elements { generator params error application { name namespace project labels { key value } spec { destination { server name namespace } source { repoURL path } } } } } }`
)

// setNames lists the names of the ApplicationSets of ns token sees.
func setNames(t *testing.T, api, token, ns string) []string {
	t.Helper()
	raw, errs := ask(t, api, token, listSets, map[string]any{"ns": []string{ns}})
	if len(errs) > 0 {
		t.Fatalf("applicationSets as %s: %+v", token, errs)
	}
	var got struct {
		ApplicationSets struct {
			TotalCount int
			Nodes      []struct{ Name, Project string }
		}
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, n := range got.ApplicationSets.Nodes {
		names = append(names, n.Name)
	}
	if got.ApplicationSets.TotalCount != len(names) {
		t.Errorf("totalCount %d for %v", got.ApplicationSets.TotalCount, names)
	}
	return names
}

// createProjects creates open AppProjects (any source, any destination
// namespace matching dest) in ns.
func createProjects(t *testing.T, ns, dest string, names ...string) {
	t.Helper()
	for _, name := range names {
		p := &v1alpha1.AppProject{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.AppProjectSpec{
				SourceRepos:  []string{"*"},
				Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: dest}},
			},
		}
		if err := kube.Create(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
}

// ApplicationSets through the API with Argo CD's RBAC: a user of project
// A creates, reads, updates and deletes the sets of A and nothing else;
// a set whose project is templated needs rights on every project; lists
// hide what the caller may not get; each write is in the audit trail.
func TestApplicationSetCRUDWithRBAC(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	projA, projB := "team-a-"+ns, "team-b-"+ns
	createProjects(t, ns, "*", projA, projB)
	setPolicy(t, ns, fmt.Sprintf(`
p, role:team-a, applicationsets, get, %[1]s/*, allow
p, role:team-a, applicationsets, create, %[1]s/*, allow
p, role:team-a, applicationsets, update, %[1]s/*, allow
p, role:team-a, applicationsets, delete, %[1]s/*, allow
p, role:team-a, applications, get, %[1]s/*, allow
g, alice, role:team-a
g, boss, role:admin
`, projA))
	log := &audit.Log{Store: audit.NewMemory(100)}
	api := auditAPI(t, ns, tokenTable{
		"alice-token":  {Subject: "alice"},
		"boss-token":   {Subject: "boss"},
		"nobody-token": {Subject: "nobody"},
	}, log, nil)
	create := func(token, manifest string, upsert bool) (json.RawMessage, []gqlError) {
		t.Helper()
		return ask(t, api, token, createSet, map[string]any{"m": manifest, "upsert": upsert})
	}

	if raw, errs := create("alice-token", setManifest(ns, "web", projA, "dev", "prod"), false); len(errs) > 0 ||
		!strings.Contains(string(raw), `"project":"`+projA+`"`) {
		t.Fatalf("alice creates a set of her project: %s %+v", raw, errs)
	}
	if _, errs := create("alice-token", setManifest(ns, "web", projA, "dev"), false); codeOf(errs) != "CONFLICT" {
		t.Errorf("creating web twice: %+v, want CONFLICT", errs)
	}
	if _, errs := create("alice-token", setManifest(ns, "web", projA, "dev", "qa", "prod"), true); len(errs) > 0 {
		t.Errorf("alice's upsert of web: %+v", errs)
	}
	if _, errs := create("alice-token", setManifest(ns, "theirs", projB, "dev"), false); codeOf(errs) != "FORBIDDEN" {
		t.Errorf("alice creates a set of project B: %+v, want FORBIDDEN", errs)
	}
	_, errs := create("alice-token", setManifest(ns, "any", "{{env}}", "dev"), false)
	if codeOf(errs) != "FORBIDDEN" || !strings.Contains(errs[0].Message, "templated") {
		t.Errorf("alice creates a set with a templated project: %+v, want FORBIDDEN naming the templated project", errs)
	}
	// A generator's own template may name another project: it counts.
	sneaky := strings.Replace(setManifest(ns, "sneaky", projA, "dev"), "- list: {elements: [{env: dev}]}",
		fmt.Sprintf("- list: {elements: [{env: dev}], template: {metadata: {}, spec: {project: %s, destination: {}}}}", projB), 1)
	if _, errs := create("alice-token", sneaky, false); codeOf(errs) != "FORBIDDEN" {
		t.Errorf("alice creates a set whose generator's template names project B: %+v, want FORBIDDEN", errs)
	}
	if _, errs := create("alice-token", setManifest(ns, "ghost", "no-such-project-"+ns, "dev"), false); codeOf(errs) != "FORBIDDEN" {
		// alice has no right on a project that does not exist either.
		t.Errorf("alice creates a set of a missing project: %+v, want FORBIDDEN", errs)
	}
	if _, errs := create("boss-token", setManifest(ns, "ghost", "no-such-project-"+ns, "dev"), false); codeOf(errs) != "BAD_USER_INPUT" ||
		!strings.Contains(errs[0].Message, "does not exist") {
		t.Errorf("an admin creates a set of a missing project: %+v, want BAD_USER_INPUT", errs)
	}
	if _, errs := create("boss-token", setManifest(ns, "theirs", projB, "dev"), false); len(errs) > 0 {
		t.Errorf("an admin creates a set of project B: %+v", errs)
	}
	if _, errs := create("boss-token", setManifest(ns, "any", "{{env}}", "dev"), false); len(errs) > 0 {
		t.Errorf("an admin creates a set with a templated project: %+v", errs)
	}

	// Lists and reads show only what the caller may get.
	for token, want := range map[string][]string{
		"alice-token": {"web"}, "boss-token": {"any", "theirs", "web"}, "nobody-token": {},
	} {
		if got := setNames(t, api, token, ns); !slices.Equal(got, want) {
			t.Errorf("%s lists %v, want %v", token, got, want)
		}
	}
	raw, errs := ask(t, api, "alice-token", getSet, map[string]any{"n": "theirs", "ns": ns})
	if len(errs) > 0 || string(raw) != `{"applicationSet":null}` {
		t.Errorf("alice reads project B's set: %s %+v, want null", raw, errs)
	}
	raw, errs = ask(t, api, "alice-token", listSets, map[string]any{"ns": []string{ns}, "p": []string{projB}})
	if len(errs) > 0 || !strings.Contains(string(raw), `"totalCount":0`) {
		t.Errorf("alice filters by project B: %s %+v", raw, errs)
	}

	// Updates: within her project, yes; moving the set to B, no.
	spec := func(project string, envs ...string) string {
		m := setManifest(ns, "web", project, envs...)
		return m[strings.Index(m, "spec:")+len("spec:"):]
	}
	if raw, errs := ask(t, api, "alice-token", updateSet, map[string]any{"n": "web", "ns": ns, "s": spec(projA, "dev")}); len(errs) > 0 {
		t.Errorf("alice updates web: %s %+v", raw, errs)
	}
	if _, errs := ask(t, api, "alice-token", updateSet, map[string]any{"n": "web", "ns": ns, "s": spec(projB, "dev")}); codeOf(errs) != "FORBIDDEN" {
		t.Errorf("alice moves web to project B: %+v, want FORBIDDEN", errs)
	}
	if _, errs := ask(t, api, "alice-token", updateSet, map[string]any{"n": "theirs", "ns": ns, "s": spec(projA, "dev")}); codeOf(errs) != "NOT_FOUND" {
		t.Errorf("alice updates project B's set: %+v, want NOT_FOUND", errs)
	}

	// Deletes: a set she may not see is not found, as a missing one.
	_, hidden := ask(t, api, "alice-token", deleteSet, map[string]any{"n": "theirs", "ns": ns})
	_, missing := ask(t, api, "alice-token", deleteSet, map[string]any{"n": "no-such-set", "ns": ns})
	if codeOf(hidden) != "NOT_FOUND" || codeOf(missing) != "NOT_FOUND" ||
		strings.ReplaceAll(hidden[0].Message, "theirs", "X") != strings.ReplaceAll(missing[0].Message, "no-such-set", "X") {
		t.Errorf("deleting a hidden set %+v and a missing one %+v differ", hidden, missing)
	}
	if _, errs := ask(t, api, "alice-token", deleteSet, map[string]any{"n": "web", "ns": ns}); len(errs) > 0 {
		t.Errorf("alice deletes web: %+v", errs)
	}
	if got := setNames(t, api, "boss-token", ns); !slices.Equal(got, []string{"any", "theirs"}) {
		t.Errorf("after the delete, boss lists %v", got)
	}

	// The audit trail names each write's set and project, and the refusals.
	var trail []string
	for _, e := range auditLogOf(t, api, "boss-token", map[string]any{"namespace": ns}) {
		trail = append(trail, fmt.Sprintf("%s %s %s %s %s", e.User, e.Mutation, e.Object.Kind, e.Object.Name, e.Outcome))
	}
	for _, want := range []string{
		"alice createApplicationSet ApplicationSet web SUCCESS",
		"alice createApplicationSet applicationsets theirs FAILURE",
		"alice updateApplicationSet ApplicationSet web SUCCESS",
		"alice deleteApplicationSet ApplicationSet web SUCCESS",
		"boss createApplicationSet ApplicationSet any SUCCESS",
	} {
		if !slices.Contains(trail, want) {
			t.Errorf("audit trail lacks %q:\n%s", want, strings.Join(trail, "\n"))
		}
	}
}

// An ApplicationSet shows its spec, the status its controller writes and
// the Applications it controls (written here as the controller would);
// the subscription follows its changes.
func TestApplicationSetStatusAndApplications(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	var created struct{ CreateApplicationSet struct{ ID, Name string } }
	data(t, createSet, map[string]any{"m": setManifest(ns, "fleet", "default", "dev", "prod"), "upsert": false}, &created)
	set := &v1alpha1.ApplicationSet{}
	if err := kube.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "fleet"}, set); err != nil {
		t.Fatal(err)
	}

	// The subscription starts with the set as it is.
	ws := dialWS(t, apiURL, 0)
	ws.subscribe("s", `subscription($ns: String) { applicationSet(name: "fleet", namespace: $ns) { name status { resourcesCount } } }`, map[string]any{"ns": ns})
	type setResult struct {
		ApplicationSet *struct {
			Name   string
			Status struct{ ResourcesCount int }
		}
	}
	var first setResult
	ws.next("s", &first)
	if first.ApplicationSet == nil || first.ApplicationSet.Status.ResourcesCount != 0 {
		t.Fatalf("first = %+v", first.ApplicationSet)
	}

	// What the controller writes: an owned Application, one that is not
	// the set's, and the status.
	yes := true
	owned := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fleet-dev",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ApplicationSet", Name: "fleet", UID: set.UID, Controller: &yes}}},
		Spec: v1alpha1.ApplicationSpec{Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "app-dev"}}}
	if err := kube.Create(t.Context(), owned); err != nil {
		t.Fatal(err)
	}
	createApps(t, ns, appSpec{name: "fleet-stranger"})
	set.Status = v1alpha1.ApplicationSetStatus{
		Conditions: []v1alpha1.ApplicationSetCondition{{Type: v1alpha1.ApplicationSetConditionErrorOccurred, Status: metav1.ConditionTrue,
			Reason: "ApplicationGenerationFromParamsError", Message: "1 of 2 elements failed"}},
		Resources:      []v1alpha1.ApplicationSetResourceStatus{{Group: v1alpha1.GroupName, Version: "v1alpha1", Kind: "Application", Namespace: ns, Name: "fleet-dev"}},
		ResourcesCount: 1,
		Generated: []v1alpha1.ApplicationSetGeneratedApp{
			{Generator: 0, Params: `{"env":"prod"}`, Action: v1alpha1.ApplicationSetFailed, Message: "an Application of this name exists and is not this ApplicationSet's"},
			{Name: "fleet-dev", Generator: 0, Params: `{"env":"dev"}`, Action: v1alpha1.ApplicationSetCreated, Message: "generated"},
		},
	}
	if err := kube.Status().Update(t.Context(), set); err != nil {
		t.Fatal(err)
	}
	var next setResult
	for next.ApplicationSet == nil || next.ApplicationSet.Status.ResourcesCount != 1 {
		ws.next("s", &next)
	}

	type gotSet struct {
		ApplicationSet *struct {
			Name, Project, UID string
			Can                bool
			Spec               struct {
				Generators string
				Template   struct {
					Name string
					Spec struct {
						Project     string
						Destination struct{ Namespace string }
						Source      struct{ Path string }
					}
				}
				SyncPolicy *struct{ ApplicationsSync string }
			}
			Status struct {
				ResourcesCount int
				Conditions     []struct{ Type, Status, Reason, Message string }
				Resources      []struct {
					Name, Status string
					Health       *struct{ Status string }
				}
				Generated []struct {
					Name, Params, Action, Message string
					Generator                     int
				}
			}
			Applications struct {
				TotalCount int
				Nodes      []struct{ Name string }
			}
		}
	}
	var got gotSet
	eventually(t, "the owned Application in the index", func() error {
		data(t, getSet, map[string]any{"n": "fleet", "ns": ns}, &got)
		if got.ApplicationSet == nil || got.ApplicationSet.Applications.TotalCount != 1 {
			return fmt.Errorf("%+v", got.ApplicationSet)
		}
		return nil
	})
	s := got.ApplicationSet
	if s.UID != string(set.UID) || s.Project != "default" || !s.Can || s.Spec.Template.Name != "fleet-{{env}}" ||
		s.Spec.Template.Spec.Source.Path != "apps/{{env}}" || s.Spec.SyncPolicy != nil {
		t.Errorf("set = %+v", s)
	}
	var gens []map[string]any
	if err := json.Unmarshal([]byte(s.Spec.Generators), &gens); err != nil || len(gens) != 1 || gens[0]["list"] == nil {
		t.Errorf("generators %s (%v), want the list generator as JSON", s.Spec.Generators, err)
	}
	if len(s.Status.Conditions) != 1 || s.Status.Conditions[0].Type != "ErrorOccurred" || s.Status.Conditions[0].Status != "True" {
		t.Errorf("conditions = %+v", s.Status.Conditions)
	}
	if len(s.Status.Resources) != 1 || s.Status.Resources[0].Status != "Unknown" || s.Status.Resources[0].Health != nil {
		t.Errorf("resources = %+v, want fleet-dev, Unknown, no health", s.Status.Resources)
	}
	if g := s.Status.Generated; len(g) != 2 || g[0].Action != "Failed" || g[0].Params != `{"env":"prod"}` || g[0].Name != "" || g[1].Action != "Created" {
		t.Errorf("generated = %+v", g)
	}
	if n := s.Applications.Nodes; len(n) != 1 || n[0].Name != "fleet-dev" {
		t.Errorf("applications = %+v, want only the owned fleet-dev", n)
	}

	// The node query finds the set by its ID.
	raw, errs := ask(t, apiURL, "", `query($id: ID!) { node(id: $id) { ... on ApplicationSet { name } } }`, map[string]any{"id": created.CreateApplicationSet.ID})
	if len(errs) > 0 || string(raw) != `{"node":{"name":"fleet"}}` {
		t.Errorf("node(%s) = %s %+v", created.CreateApplicationSet.ID, raw, errs)
	}

	// Deleted: the subscription says null.
	var deleted struct{ DeleteApplicationSet string }
	data(t, deleteSet, map[string]any{"n": "fleet", "ns": ns}, &deleted)
	for next.ApplicationSet != nil {
		ws.next("s", &next)
	}
}

// A RollingSync's progress as the controller writes it in
// status.applicationStatus reads back field by field, in its order, and a
// set without one answers an empty list.
func TestApplicationSetRollingSyncStatus(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	var created struct{ CreateApplicationSet struct{ Name string } }
	data(t, createSet, map[string]any{"m": setManifest(ns, "waves", "default", "dev", "prod"), "upsert": false}, &created)
	const progress = `query($ns: String) { applicationSet(name: "waves", namespace: $ns) {
  status { applicationStatus { application status message step targetRevisions lastTransitionTime } } } }`
	type appStatus struct {
		Application, Status, Message, Step string
		TargetRevisions                    []string
		LastTransitionTime                 *string
	}
	var got struct {
		ApplicationSet struct {
			Status struct{ ApplicationStatus []appStatus }
		}
	}
	data(t, progress, map[string]any{"ns": ns}, &got)
	if diff := cmp.Diff(got.ApplicationSet.Status.ApplicationStatus, []appStatus{}); diff != "" {
		t.Errorf("applicationStatus before a rollout (-got +want):\n%s", diff)
	}

	set := &v1alpha1.ApplicationSet{}
	if err := kube.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "waves"}, set); err != nil {
		t.Fatal(err)
	}
	at := metav1.NewTime(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	set.Status.ApplicationStatus = []v1alpha1.ApplicationSetApplicationStatus{
		{Application: "waves-dev", Status: "Healthy", Step: "1", Message: "Application resource became Healthy, updating status from Progressing to Healthy.",
			LastTransitionTime: &at, TargetRevisions: []string{"abc123"}},
		{Application: "waves-prod", Status: "Waiting", Step: "2", Message: "Application is out of date with the current AppSet generation, setting status to Waiting."},
	}
	if err := kube.Status().Update(t.Context(), set); err != nil {
		t.Fatal(err)
	}
	stamp := "2026-12-01T10:00:00Z"
	want := []appStatus{
		{Application: "waves-dev", Status: "Healthy", Step: "1", Message: set.Status.ApplicationStatus[0].Message,
			TargetRevisions: []string{"abc123"}, LastTransitionTime: &stamp},
		{Application: "waves-prod", Status: "Waiting", Step: "2", Message: set.Status.ApplicationStatus[1].Message, TargetRevisions: []string{}},
	}
	eventually(t, "the rollout's progress through the API", func() error {
		data(t, progress, map[string]any{"ns": ns}, &got)
		if diff := cmp.Diff(got.ApplicationSet.Status.ApplicationStatus, want); diff != "" {
			return fmt.Errorf("applicationStatus (-got +want):\n%s", diff)
		}
		return nil
	})
}

// dryRunApplicationSet generates what the controller would, elements
// that fail included (with their parameters and why), from the clusters
// the caller may see, and writes nothing.
func TestApplicationSetDryRun(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	proj := "preview-" + ns
	createProjects(t, ns, "app-*", proj)
	setPolicy(t, ns, fmt.Sprintf(`
p, role:team, applicationsets, create, %[1]s/*, allow
p, role:team, clusters, get, *, allow
g, alice, role:team
g, bob, role:team-without-clusters
p, role:team-without-clusters, applicationsets, create, %[1]s/*, allow
`, proj))
	api := authAPI(t, ns, tokenTable{"alice-token": {Subject: "alice"}, "bob-token": {Subject: "bob"}}, nil)

	// A cluster only this test's selector picks.
	server := "https://preview-" + ns + ".example.com"
	var added struct{ AddCluster struct{ Server string } }
	data(t, `mutation($s: String!, $l: String!) { addCluster(input: {name: $l, server: $s, bearerToken: "tok", labels: [{key: "preview", value: $l}]}) { server } }`,
		map[string]any{"s": server, "l": ns}, &added)
	eventually(t, "the cluster in the registry", func() error {
		var got struct {
			Clusters struct{ Nodes []struct{ Server string } }
		}
		data(t, `{ clusters(first: 500) { nodes { server } } }`, nil, &got)
		for _, c := range got.Clusters.Nodes {
			if c.Server == server {
				return nil
			}
		}
		return errNotYet
	})

	// List elements carry what the clusters generator gives (name,
	// server, values), so that one template serves both.
	manifest := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: preview, namespace: %[1]s}
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - list:
      elements:
      - {name: dev, server: https://kubernetes.default.svc, values: {ns: app-dev}}
      - {name: prod, server: https://kubernetes.default.svc, values: {ns: app-prod}}
      - {server: https://kubernetes.default.svc, values: {ns: app-broken}}
      - {name: wrong, server: https://kubernetes.default.svc, values: {ns: kube-system}}
  - clusters:
      selector: {matchLabels: {preview: %[1]s}}
      values: {ns: app-remote}
  template:
    metadata:
      name: 'preview-{{ .name }}'
      labels: {env: '{{ .name }}'}
    spec:
      project: %[2]s
      source: {repoURL: https://git.example.com/apps.git, path: 'apps/{{ .name }}'}
      destination: {server: '{{ .server }}', namespace: '{{ .values.ns }}'}
`, ns, proj)
	type preview struct {
		DryRunApplicationSet struct {
			TotalCount, FailedCount int
			Elements                []struct {
				Generator   int
				Params      string
				Error       *string
				Application *struct {
					Name, Namespace, Project string
					Labels                   []struct{ Key, Value string }
					Spec                     struct {
						Destination struct{ Server, Name, Namespace string }
						Source      struct{ RepoURL, Path string }
					}
				}
			}
		}
	}
	raw, errs := ask(t, api, "alice-token", dryRun, map[string]any{"m": manifest})
	if len(errs) > 0 {
		t.Fatalf("dry run: %+v", errs)
	}
	var got preview
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	p := got.DryRunApplicationSet
	if p.TotalCount != 5 || p.FailedCount != 2 || len(p.Elements) != 5 {
		t.Fatalf("preview: %d elements, %d failed: %s", p.TotalCount, p.FailedCount, raw)
	}
	type summary struct {
		generator                        int
		name, namespace, dest, path, err string
	}
	var sums []summary
	for _, e := range p.Elements {
		s := summary{generator: e.Generator}
		if a := e.Application; a != nil {
			s.name, s.namespace, s.dest, s.path = a.Name, a.Namespace, a.Spec.Destination.Server+" "+a.Spec.Destination.Namespace, a.Spec.Source.Path
			if a.Project != proj {
				t.Errorf("element %s: project %q", a.Name, a.Project)
			}
		}
		if e.Error != nil {
			s.err = *e.Error
		}
		sums = append(sums, s)
	}
	want := []struct {
		summary
		params, errHas string
	}{
		{summary: summary{0, "preview-dev", ns, "https://kubernetes.default.svc app-dev", "apps/dev", ""},
			params: `{"name":"dev","server":"https://kubernetes.default.svc","values":{"ns":"app-dev"}}`},
		{summary: summary{0, "preview-prod", ns, "https://kubernetes.default.svc app-prod", "apps/prod", ""}},
		{summary: summary{generator: 0}, params: `{"server":"https://kubernetes.default.svc","values":{"ns":"app-broken"}}`,
			errHas: `map has no entry for key "name"`},
		{summary: summary{0, "preview-wrong", ns, "https://kubernetes.default.svc kube-system", "apps/wrong", ""},
			errHas: "do not match any of the allowed destinations in project '" + proj + "'"},
		{summary: summary{1, "preview-" + ns, ns, server + " app-remote", "apps/" + ns, ""}},
	}
	for i, w := range want {
		g := sums[i]
		errOK := (w.errHas == "" && g.err == "") || (w.errHas != "" && strings.Contains(g.err, w.errHas))
		g.err = ""
		if g != w.summary || !errOK || (w.params != "" && p.Elements[i].Params != w.params) {
			t.Errorf("element %d = %+v params %s error %q, want %+v params %s error with %q", i, g, p.Elements[i].Params, sums[i].err, w.summary, w.params, w.errHas)
		}
	}

	// Without the right to see clusters, the clusters generator finds none.
	raw, errs = ask(t, api, "bob-token", dryRun, map[string]any{"m": manifest})
	if len(errs) > 0 || !strings.Contains(string(raw), `"totalCount":4`) || strings.Contains(string(raw), server) {
		t.Errorf("bob's dry run, who may not see clusters: %s %+v", raw, errs)
	}
	// Nothing was written.
	var sets v1alpha1.ApplicationSetList
	var apps v1alpha1.ApplicationList
	if err := kube.List(t.Context(), &sets, client.InNamespace(ns)); err != nil || len(sets.Items) > 0 {
		t.Errorf("sets in %s after dry runs: %d (%v)", ns, len(sets.Items), err)
	}
	if err := kube.List(t.Context(), &apps, client.InNamespace(ns)); err != nil || len(apps.Items) > 0 {
		t.Errorf("apps in %s after dry runs: %d (%v)", ns, len(apps.Items), err)
	}

	// Another project's set is refused; a generator that cannot run at
	// all is the client's error, with the generator's reason.
	other := strings.ReplaceAll(manifest, "project: "+proj, "project: default")
	if _, errs := ask(t, api, "alice-token", dryRun, map[string]any{"m": other}); codeOf(errs) != "FORBIDDEN" {
		t.Errorf("dry run of another project's set: %+v, want FORBIDDEN", errs)
	}

	// A git generator reads its repository through the repository
	// server, as the controller's does.
	work, _ := reposervertest.CommitFiles(t, map[string]string{"apps/web/cm.yaml": "kind: ConfigMap", "apps/api/cm.yaml": "kind: ConfigMap"})
	repoURL := gitserver.Serve(t, work, gitserver.Options{})
	git := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: preview-git, namespace: %[1]s}
spec:
  generators: [{git: {repoURL: '%[3]s', revision: main, directories: [{path: 'apps/*'}]}}]
  template:
    metadata: {name: 'git-{{path.basename}}'}
    spec:
      project: %[2]s
      source: {repoURL: '%[3]s', path: '{{path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: app-git}
`, ns, proj, repoURL)
	raw, errs = ask(t, api, "alice-token", dryRun, map[string]any{"m": git})
	if len(errs) > 0 {
		t.Fatalf("dry run of a git generator: %+v", errs)
	}
	got = preview{}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range got.DryRunApplicationSet.Elements {
		if e.Application != nil && e.Error == nil {
			names = append(names, e.Application.Name+" "+e.Application.Spec.Source.Path)
		}
	}
	if strings.Join(names, ",") != "git-api apps/api,git-web apps/web" {
		t.Errorf("dry run of a git generator: %s", raw)
	}
}

// A preview asks a set's plugin as the controller would: the plugin its
// ConfigMap in graphcd's namespace names, with its token.
func TestApplicationSetDryRunPlugin(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	proj := "plugin-" + ns
	createProjects(t, ns, "app-*", proj)
	setPolicy(t, ns, fmt.Sprintf("p, role:team, applicationsets, create, %s/*, allow\ng, alice, role:team\n", proj))
	api := authAPI(t, ns, tokenTable{"alice-token": {Subject: "alice"}}, nil)
	plugin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/getparams.execute" || r.Header.Get("Authorization") != "Bearer plugin-token" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, `{"output": {"parameters": [{"env": "dev"}, {"env": "prod"}]}}`)
	}))
	t.Cleanup(plugin.Close)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "graphcd", Name: proj},
		Data: map[string]string{"baseUrl": plugin.URL, "token": "plugin-token"}}
	if err := kube.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Delete(context.Background(), cm) })
	manifest := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: plugged, namespace: %[1]s}
spec:
  generators:
  - plugin: {configMapRef: {name: %[2]s}}
  template:
    metadata: {name: 'plugged-{{env}}'}
    spec:
      project: %[2]s
      source: {repoURL: https://git.example.com/apps.git, path: 'apps/{{env}}'}
      destination: {server: https://kubernetes.default.svc, namespace: 'app-{{env}}'}
`, ns, proj)
	raw, errs := ask(t, api, "alice-token", dryRun, map[string]any{"m": manifest})
	if len(errs) > 0 {
		t.Fatalf("dry run: %+v", errs)
	}
	for _, want := range []string{`"name":"plugged-dev"`, `"name":"plugged-prod"`, `"failedCount":0`, `"totalCount":2`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("preview %s lacks %s", raw, want)
		}
	}
}
