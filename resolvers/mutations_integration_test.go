//go:build integration

package resolvers_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// getApp reads an Application from the cluster (not through the API).
func getApp(t *testing.T, ns, name string) *v1alpha1.Application {
	t.Helper()
	app := &v1alpha1.Application{}
	if err := kube.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: name}, app); err != nil {
		t.Fatalf("get %s/%s: %v", ns, name, err)
	}
	return app
}

func manifest(ns, name, apiVersion, extra string) string {
	return fmt.Sprintf(`apiVersion: %s
kind: Application
metadata:
  name: %s
  namespace: %s
  labels: {team: web}
spec:
  project: default
  source: {repoURL: "https://git.example.com/apps.git", path: guestbook, targetRevision: main}
  destination: {server: "https://kubernetes.default.svc", namespace: guestbook}
%s`, apiVersion, name, ns, extra)
}

const createMutation = `mutation($m: String!, $upsert: Boolean!) {
  createApplication(input: {manifest: $m, upsert: $upsert}) { name namespace labels { key value } spec { source { path } } }
}`

func TestCreateApplication(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	var got struct {
		CreateApplication struct {
			Name, Namespace string
			Spec            struct{ Source struct{ Path string } }
		}
	}
	// A manifest exported from Argo CD is accepted as it is.
	data(t, createMutation, map[string]any{"m": manifest(ns, "guestbook", "argoproj.io/v1alpha1", ""), "upsert": false}, &got)
	if got.CreateApplication.Name != "guestbook" || got.CreateApplication.Namespace != ns || got.CreateApplication.Spec.Source.Path != "guestbook" {
		t.Errorf("created = %+v", got.CreateApplication)
	}
	if app := getApp(t, ns, "guestbook"); app.Labels["team"] != "web" {
		t.Errorf("labels in the cluster = %v", app.Labels)
	}

	// Again without upsert: a conflict, and nothing changes.
	other := strings.Replace(manifest(ns, "guestbook", "graphcd.io/v1alpha1", ""), "path: guestbook", "path: other", 1)
	if code := errorCode(t, createMutation, map[string]any{"m": other, "upsert": false}); code != "CONFLICT" {
		t.Errorf("create over an existing app: code %q, want CONFLICT", code)
	}
	if p := getApp(t, ns, "guestbook").Spec.Source.Path; p != "guestbook" {
		t.Errorf("path after the refused create = %q", p)
	}
	// With upsert the spec is replaced.
	data(t, createMutation, map[string]any{"m": other, "upsert": true}, &got)
	if p := getApp(t, ns, "guestbook").Spec.Source.Path; p != "other" {
		t.Errorf("path after upsert = %q, want other", p)
	}

	bad := []struct{ name, manifest string }{
		{"not YAML", "{{{"},
		{"unknown field", manifest(ns, "typo", "graphcd.io/v1alpha1", "  syncPolicee: {}\n")},
		{"wrong kind", strings.Replace(manifest(ns, "x", "graphcd.io/v1alpha1", ""), "kind: Application", "kind: AppProject", 1)},
		{"wrong group", manifest(ns, "x", "example.com/v1", "")},
		{"no name", strings.Replace(manifest(ns, "x", "graphcd.io/v1alpha1", ""), "name: x", "name: ''", 1)},
		{"wrong type", manifest(ns, "bad-limit", "graphcd.io/v1alpha1", "  revisionHistoryLimit: many\n")},
		{"rejected by the API server", manifest(ns, "Bad_Name", "graphcd.io/v1alpha1", "")},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if code := errorCode(t, createMutation, map[string]any{"m": tt.manifest, "upsert": true}); code != "BAD_USER_INPUT" {
				t.Errorf("code %q, want BAD_USER_INPUT", code)
			}
		})
	}
	var list v1alpha1.ApplicationList
	if err := kube.List(t.Context(), &list, client.InNamespace(ns)); err != nil || len(list.Items) != 1 {
		t.Errorf("apps in %s after bad input: %d (%v), want 1", ns, len(list.Items), err)
	}
}

func TestSyncTerminateRefresh(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	createApps(t, ns, appSpec{name: "web"})
	ref := map[string]any{"name": "web", "namespace": ns}

	const sync = `mutation($in: SyncApplicationInput!) { syncApplication(input: $in) { operation { sync { revision prune dryRun syncOptions resources { kind name } syncStrategy { apply { force } } } initiatedBy { username } retry { limit backoff { duration factor maxDuration } } } } }`
	in := map[string]any{
		"application": ref, "revision": "v2", "prune": true,
		"resources":   []map[string]any{{"kind": "ConfigMap", "name": "settings", "namespace": ns}},
		"syncOptions": []string{"ServerSideApply=true"}, "strategy": "APPLY", "force": true,
		"retry": map[string]any{"limit": 3, "backoffDuration": "5s", "backoffFactor": 2, "backoffMaxDuration": "1m"},
	}
	var got map[string]any
	data(t, sync, map[string]any{"in": in}, &got)
	op := getApp(t, ns, "web").Operation
	want := &v1alpha1.Operation{
		Sync: &v1alpha1.SyncOperation{
			Revision: "v2", Prune: true, SyncOptions: []string{"ServerSideApply=true"},
			Resources:    []v1alpha1.SyncOperationResource{{Kind: "ConfigMap", Name: "settings", Namespace: ns}},
			SyncStrategy: &v1alpha1.SyncStrategy{Apply: &v1alpha1.SyncStrategyApply{Force: true}},
		},
		InitiatedBy: v1alpha1.OperationInitiator{Username: "anonymous"},
		Retry:       v1alpha1.RetryStrategy{Limit: 3, Backoff: &v1alpha1.Backoff{Duration: "5s", Factor: ptr(int64(2)), MaxDuration: "1m"}},
	}
	if diff := cmp.Diff(op, want); diff != "" {
		t.Errorf("operation written (-got +want):\n%s", diff)
	}

	// A second sync while the first is requested: refused.
	if code := errorCode(t, sync, map[string]any{"in": map[string]any{"application": ref}}); code != "CONFLICT" {
		t.Errorf("second sync: code %q, want CONFLICT", code)
	}
	// Terminate withdraws the request not started yet...
	const terminate = `mutation($ref: ApplicationRef!) { terminateOperation(input: $ref) { operation { sync { revision } } } }`
	data(t, terminate, map[string]any{"ref": ref}, &got)
	if op := getApp(t, ns, "web").Operation; op != nil {
		t.Errorf("operation after terminate = %+v, want none", op)
	}
	// ...and with nothing to stop it is a conflict.
	if code := errorCode(t, terminate, map[string]any{"ref": ref}); code != "CONFLICT" {
		t.Errorf("terminate without an operation: code %q, want CONFLICT", code)
	}
	// A running operation is asked to terminate through its phase.
	app := getApp(t, ns, "web")
	app.Status.OperationState = &v1alpha1.OperationState{Phase: v1alpha1.OperationRunning, StartedAt: metav1.Now(),
		Operation: v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}}
	if err := kube.Status().Update(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	data(t, terminate, map[string]any{"ref": ref}, &got)
	if st := getApp(t, ns, "web").Status.OperationState; st.Phase != v1alpha1.OperationTerminating {
		t.Errorf("phase after terminate = %s, want Terminating", st.Phase)
	}

	data(t, `mutation($ref: ApplicationRef!) { refreshApplication(input: {application: $ref, hard: true}) { name } }`, map[string]any{"ref": ref}, &got)
	if v := getApp(t, ns, "web").Annotations["argocd.argoproj.io/refresh"]; v != "hard" {
		t.Errorf("refresh annotation = %q, want hard", v)
	}

	missing := map[string]any{"name": "nope", "namespace": ns}
	if code := errorCode(t, sync, map[string]any{"in": map[string]any{"application": missing}}); code != "NOT_FOUND" {
		t.Errorf("sync of a missing app: code %q, want NOT_FOUND", code)
	}
}

func TestRollbackAndUpdateSpec(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	createApps(t, ns, appSpec{name: "auto", auto: true, sync: v1alpha1.SyncStatusCodeSynced, health: v1alpha1.HealthStatusHealthy})
	ref := map[string]any{"name": "auto", "namespace": ns}
	const rollback = `mutation($ref: ApplicationRef!, $id: Int!) { rollbackApplication(input: {application: $ref, id: $id, prune: true}) { operation { sync { revision prune } } } }`
	if code := errorCode(t, rollback, map[string]any{"ref": ref, "id": 1}); code != "CONFLICT" {
		t.Errorf("rollback with auto-sync: code %q, want CONFLICT", code)
	}

	// Switch auto-sync off by replacing the spec.
	spec := `{"project": "default", "source": {"repoURL": "https://git.example.com/apps.git", "path": "auto", "targetRevision": "main"},
	  "destination": {"server": "https://kubernetes.default.svc", "namespace": "auto"}}`
	var got map[string]any
	data(t, `mutation($ref: ApplicationRef!, $spec: String!) { updateApplicationSpec(input: {application: $ref, spec: $spec}) { name } }`,
		map[string]any{"ref": ref, "spec": spec}, &got)
	if p := getApp(t, ns, "auto").Spec.SyncPolicy; p != nil {
		t.Fatalf("sync policy after update = %+v, want none", p)
	}
	if code := errorCode(t, `mutation($ref: ApplicationRef!) { updateApplicationSpec(input: {application: $ref, spec: "sourc: {}"}) { name } }`,
		map[string]any{"ref": ref}); code != "BAD_USER_INPUT" {
		t.Errorf("spec with an unknown field: code %q, want BAD_USER_INPUT", code)
	}

	if code := errorCode(t, rollback, map[string]any{"ref": ref, "id": 42}); code != "BAD_USER_INPUT" {
		t.Errorf("rollback to a missing id: code %q, want BAD_USER_INPUT", code)
	}
	data(t, rollback, map[string]any{"ref": ref, "id": 1}, &got)
	op := getApp(t, ns, "auto").Operation
	if op == nil || op.Sync.Revision != "0123456789abcdef0123456789abcdef01234567" || !op.Sync.Prune || op.Sync.Source == nil {
		t.Errorf("rollback operation = %+v", op)
	}
}

func TestDeleteApplication(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	createApps(t, ns, appSpec{name: "cascade"}, appSpec{name: "keep"})
	const del = `mutation($ref: ApplicationRef!, $cascade: Boolean!) { deleteApplication(input: {application: $ref, cascade: $cascade, propagationPolicy: BACKGROUND}) }`
	var got struct{ DeleteApplication string }
	data(t, del, map[string]any{"ref": map[string]any{"name": "keep", "namespace": ns}, "cascade": false}, &got)
	if got.DeleteApplication == "" {
		t.Error("no ID returned")
	}
	app := &v1alpha1.Application{}
	if err := kube.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "keep"}, app); err == nil {
		t.Errorf("non-cascading delete left the app: %+v", app.ObjectMeta)
	}
	// A cascading delete leaves the resources to the controller (not
	// running here): the app waits on its finalizer.
	data(t, del, map[string]any{"ref": map[string]any{"name": "cascade", "namespace": ns}, "cascade": true}, &got)
	app = getApp(t, ns, "cascade")
	if app.DeletionTimestamp == nil || !slices.Contains(app.Finalizers, "resources-finalizer.argocd.argoproj.io/background") {
		t.Errorf("cascading delete: deletionTimestamp %v finalizers %v", app.DeletionTimestamp, app.Finalizers)
	}
	app.Finalizers = nil // let it go
	if err := kube.Update(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	if code := errorCode(t, del, map[string]any{"ref": map[string]any{"name": "gone", "namespace": ns}, "cascade": true}); code != "NOT_FOUND" {
		t.Errorf("delete of a missing app: code %q, want NOT_FOUND", code)
	}
}

func TestPatchApplication(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	createApps(t, ns, appSpec{name: "web", labels: map[string]string{"tier": "front"}})
	ref := map[string]any{"name": "web", "namespace": ns}
	const patch = `mutation($ref: ApplicationRef!, $p: String!, $t: PatchType!) { patchApplication(input: {application: $ref, patch: $p, patchType: $t}) { name spec { source { targetRevision } } } }`
	var got map[string]any
	data(t, patch, map[string]any{"ref": ref, "t": "MERGE",
		"p": `{"metadata": {"labels": {"team": "shop", "tier": null}}, "spec": {"source": {"targetRevision": "v2"}}}`}, &got)
	app := getApp(t, ns, "web")
	if app.Spec.Source.TargetRevision != "v2" || app.Labels["team"] != "shop" || app.Labels["tier"] != "" || app.Spec.Source.Path != "web" {
		t.Errorf("after the merge patch: labels %v, source %+v", app.Labels, app.Spec.Source)
	}
	data(t, patch, map[string]any{"ref": ref, "t": "JSON",
		"p": `[{"op": "replace", "path": "/spec/source/targetRevision", "value": "v3"}, {"op": "add", "path": "/metadata/annotations", "value": {"note": "x"}}]`}, &got)
	app = getApp(t, ns, "web")
	if app.Spec.Source.TargetRevision != "v3" || app.Annotations["note"] != "x" {
		t.Errorf("after the JSON patch: annotations %v, source %+v", app.Annotations, app.Spec.Source)
	}
	// Each copy copies the previous ones: 40 would double the document
	// 40 times.
	doubling := `[{"op": "add", "path": "/spec/info", "value": [{"name": "n", "value": "` + strings.Repeat("x", 1000) + `"}]}` +
		strings.Repeat(`, {"op": "copy", "from": "/spec/info", "path": "/spec/info/-"}`, 40) + `]`
	_, resp := query(t, patch, map[string]any{"ref": ref, "p": doubling, "t": "JSON"})
	if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != "BAD_USER_INPUT" || !strings.Contains(resp.Errors[0].Message, "exceeding the limit 262144") {
		t.Errorf("copies that double the document: %+v, want BAD_USER_INPUT at the copy limit", resp.Errors)
	}
	for name, tc := range map[string]struct{ p, typ string }{
		"status is not patchable":  {`{"status": {"sync": {"status": "Synced"}}}`, "MERGE"},
		"finalizers stay":          {`{"metadata": {"finalizers": ["x"]}}`, "MERGE"},
		"unknown spec field":       {`{"spec": {"sourc": {}}}`, "MERGE"},
		"not JSON":                 {`{"spec":`, "MERGE"},
		"a failing JSON patch":     {`[{"op": "test", "path": "/spec/project", "value": "other"}]`, "JSON"},
		"strategic does not apply": {`{"spec": {}}`, "STRATEGIC"},
	} {
		if code := errorCode(t, patch, map[string]any{"ref": ref, "p": tc.p, "t": tc.typ}); code != "BAD_USER_INPUT" {
			t.Errorf("%s: code %q, want BAD_USER_INPUT", name, code)
		}
	}
	if app := getApp(t, ns, "web"); app.Spec.Source.TargetRevision != "v3" || len(app.Finalizers) != 0 {
		t.Errorf("a refused patch changed the app: %+v %v", app.Spec.Source, app.Finalizers)
	}
}

// A query sent after a mutation's answer reads what the mutation wrote:
// the mutation answers once the index the queries read holds its write.
// Each round patches the target revision and reads it back at once.
func TestQueryReadsMutationsWrite(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	ref := map[string]any{"name": "ryw", "namespace": ns}
	const create = `mutation($m: String!) { createApplication(input: {manifest: $m, upsert: false}) { name } }`
	const patch = `mutation($ref: ApplicationRef!, $p: String!) { patchApplication(input: {application: $ref, patch: $p, patchType: MERGE}) { name } }`
	const read = `query($ns: String) { application(name: "ryw", namespace: $ns) { spec { source { targetRevision } } } }`
	const del = `mutation($ref: ApplicationRef!) { deleteApplication(input: {application: $ref, cascade: false}) }`
	type app struct {
		Application *struct {
			Spec struct {
				Source struct{ TargetRevision string }
			}
		}
	}
	var created map[string]any
	data(t, create, map[string]any{"m": manifest(ns, "ryw", "graphcd.io/v1alpha1", "")}, &created)
	var got app
	data(t, read, map[string]any{"ns": ns}, &got)
	if got.Application == nil {
		t.Fatal("the app just created is not found")
	}
	for i := range 20 {
		rev := fmt.Sprintf("v%d", i)
		var patched map[string]any
		data(t, patch, map[string]any{"ref": ref, "p": fmt.Sprintf(`{"spec": {"source": {"targetRevision": %q}}}`, rev)}, &patched)
		data(t, read, map[string]any{"ns": ns}, &got)
		if got.Application == nil || got.Application.Spec.Source.TargetRevision != rev {
			t.Fatalf("round %d: the query after the patch read %+v, want targetRevision %s", i, got.Application, rev)
		}
	}
	var deleted map[string]any
	data(t, del, map[string]any{"ref": ref}, &deleted)
	data(t, read, map[string]any{"ns": ns}, &got)
	if got.Application != nil {
		t.Errorf("the app just deleted is still found: %+v", got.Application)
	}
}

// A multi-source app syncs a revision at the source position asked for,
// the others at their targets, and rolls back to an entry's sources and
// revisions together.
func TestSyncAndRollbackMultiSource(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	sources := []v1alpha1.ApplicationSource{
		{RepoURL: "https://charts.example.com", Chart: "web", TargetRevision: "1.0.0", Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"$values/prod.yaml"}}},
		{RepoURL: "https://git.example.com/values.git", TargetRevision: "main", Ref: "values"},
	}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "multi"}, Spec: v1alpha1.ApplicationSpec{
		Project: "default", Sources: sources, Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"},
	}}
	if err := kube.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	app.Status.History = []v1alpha1.RevisionHistory{{ID: 1, DeployedAt: metav1.Now(), Sources: sources, Revisions: []string{"1.0.0", "0123456789abcdef0123456789abcdef01234567"}}}
	if err := kube.Status().Update(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	ref := map[string]any{"name": "multi", "namespace": ns}
	const sync = `mutation($in: SyncApplicationInput!) { syncApplication(input: $in) { name } }`
	const terminate = `mutation($ref: ApplicationRef!) { terminateOperation(input: $ref) { name } }`
	var got map[string]any

	if code := errorCode(t, sync, map[string]any{"in": map[string]any{"application": ref, "revision": "v2", "sourcePosition": 3}}); code != "BAD_USER_INPUT" {
		t.Errorf("sync of a third source: code %q, want BAD_USER_INPUT", code)
	}
	data(t, sync, map[string]any{"in": map[string]any{"application": ref, "revision": "9f1c2e4", "sourcePosition": 2}}, &got)
	if op := getApp(t, ns, "multi").Operation; op == nil || op.Sync.Revision != "" || !slices.Equal(op.Sync.Revisions, []string{"", "9f1c2e4"}) {
		t.Errorf("sync at source 2: operation %+v, want revisions [\"\" 9f1c2e4]", op)
	}
	data(t, terminate, map[string]any{"ref": ref}, &got)
	data(t, sync, map[string]any{"in": map[string]any{"application": ref, "revision": "1.1.0"}}, &got)
	if op := getApp(t, ns, "multi").Operation; op == nil || !slices.Equal(op.Sync.Revisions, []string{"1.1.0", ""}) {
		t.Errorf("sync without a position: operation %+v, want the first source's revision", op)
	}
	data(t, terminate, map[string]any{"ref": ref}, &got)

	data(t, `mutation($ref: ApplicationRef!) { rollbackApplication(input: {application: $ref, id: 1}) { name } }`, map[string]any{"ref": ref}, &got)
	op := getApp(t, ns, "multi").Operation
	if op == nil || op.Sync.Source != nil || len(op.Sync.Sources) != 2 || !slices.Equal(op.Sync.Revisions, app.Status.History[0].Revisions) {
		t.Errorf("rollback operation = %+v, want the entry's sources and revisions", op)
	}
}
