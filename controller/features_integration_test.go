//go:build integration

package controller_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/controller/engineopts"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// poll waits until cond holds, failing the test after a generous bound
// (a hang guard, not a speed assertion).
func poll(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 90*time.Second, true, cond); err != nil {
		t.Fatalf("never %s: %v", what, err)
	}
}

func widget(ns, app, mode string) string {
	return fmt.Sprintf("apiVersion: test.graphcd.io/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: %[1]s\n  annotations: {argocd.argoproj.io/tracking-id: \"%[2]s:test.graphcd.io/Widget:%[1]s/w\"}\nspec:\n  mode: %[3]q\n", ns, app, mode)
}

// installWidgetCRD creates a namespaced kind of its own for the settings
// test, so the custom health check and ignore rule it configures on the
// shared controller touch no other test.
func installWidgetCRD(t *testing.T) {
	t.Helper()
	cs := apiextensionsclientset.NewForConfigOrDie(cluster.Config)
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.test.graphcd.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "test.graphcd.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: new(true),
				}},
			}},
		},
	}
	// With -count > 1 the previous run's CRD may still be going away.
	poll(t, "Widget CRD created", func(ctx context.Context) (bool, error) {
		_, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return false, nil
		}
		return err == nil, err
	})
	t.Cleanup(func() {
		_ = cs.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{})
	})
	poll(t, "Widget discovered by the cluster cache", func(context.Context) (bool, error) {
		_, err := ctl.Live().ResourceFor(schema.GroupKind{Group: "test.graphcd.io", Kind: "Widget"})
		return err == nil, nil
	})
}

// writeSettings creates or replaces graphcd-cm's data.
func writeSettings(t *testing.T, data map[string]string) {
	t.Helper()
	cms := cluster.Client.CoreV1().ConfigMaps(appNamespace)
	cm, err := cms.Get(t.Context(), controller.SettingsConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: controller.SettingsConfigMap, Namespace: appNamespace}, Data: data}
		_, err = cms.Create(t.Context(), cm, metav1.CreateOptions{})
	} else if err == nil {
		cm.Data = data
		_, err = cms.Update(t.Context(), cm, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Editing graphcd-cm takes effect without a restart: a Lua health check
// turns the app Degraded, and an ignoreDifferences rule makes a live edit
// of the ignored field Synced again. A broken edit keeps the settings.
func TestSettingsHotReload(t *testing.T) {
	t.Parallel()
	const name = "widget-app"
	const healthKey = "resource.customizations.health.test.graphcd.io_Widget"
	const ignoreKey = "resource.customizations.ignoreDifferences.test.graphcd.io_Widget"
	installWidgetCRD(t)
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().ConfigMaps(appNamespace).Delete(context.Background(), controller.SettingsConfigMap, metav1.DeleteOptions{})
	})
	dest, _ := newApp(t, name, map[string]string{"app/widget.yaml": widget("DEST", name, "prod")})
	apply(t, widget(dest, name, "prod"))
	waitStatus(t, name, "Synced", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeSynced && s.Health.Status != v1alpha1.HealthStatusDegraded
	})

	lua := "hs = {}\nhs.status = \"Degraded\"\nhs.message = \"widget says no\"\nreturn hs\n"
	writeSettings(t, map[string]string{healthKey: lua})
	waitStatus(t, name, "Degraded by the Lua check", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Health.Status == v1alpha1.HealthStatusDegraded && len(s.Resources) == 1 &&
			s.Resources[0].Health != nil && s.Resources[0].Health.Message == "widget says no"
	})

	patchWidget(t, dest, "debug")
	waitStatus(t, name, "OutOfSync after an edit", func(s *v1alpha1.ApplicationStatus) bool { return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync })

	writeSettings(t, map[string]string{healthKey: lua, ignoreKey: "jsonPointers: [/spec/mode]"})
	waitStatus(t, name, "Synced with the ignore rule", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeSynced && s.Health.Status == v1alpha1.HealthStatusDegraded
	})

	// A value that does not parse is logged and changes nothing; the
	// valid edit after it is still applied, in order.
	writeSettings(t, map[string]string{healthKey: lua, ignoreKey: "jsonPointers: [/spec/mode", "resource.compareoptions": "ignoreResourceStatusField: bogus"})
	writeSettings(t, map[string]string{ignoreKey: "jsonPointers: [/spec/mode]"})
	waitStatus(t, name, "Healthy once the Lua check is removed", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeSynced && s.Health.Status != v1alpha1.HealthStatusDegraded
	})
	if got := engineopts.HealthChecks(ctl.Reconciler().Settings()); len(got) != 0 {
		t.Errorf("health checks after removal = %v, want none", got)
	}
}

// patchWidget sets spec.mode of the live Widget.
func patchWidget(t *testing.T, ns, mode string) {
	t.Helper()
	body := fmt.Appendf(nil, `{"spec":{"mode":%q}}`, mode)
	gvr := schema.GroupVersionResource{Group: "test.graphcd.io", Version: "v1", Resource: "widgets"}
	if _, err := dynamic.NewForConfigOrDie(cluster.Config).Resource(gvr).Namespace(ns).Patch(t.Context(), "w", types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// An app's own ignoreDifferences hides a live difference in the field it
// names; without the rule the same difference is OutOfSync.
func TestAppIgnoreDifferences(t *testing.T) {
	t.Parallel()
	const name = "ignore-app"
	_, dest, _ := newAppWith(t, name, map[string]string{"app/cm.yaml": configMap("DEST", name, "prod")}, func(a *v1alpha1.Application) {
		a.Spec.IgnoreDifferences = []v1alpha1.ResourceIgnoreDifferences{{Kind: "ConfigMap", JSONPointers: []string{"/data/mode"}}}
	})
	apply(t, configMap(dest, name, "debug"))
	app := waitStatus(t, name, "Synced despite data.mode", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeSynced && len(s.Resources) == 1
	})
	app.Spec.IgnoreDifferences = nil
	if err := apps.Update(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, name, "OutOfSync without the rule", func(s *v1alpha1.ApplicationStatus) bool { return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync })
}

// A Secret whose live value differs is OutOfSync, and neither the
// in-memory diff nor the Application's status holds a byte of either value.
func TestSecretDiffMasked(t *testing.T) {
	t.Parallel()
	const name = "secret-app"
	const gitValue, liveValue = "git-side-s3cr3t-value", "live-side-h4x0r-value"
	secret := func(ns, value string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: %[1]s\n  annotations: {argocd.argoproj.io/tracking-id: \"%[2]s:/Secret:%[1]s/creds\"}\ntype: Opaque\ndata:\n  password: %[3]s\n",
			ns, name, base64.StdEncoding.EncodeToString([]byte(value)))
	}
	dest, _ := newApp(t, name, map[string]string{"app/secret.yaml": secret("DEST", gitValue)})
	apply(t, secret(dest, liveValue))
	app := waitStatus(t, name, "OutOfSync", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync && len(s.Resources) == 1
	})
	state := ctl.Reconciler().State(types.NamespacedName{Namespace: appNamespace, Name: name})
	if state == nil || len(state.Comparison.Resources) != 1 || !strings.Contains(state.Comparison.Resources[0].Diff, "password") {
		t.Fatalf("state = %+v, want one resource with a diff naming password", state)
	}
	status, err := yaml.Marshal(app.Status)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{gitValue, liveValue} {
		for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
			if d := state.Comparison.Resources[0].Diff; strings.Contains(d, form) {
				t.Errorf("diff holds %q:\n%s", form, d)
			}
			if strings.Contains(string(status), form) {
				t.Errorf("status holds %q:\n%s", form, status)
			}
		}
	}
}

// A normal refresh annotation makes the controller compare with the new
// commit of the branch, and the controller removes the annotation.
func TestRefreshPicksUpNewCommit(t *testing.T) {
	t.Parallel()
	const name = "commit-app"
	dir, _, _ := newAppWith(t, name, map[string]string{"app/cm.yaml": configMap("DEST", name, "prod")}, nil)
	app := waitStatus(t, name, "compared", func(s *v1alpha1.ApplicationStatus) bool { return s.Sync.Revision != "" })
	first := app.Status.Sync.Revision
	dest := app.Spec.Destination.Namespace
	sha := reposervertest.CommitMore(t, dir, map[string]string{"app/cm.yaml": configMap(dest, name, "staging")})
	if sha == first {
		t.Fatalf("new commit %s equals the first", sha)
	}
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"normal"}}}`, v1alpha1.RefreshAnnotation))
	if err := apps.Patch(t.Context(), app, patch); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, name, "at the new commit", func(s *v1alpha1.ApplicationStatus) bool { return s.Sync.Revision == sha })
	poll(t, "refresh annotation removed", func(ctx context.Context) (bool, error) {
		var a v1alpha1.Application
		if err := apps.Get(ctx, types.NamespacedName{Namespace: appNamespace, Name: name}, &a); err != nil {
			return false, err
		}
		_, ok := a.Annotations[v1alpha1.RefreshAnnotation]
		return !ok, nil
	})
}

// A reconciler does not trust the revisions its repository service
// resolved before it started, as a shard's new leader must not: its
// predecessor may have died between a push and passing it on. Its first
// render from a repository resolves the branch afresh.
func TestFirstRenderResolvesAfresh(t *testing.T) {
	t.Parallel()
	const name = "afresh-app"
	dest := cluster.Namespace(t)
	dir, first := reposervertest.CommitFiles(t, map[string]string{"app/cm.yaml": configMap(dest, name, "prod")})
	repo := reposerver.Repository{URL: "file://" + dir}
	if got, err := repoSvc.ResolveRevision(t.Context(), repo, "main"); err != nil || got != first {
		t.Fatalf("resolve main: %s, %v; want %s", got, err, first)
	}
	sha := reposervertest.CommitMore(t, dir, map[string]string{"app/cm.yaml": configMap(dest, name, "staging")})
	if got, err := repoSvc.ResolveRevision(t.Context(), repo, "main"); err != nil || got != first {
		t.Fatalf("resolve main after a commit: %s, %v; the test needs the cached %s", got, err, first)
	}
	createApp(t, name, dir, dest, nil)
	app := waitStatus(t, name, "compared", func(s *v1alpha1.ApplicationStatus) bool { return s.Sync.Revision != "" })
	if got := app.Status.Sync.Revision; got != sha {
		t.Fatalf("first comparison at %s, want the newest commit %s (%s was resolved before)", got, sha, first)
	}
}

// Subscribers see an app's refreshes and transitions, and the transitions
// are recorded as Kubernetes Events on the Application.
func TestEvents(t *testing.T) {
	t.Parallel()
	const name = "events-app"
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	events := ctl.Subscribe(ctx, 4096)
	app := types.NamespacedName{Namespace: appNamespace, Name: name}
	dest, _ := newApp(t, name, map[string]string{"app/cm.yaml": configMap("DEST", name, "prod")})

	// await reads events until every wanted one has been seen for the app.
	await := func(what string, want map[controller.EventType]v1alpha1.SyncStatusCode) {
		t.Helper()
		timeout := time.After(90 * time.Second)
		for len(want) > 0 {
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatalf("event stream closed waiting for %s", what)
				}
				if s, wanted := want[ev.Type]; ev.App == app && wanted && (s == "" || s == ev.Sync) {
					delete(want, ev.Type)
				}
			case <-timeout:
				t.Fatalf("no %s: still waiting for %v (dropped %d)", what, want, ctl.Reconciler().Dropped())
			}
		}
	}
	await("first events", map[controller.EventType]v1alpha1.SyncStatusCode{
		controller.EventRefreshed:         v1alpha1.SyncStatusCodeOutOfSync,
		controller.EventSyncStatusChanged: v1alpha1.SyncStatusCodeOutOfSync,
		controller.EventHealthChanged:     "",
	})
	apply(t, configMap(dest, name, "prod"))
	await("events of the live change", map[controller.EventType]v1alpha1.SyncStatusCode{
		controller.EventResourceChanged:   "",
		controller.EventSyncStatusChanged: v1alpha1.SyncStatusCodeSynced,
	})

	var seen []string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("events of %s: %q", name, seen)
		}
	})
	poll(t, "a SyncStatusChanged Event OutOfSync -> Synced", func(ctx context.Context) (bool, error) {
		list, err := cluster.Client.EventsV1().Events(appNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		seen = seen[:0]
		for _, e := range list.Items {
			if e.Regarding.Name == name {
				seen = append(seen, e.Reason+": "+e.Note)
			}
			if e.Regarding.Kind == "Application" && e.Regarding.Name == name && e.Reason == "SyncStatusChanged" && e.Note == "OutOfSync -> Synced" {
				return true, nil
			}
		}
		return false, nil
	})
}
