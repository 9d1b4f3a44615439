//go:build integration

package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/diff"
)

// quirkyDeployment is written the way charts often are: values the API
// server drops or rewrites on the way in (an empty env value, empty lists
// and maps, a null creationTimestamp).
func quirkyDeployment(ns, app string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: %[1]s
  annotations: {argocd.argoproj.io/tracking-id: "%[2]s:apps/Deployment:%[1]s/api"}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata:
      creationTimestamp: null
      labels: {app: api}
    spec:
      imagePullSecrets: []
      containers:
      - name: api
        image: "registry.example/api:1.0"
        args: []
        env:
        - {name: EMPTY, value: ""}
        - {name: MODE, value: prod}
        resources: {limits: {cpu: 500m}}
`, ns, app)
}

// Server-side diff compares the dry-run result with live, so what the API
// server itself drops or defaults is no difference (the default diff
// reports the dropped empty env value), while a real edit is.
func TestServerSideDiff(t *testing.T) {
	t.Parallel()
	const name = "ssd-app"
	_, dest, _ := newAppWith(t, name, map[string]string{"app/deploy.yaml": quirkyDeployment("DEST", name)}, func(a *v1alpha1.Application) {
		a.Annotations = map[string]string{diff.CompareOptionsAnnotation: "ServerSideDiff=true"}
	})
	apply(t, quirkyDeployment(dest, name))
	waitStatus(t, name, "Synced under server-side diff", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeSynced && len(s.Resources) == 1
	})

	d, err := cluster.Client.AppsV1().Deployments(dest).Get(t.Context(), "api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Image = "registry.example/api:2.0"
	if _, err := cluster.Client.AppsV1().Deployments(dest).Update(t.Context(), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, name, "OutOfSync after an image edit", func(s *v1alpha1.ApplicationStatus) bool { return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync })
	st := ctl.Reconciler().State(types.NamespacedName{Namespace: appNamespace, Name: name})
	if st == nil || len(st.Comparison.Resources) != 1 {
		t.Fatalf("state = %+v, want one resource", st)
	}
	got := st.Comparison.Resources[0].Diff
	if !strings.Contains(got, `-        image: "registry.example/api:2.0"`) || !strings.Contains(got, `+        image: "registry.example/api:1.0"`) {
		t.Errorf("diff does not name the image edit:\n%s", got)
	}
	var changed []string
	for line := range strings.SplitSeq(got, "\n") {
		if (strings.HasPrefix(line, "-") || strings.HasPrefix(line, "+")) && !strings.HasPrefix(line, "---") && !strings.HasPrefix(line, "+++") {
			changed = append(changed, line)
		}
	}
	if len(changed) != 2 {
		t.Errorf("diff changes %d lines, want the image line alone:\n%s", len(changed), got)
	}
}

// A project that monitors orphaned resources warns about untracked objects
// in the app's namespace, skipping what Kubernetes creates itself and what
// the project ignores, and the warning follows the objects through events.
func TestOrphanedResourceWarning(t *testing.T) {
	t.Parallel()
	const name = "orphan-app"
	proj := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: "orphan-watch", Namespace: appNamespace},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:  []string{"*"},
			Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			OrphanedResources: &v1alpha1.OrphanedResourcesMonitorSettings{
				Ignore: []v1alpha1.OrphanedResourceKey{{Kind: "Secret", Name: "ignored-*"}},
			},
		},
	}
	if err := apps.Create(t.Context(), proj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apps.Delete(context.Background(), proj) })
	_, dest, _ := newAppWith(t, name, map[string]string{"app/cm.yaml": configMap("DEST", name, "prod")}, func(a *v1alpha1.Application) {
		a.Spec.Project = proj.Name
	})
	apply(t, configMap(dest, name, "prod"))
	waitStatus(t, name, "Synced without warnings", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeSynced && len(s.Conditions) == 0
	})

	stray := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stray\n  namespace: %s\ndata:\n  mode: x\n", dest)
	ignored := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: ignored-token\n  namespace: %s\nstringData: {k: v}\n", dest)
	apply(t, stray, ignored)
	app := waitStatus(t, name, "warned about the stray ConfigMap", func(s *v1alpha1.ApplicationStatus) bool {
		return hasCondition(s, v1alpha1.ApplicationConditionOrphanedResourceWarning, "ConfigMap "+dest+"/stray")
	})
	for _, c := range app.Status.Conditions {
		if c.Type == v1alpha1.ApplicationConditionOrphanedResourceWarning && (strings.Contains(c.Message, "ignored-token") || strings.Contains(c.Message, "kube-root-ca.crt") || !strings.Contains(c.Message, "has 1 orphaned")) {
			t.Errorf("orphan warning = %q, want just the stray ConfigMap", c.Message)
		}
	}
	if st := ctl.Reconciler().State(types.NamespacedName{Namespace: appNamespace, Name: name}); st == nil || len(st.Comparison.Orphans) != 1 {
		t.Errorf("orphans in state = %+v, want the stray ConfigMap", st)
	}
	// The state the API serves lists it too (the tree's orphanedNodes).
	poll(t, "the stray ConfigMap in the stored state", func(ctx context.Context) (bool, error) {
		st, err := appStates.Get(ctx, types.NamespacedName{Namespace: appNamespace, Name: name})
		if err != nil || st == nil {
			return false, err
		}
		return st.OrphansCount == 1 && len(st.Orphans) == 1 && st.Orphans[0].Kind == "ConfigMap" && st.Orphans[0].Name == "stray", nil
	})

	if err := cluster.Client.CoreV1().ConfigMaps(dest).Delete(t.Context(), "stray", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, name, "clear of the warning once the stray object is gone", func(s *v1alpha1.ApplicationStatus) bool {
		return !hasCondition(s, v1alpha1.ApplicationConditionOrphanedResourceWarning, "")
	})
}

// A manifest of a kind graphcd does not manage (Events are excluded by
// default) gives ExcludedResourceWarning and is left out of the comparison.
func TestExcludedResourceWarning(t *testing.T) {
	t.Parallel()
	const name = "excluded-app"
	event := "apiVersion: v1\nkind: Event\nmetadata:\n  name: note\n  namespace: DEST\ninvolvedObject: {kind: ConfigMap, name: settings}\nreason: Test\n"
	dest, _ := newApp(t, name, map[string]string{"app/cm.yaml": configMap("DEST", name, "prod"), "app/event.yaml": event})
	apply(t, configMap(dest, name, "prod"))
	app := waitStatus(t, name, "warned about the excluded Event", func(s *v1alpha1.ApplicationStatus) bool {
		return hasCondition(s, v1alpha1.ApplicationConditionExcludedResourceWarning, "Event "+dest+"/note")
	})
	if app.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced || len(app.Status.Resources) != 1 {
		t.Errorf("sync %s with resources %+v, want Synced with the ConfigMap alone", app.Status.Sync.Status, app.Status.Resources)
	}
}

func hasCondition(s *v1alpha1.ApplicationStatus, t v1alpha1.ApplicationConditionType, contains string) bool {
	for _, c := range s.Conditions {
		if c.Type == t && strings.Contains(c.Message, contains) {
			return true
		}
	}
	return false
}
