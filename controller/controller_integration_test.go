//go:build integration

package controller_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/config/crd"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/controller/appset"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/reposerver/inproc"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

const appNamespace = "graphcd"

var (
	cluster *localcluster.Cluster
	apps    client.Client
	ctl     *controller.Controller
)

// TestMain starts a full cluster and a second, minimal one (a destination
// registered by a cluster Secret), installs the CRDs and runs one
// controller, with a resync long enough that every refresh a test sees
// comes from an event.
func TestMain(m *testing.M) {
	code := localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Full}, &cluster, startSecond, startForge, startController)
	if secondStopErr != nil {
		fmt.Fprintf(os.Stderr, "second cluster: %v\n", secondStopErr)
		code = 1
	}
	os.Exit(code)
}

// startController installs the CRDs on the management cluster and runs
// the controller under test.
func startController(c *localcluster.Cluster) (func(), error) {
	ctx, cancel := context.WithCancel(context.Background())
	if err := crd.Install(ctx, apiextensionsclientset.NewForConfigOrDie(c.Config)); err != nil {
		cancel()
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNamespace}}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		cancel()
		return nil, err
	}
	scheme := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(scheme)
	var err error
	if apps, err = client.New(c.Config, client.Options{Scheme: scheme}); err != nil {
		cancel()
		return nil, err
	}
	work, err := os.MkdirTemp("", "graphcd-ctl-")
	if err != nil {
		cancel()
		return nil, err
	}
	// Resolved revisions are cached for the default 3 minutes, so a
	// commit alone is not seen before a refresh (TestRefreshPicksUpNewCommit,
	// TestFirstRenderResolvesAfresh).
	repo, err := inproc.New(inproc.Options{WorkDir: work, AllowFileURLs: true})
	if err != nil {
		cancel()
		return nil, err
	}
	repoSvc = repo
	ctl, err = controller.New(controller.Config{
		RESTConfig: c.Config, Namespace: appNamespace, Repo: repo, Resync: time.Hour,
		SyncWaveDelay: 100 * time.Millisecond, SyncPollInterval: 200 * time.Millisecond,
		State:  appStates,
		Forges: appset.ForgePolicy{Allowed: []string{forge.URL}},
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		cancel()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintf(os.Stderr, "controller: %v\n", err)
		}
		_ = os.RemoveAll(work)
	}, nil
}

func deployment(ns, app string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: %[1]s
  annotations: {argocd.argoproj.io/tracking-id: "%[2]s:apps/Deployment:%[1]s/web"}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.27"}]
`, ns, app)
}

func configMap(ns, app, value string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: %[1]s\n  annotations: {argocd.argoproj.io/tracking-id: \"%[2]s:/ConfigMap:%[1]s/settings\"}\ndata:\n  mode: %[3]q\n", ns, app, value)
}

// newApp commits the manifests to a repository and creates an Application
// for them, with a destination namespace of its own.
func newApp(t *testing.T, name string, files map[string]string) (string, *v1alpha1.Application) {
	t.Helper()
	_, dest, app := newAppWith(t, name, files, nil)
	return dest, app
}

// newAppWith is newApp that lets edit change the Application before it is
// created, and also returns the repository's working copy.
func newAppWith(t *testing.T, name string, files map[string]string, edit func(*v1alpha1.Application)) (dir, dest string, _ *v1alpha1.Application) {
	t.Helper()
	dest = cluster.Namespace(t)
	for k, v := range files {
		files[k] = strings.ReplaceAll(v, "DEST", dest)
	}
	dir, _ = reposervertest.CommitFiles(t, files)
	return dir, dest, createApp(t, name, dir, dest, edit)
}

// createApp creates the Application name of the repository in dir (its
// "app" folder at main) to the namespace dest, deleted after the test.
func createApp(t *testing.T, name, dir, dest string, edit func(*v1alpha1.Application)) *v1alpha1.Application {
	t.Helper()
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: appNamespace},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + dir, Path: "app", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: dest},
		},
	}
	if edit != nil {
		edit(app)
	}
	if err := apps.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apps.Delete(context.Background(), app) })
	return app
}

// waitStatus polls the Application until cond holds.
func waitStatus(t *testing.T, name string, what string, cond func(*v1alpha1.ApplicationStatus) bool) *v1alpha1.Application {
	t.Helper()
	var app v1alpha1.Application
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := apps.Get(ctx, types.NamespacedName{Namespace: appNamespace, Name: name}, &app); err != nil {
			return false, err
		}
		return cond(&app.Status), nil
	})
	if err != nil {
		b, _ := yaml.Marshal(app.Status)
		t.Fatalf("app %s never %s: %v\nstatus:\n%s", name, what, err, b)
	}
	return &app
}

// watchApp watches the Application name from now on and sends every
// version of it written; the channel closes when the watch ends (at the
// test's end at the latest).
func watchApp(t *testing.T, name string) <-chan *v1alpha1.Application {
	t.Helper()
	gvr := v1alpha1.GroupVersion.WithResource("applications")
	w, err := dynamic.NewForConfigOrDie(cluster.Config).Resource(gvr).Namespace(appNamespace).Watch(t.Context(),
		metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	out := make(chan *v1alpha1.Application)
	go func() {
		defer close(out)
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			var app v1alpha1.Application
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &app); err != nil {
				t.Errorf("app %s as watched: %v", name, err)
				return
			}
			select {
			case out <- &app:
			case <-t.Context().Done():
				return
			}
		}
	}()
	return out
}

// apply creates objects from YAML, as a person with kubectl would.
func apply(t *testing.T, manifests ...string) {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(cluster.Config)
	for _, m := range manifests {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(m), &u.Object); err != nil {
			t.Fatal(err)
		}
		// A kind whose CRD was just created can drop out of the cache's
		// discovery for a moment while another CRD event re-discovers.
		var gvr schema.GroupVersionResource
		poll(t, "the cluster cache to serve "+u.GroupVersionKind().Kind, func(context.Context) (bool, error) {
			var err error
			gvr, err = ctl.Live().ResourceFor(u.GroupVersionKind().GroupKind())
			return err == nil, nil
		})
		if _, err := dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(t.Context(), &u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// An app whose resources do not exist yet is OutOfSync with Missing
// resources; once they are created by hand it turns Synced, and Healthy
// when KWOK's pods are Ready; the tree shows Deployment -> ReplicaSet -> Pods.
func TestMissingThenSyncedAndHealthy(t *testing.T) {
	t.Parallel()
	const name = "web-app"
	dest, _ := newApp(t, name, map[string]string{
		"app/deploy.yaml": deployment("DEST", name),
		"app/cm.yaml":     configMap("DEST", name, "prod"),
	})
	waitStatus(t, name, "OutOfSync with missing resources", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync && s.Health.Status == v1alpha1.HealthStatusMissing &&
			len(s.Resources) == 2 && s.Sync.Revision != "" && s.SourceType == v1alpha1.ApplicationSourceTypeDirectory
	})
	apply(t, deployment(dest, name), configMap(dest, name, "prod"))
	app := waitStatus(t, name, "Synced and Healthy", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeSynced && s.Health.Status == v1alpha1.HealthStatusHealthy
	})
	if got := app.Status.Summary.Images; len(got) != 1 || got[0] != "nginx:1.27" {
		t.Errorf("summary.images = %v, want [nginx:1.27]", got)
	}
	kinds := map[string]int{}
	var tree strings.Builder
	for _, n := range ctl.Live().Tree(name) {
		kinds[n.Kind]++
		fmt.Fprintf(&tree, "%s %s/%s parents=%v\n", n.Kind, n.Namespace, n.Name, n.ParentUIDs)
	}
	b, _ := yaml.Marshal(app)
	t.Logf("application:\n%s\ntree:\n%s", b, tree.String())
	if kinds["Deployment"] != 1 || kinds["ReplicaSet"] != 1 || kinds["Pod"] != 2 || kinds["ConfigMap"] != 1 {
		t.Errorf("tree kinds = %v, want Deployment, ReplicaSet, 2 Pods, ConfigMap", kinds)
	}
}

// Deleting or editing a managed resource turns the app OutOfSync through
// the event path (the resync is an hour), with a diff naming the change.
func TestLiveChangesGoOutOfSync(t *testing.T) {
	t.Parallel()
	const name = "cm-app"
	dest, _ := newApp(t, name, map[string]string{"app/cm.yaml": configMap("DEST", name, "prod")})
	apply(t, configMap(dest, name, "prod"))
	waitStatus(t, name, "Synced", func(s *v1alpha1.ApplicationStatus) bool { return s.Sync.Status == v1alpha1.SyncStatusCodeSynced })

	cm, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["mode"] = "debug"
	if _, err := cluster.Client.CoreV1().ConfigMaps(dest).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, name, "OutOfSync after an edit", func(s *v1alpha1.ApplicationStatus) bool { return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync })
	state := ctl.Reconciler().State(types.NamespacedName{Namespace: appNamespace, Name: name})
	if state == nil || len(state.Comparison.Resources) != 1 || !strings.Contains(state.Comparison.Resources[0].Diff, `-  mode: debug`) {
		t.Errorf("diff after edit = %+v, want one naming mode: debug", state)
	}

	if err := cluster.Client.CoreV1().ConfigMaps(dest).Delete(t.Context(), "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, name, "Missing after a delete", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync && s.Health.Status == v1alpha1.HealthStatusMissing
	})
}

// A source path that does not exist gives a ComparisonError with a
// helpful message.
func TestComparisonError(t *testing.T) {
	t.Parallel()
	const name = "broken-app"
	_, app := newApp(t, name, map[string]string{"app/cm.yaml": configMap("DEST", name, "x")})
	app.Spec.Source.Path = "no/such/path"
	if err := apps.Update(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, name, "ComparisonError", func(s *v1alpha1.ApplicationStatus) bool {
		for _, c := range s.Conditions {
			if c.Type == v1alpha1.ApplicationConditionComparisonError && strings.Contains(c.Message, `app path "no/such/path" does not exist`) {
				return true
			}
		}
		return false
	})
}

// A resource declared twice gives RepeatedResourceWarning; a resource that
// another app owns gives SharedResourceWarning naming both apps.
func TestResourceWarnings(t *testing.T) {
	t.Parallel()
	const name = "warn-app"
	dest, _ := newApp(t, name, map[string]string{
		"app/a.yaml":     configMap("DEST", name, "one"),
		"app/a-dup.yaml": configMap("DEST", name, "one"),
		"app/b.yaml":     strings.ReplaceAll(configMap("DEST", name, "two"), "name: settings", "name: owned-elsewhere"),
	})
	apply(t, strings.ReplaceAll(configMap(dest, "other-app", "two"), "settings", "owned-elsewhere"))
	waitStatus(t, name, "warned about repeated and shared resources", func(s *v1alpha1.ApplicationStatus) bool {
		var repeated, shared bool
		for _, c := range s.Conditions {
			repeated = repeated || (c.Type == v1alpha1.ApplicationConditionRepeatedResourceWarning && strings.Contains(c.Message, "ConfigMap "+dest+"/settings"))
			shared = shared || (c.Type == v1alpha1.ApplicationConditionSharedResourceWarning && strings.Contains(c.Message, "part of applications other-app and warn-app"))
		}
		return repeated && shared
	})
}
