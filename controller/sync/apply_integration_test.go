//go:build integration

package sync_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/sync"
)

// Client-side apply keeps kubectl's three-way semantics: a field dropped
// from Git is removed, a field someone else added is kept, and an
// unchanged object is reported unchanged.
func TestClientSideApplyThreeWay(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "prune-after.yaml")
	h.setYAML("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  labels: {tier: web}\ndata: {a: \"1\", b: \"2\"}\n")
	h.sync(v1alpha1.OperationSucceeded)
	if r := result(t, h.state, "ConfigMap", "settings"); r.Message != "configmap/settings created" {
		t.Errorf("first apply: %q", r.Message)
	}
	if h.get("ConfigMap", "settings").GetAnnotations()[sync.AnnotationLastApplied] == "" {
		t.Error("no last-applied annotation after a client-side apply")
	}
	// Someone adds a key by hand; it is not graphcd's to remove.
	patch := []byte(`{"data":{"manual":"yes"}}`)
	if _, err := dyn.Resource(gvrs["ConfigMap"]).Namespace(h.ns).Patch(t.Context(), "settings", "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	h.setYAML("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata: {a: \"1\"}\n")
	h.sync(v1alpha1.OperationSucceeded)
	if r := result(t, h.state, "ConfigMap", "settings"); r.Message != "configmap/settings configured" {
		t.Errorf("second apply: %q", r.Message)
	}
	live := h.get("ConfigMap", "settings")
	data, _, _ := unstructured.NestedStringMap(live.Object, "data")
	if data["a"] != "1" || data["manual"] != "yes" || data["b"] != "" {
		t.Errorf("data %v, want a=1 and manual=yes, b removed", data)
	}
	if _, ok := live.GetLabels()["tier"]; ok {
		t.Errorf("label tier dropped from Git is still there: %v", live.GetLabels())
	}
	h.state = nil
	h.sync(v1alpha1.OperationSucceeded)
	if r := result(t, h.state, "ConfigMap", "settings"); r.Message != "configmap/settings unchanged" {
		t.Errorf("third apply: %q", r.Message)
	}
}

// ServerSideApply=true applies with the field manager graphcd, and
// dropping a field from Git removes it.
func TestServerSideApply(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "prune-after.yaml")
	h.opts.SyncOptions = []string{"ServerSideApply=true"}
	h.setYAML("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata: {a: \"1\", b: \"2\"}\n")
	h.sync(v1alpha1.OperationSucceeded)
	live := h.get("ConfigMap", "settings")
	managers := map[string]string{}
	for _, f := range live.GetManagedFields() {
		managers[f.Manager] = string(f.Operation)
	}
	if managers["graphcd"] != "Apply" {
		t.Errorf("managed fields %v, want manager graphcd with operation Apply", managers)
	}
	h.setYAML("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata: {a: \"1\"}\n")
	h.sync(v1alpha1.OperationSucceeded)
	if r := result(t, h.state, "ConfigMap", "settings"); r.Message != "configmap/settings serverside-applied" {
		t.Errorf("second apply: %q", r.Message)
	}
	data, _, _ := unstructured.NestedStringMap(h.get("ConfigMap", "settings").Object, "data")
	if _, ok := data["b"]; ok {
		t.Errorf("data %v: b dropped from Git is still there", data)
	}
}

// Replace=true replaces the object; a Job's template cannot change, so
// the sync fails, until Force=true deletes and re-creates the Job.
func TestReplaceAndForce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "prune-after.yaml")
	job := func(image, options string) string {
		return "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: batch\n  annotations: {argocd.argoproj.io/sync-options: \"" + options + "\"}\n" +
			"spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: " + image + "}]\n"
	}
	h.setYAML(job("example.com/a:1", "Replace=true"))
	h.sync(v1alpha1.OperationSucceeded)
	first := h.get("Job", "batch")

	h.setYAML(job("example.com/a:2", "Replace=true"))
	h.sync(v1alpha1.OperationFailed)
	if r := result(t, h.state, "Job", "batch"); r.Status != v1alpha1.ResultCodeSyncFailed || !strings.Contains(r.Message, "immutable") {
		t.Errorf("replace of an immutable field: %s %q", r.Status, r.Message)
	}

	h.setYAML(job("example.com/a:2", "Replace=true,Force=true"))
	h.sync(v1alpha1.OperationSucceeded)
	if r := result(t, h.state, "Job", "batch"); !strings.Contains(r.Message, "deleted and re-created") {
		t.Errorf("forced replace: %q", r.Message)
	}
	if now := h.get("Job", "batch"); now == nil || now.GetUID() == first.GetUID() {
		t.Error("Force=true did not re-create the Job")
	}
}

// A resource the API server rejects fails the sync before anything is
// applied, with the API server's reason on that resource; Validate=false
// lets the same resource through.
func TestInvalidResourceAppliesNothing(t *testing.T) {
	t.Parallel()
	t.Run("validate", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, "invalid.yaml")
		h.sync(v1alpha1.OperationFailed)
		r := result(t, h.state, "Deployment", "broken")
		if r.Status != v1alpha1.ResultCodeSyncFailed || !strings.Contains(r.Message, `unknown field "spec.replicaz"`) {
			t.Errorf("broken: %s %q", r.Status, r.Message)
		}
		if len(h.state.SyncResult.Resources) != 1 {
			t.Errorf("results for more than the broken resource:\n%s", dump(h.state))
		}
		if !strings.Contains(h.state.Message, "Deployment "+h.ns+"/broken: ") {
			t.Errorf("message %q does not name the resource", h.state.Message)
		}
		if names := h.names("ConfigMap"); len(names) > 1 { // kube-root-ca.crt
			t.Errorf("configmaps %v were applied although the sync was invalid", names)
		}
	})
	t.Run("no validation", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, "invalid.yaml")
		h.opts.SyncOptions = []string{"Validate=false"}
		h.sync(v1alpha1.OperationSucceeded)
		if h.get("Deployment", "broken") == nil || h.get("ConfigMap", "later") == nil {
			t.Error("Validate=false did not apply the resources")
		}
	})
}

// A plan with errors applies and prunes nothing and, as in Argo CD, gives
// each refused resource one SyncFailed result naming its problems: a
// desired object with two bad annotations, another with one, and a live
// object that would be pruned. Valid resources get no result.
func TestInvalidPlanResultPerResource(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "invalid.yaml")
	h.setYAML(`
apiVersion: v1
kind: ConfigMap
metadata: {name: good}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: bad
  annotations: {argocd.argoproj.io/hook: PreSnyc, argocd.argoproj.io/sync-wave: first}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations: {argocd.argoproj.io/sync-wave: "1.5"}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`)
	old := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	old.SetName("old")
	old.SetLabels(map[string]string{appLabel: h.ns})
	old.SetAnnotations(map[string]string{"argocd.argoproj.io/sync-options": "Prune=flase"})
	if _, err := dyn.Resource(gvrs["ConfigMap"]).Namespace(h.ns).Create(t.Context(), old, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.opts.Prune = true
	h.sync(v1alpha1.OperationFailed)

	var got []string
	for _, r := range h.state.SyncResult.Resources {
		got = append(got, strings.Join([]string{r.Group, r.Version, r.Kind, r.Namespace, r.Name, string(r.Status), string(r.HookPhase), r.Message}, " | "))
	}
	ns := h.ns
	want := []string{
		` | v1 | ConfigMap | ` + ns + ` | bad | SyncFailed | Failed | annotation argocd.argoproj.io/hook: unknown hook type "PreSnyc" (known: PreSync, Sync, PostSync, SyncFail, Skip, PreDelete, PostDelete); annotation argocd.argoproj.io/sync-wave: "first" is not an integer`,
		`apps | v1 | Deployment | ` + ns + ` | web | SyncFailed | Failed | annotation argocd.argoproj.io/sync-wave: "1.5" is not an integer`,
		` | v1 | ConfigMap | ` + ns + ` | old | SyncFailed | Failed | live object: annotation argocd.argoproj.io/sync-options: sync option Prune=flase: want true or false or confirm`,
	}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("results (-got +want):\n%s", d)
	}
	if !strings.HasPrefix(h.state.Message, sync.MessageInvalid+": ") || !strings.Contains(h.state.Message, "ConfigMap "+ns+"/bad: ") {
		t.Errorf("message %q, want %q naming the resources", h.state.Message, sync.MessageInvalid)
	}
	if h.get("ConfigMap", "good") != nil || h.get("Deployment", "web") != nil {
		t.Error("a resource of the invalid sync was applied")
	}
	if h.get("ConfigMap", "old") == nil {
		t.Error("the live ConfigMap was pruned although the sync was invalid")
	}
}

// CreateNamespace creates the destination namespace with its managed
// metadata before anything in it.
func TestExecuteCreateNamespace(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "prune-after.yaml")
	h.ns += "-created"
	h.opts.Namespace = h.ns
	h.opts.SyncOptions = []string{"CreateNamespace=true"}
	h.opts.ManagedNamespaceMetadata = &v1alpha1.ManagedNamespaceMetadata{Labels: map[string]string{"team": "shop"}}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Namespaces().Delete(context.Background(), h.ns, metav1.DeleteOptions{})
	})
	h.setDesired("prune-after.yaml")
	h.sync(v1alpha1.OperationSucceeded)
	checkOrder(t, order(h.state), []string{
		"PreSync 0 Namespace " + h.ns + " Synced Running",
		"Sync 0 ConfigMap stays Synced Running",
	})
	ns, err := cluster.Client.CoreV1().Namespaces().Get(t.Context(), h.ns, metav1.GetOptions{})
	if err != nil || ns.Labels["team"] != "shop" {
		t.Errorf("namespace %s: %v, labels %v", h.ns, err, ns.Labels)
	}
}

// The namespace CreateNamespace adds is not one of the app's waves: the
// first wave follows it without the wave delay, in the same step.
func TestCreateNamespaceWithoutWaveDelay(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "prune-after.yaml")
	e, err := sync.New(sync.Config{Client: dyn, Mapper: mapper, WaveDelay: time.Hour, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h.exec = e
	h.ns += "-created"
	h.opts.Namespace = h.ns
	h.opts.SyncOptions = []string{"CreateNamespace=true"}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Namespaces().Delete(context.Background(), h.ns, metav1.DeleteOptions{})
	})
	h.setDesired("prune-after.yaml")
	for range 20 {
		res := h.step()
		if strings.Contains(h.state.Message, "waiting before the next wave") {
			t.Fatalf("the wave after the namespace waits:\n%s", dump(h.state))
		}
		if res.Done {
			if h.state.Phase != v1alpha1.OperationSucceeded {
				t.Fatalf("phase %s:\n%s", h.state.Phase, dump(h.state))
			}
			return
		}
		time.Sleep(min(res.RequeueAfter, 50*time.Millisecond))
	}
	t.Fatalf("not done after 20 steps:\n%s", dump(h.state))
}

// A dry run checks every resource with the API server and changes
// nothing; hooks do not run.
func TestDryRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "waves.yaml")
	h.run.DryRun = true
	res := h.step()
	if !res.Done || h.state.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("dry run: done %v:\n%s", res.Done, dump(h.state))
	}
	if r := result(t, h.state, "Deployment", "backend"); r.Message != "deployment.apps/backend created (dry run)" {
		t.Errorf("backend: %q", r.Message)
	}
	for _, kind := range []string{"Deployment", "Service", "Job"} {
		if names := h.names(kind); len(names) > 0 {
			t.Errorf("a dry run created %ss %v", kind, names)
		}
	}
}
