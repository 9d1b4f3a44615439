//go:build integration

package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/wellknown"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// second is a minimal cluster that is only ever a destination: the
// controller knows it through a cluster Secret.
var second *localcluster.Cluster

// secondStopErr is set when the second cluster does not stop cleanly;
// TestMain fails the run then.
var secondStopErr error

// startSecond starts the second cluster; its teardown, which runs after
// the controller's, stops it and checks that none of its processes are
// left.
func startSecond(*localcluster.Cluster) (func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	c, err := localcluster.Start(ctx, localcluster.Options{Mode: localcluster.Minimal})
	if err != nil {
		return nil, fmt.Errorf("start the second cluster: %w", err)
	}
	second = c
	return func() { secondStopErr = c.Stop() }, nil
}

// registerSecond creates a cluster Secret for the second cluster that logs
// in with its admin client certificate, and deletes it when the test ends.
func registerSecond(t *testing.T, name string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: name, Labels: map[string]string{wellknown.SecretTypeLabel: secretcodec.TypeCluster}},
		StringData: clusterSecretData(t, second, name, ""),
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

var secondSeq atomic.Int64

// uniqueName is base with a number no other call in this process gets.
func uniqueName(base string) string {
	return fmt.Sprintf("%s-%d", base, secondSeq.Add(1))
}

// secondApp commits files (DEST replaced by a fresh namespace name) and
// creates an Application for them with destination dest; the namespace
// exists on neither cluster: the sync creates it (CreateNamespace=true).
func secondApp(t *testing.T, name string, dest v1alpha1.ApplicationDestination, files map[string]string) string {
	t.Helper()
	ns := uniqueName(name)
	for k, v := range files {
		files[k] = strings.ReplaceAll(v, "DEST", ns)
	}
	dir, _ := reposervertest.CommitFiles(t, files)
	dest.Namespace = ns
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: appNamespace},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + dir, Path: "app", TargetRevision: "main"},
			Destination: dest,
			SyncPolicy:  &v1alpha1.SyncPolicy{SyncOptions: []string{"CreateNamespace=true"}},
		},
	}
	if err := apps.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = apps.Delete(context.Background(), app)
		_ = second.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	return ns
}

// Apps whose destination is a cluster registered by a Secret, by name and
// by server, sync onto that cluster and not the management one; the
// cluster's own cache turns an app OutOfSync after a live edit there; and
// deleting the Secret leaves the apps with an InvalidSpecError naming the
// cluster.
func TestSecondClusterDestination(t *testing.T) {
	t.Parallel()
	const secretName = "second"
	registerSecond(t, secretName)
	// App names differ from run to run (-count): the minimal cluster has
	// no namespace controller, so a deleted namespace keeps the objects an
	// earlier run's app of the same name tracked.
	cfgApp, webApp := uniqueName("mc-config"), uniqueName("mc-web")

	cmNS := secondApp(t, cfgApp, v1alpha1.ApplicationDestination{Name: secretName}, map[string]string{
		"app/cm.yaml": configMap("DEST", cfgApp, "prod"),
	})
	webNS := secondApp(t, webApp, v1alpha1.ApplicationDestination{Server: second.Config.Host}, map[string]string{
		"app/cm.yaml":     configMap("DEST", webApp, "prod"),
		"app/deploy.yaml": deployment("DEST", webApp),
	})
	for _, name := range []string{cfgApp, webApp} {
		waitStatus(t, name, "compared against the second cluster", func(s *v1alpha1.ApplicationStatus) bool {
			return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync && len(s.Conditions) == 0
		})
		requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	}
	waitStatus(t, cfgApp, "synced and healthy", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.Sync.Status == v1alpha1.SyncStatusCodeSynced && s.Health.Status == v1alpha1.HealthStatusHealthy
	})
	waitStatus(t, webApp, "synced", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})

	// The objects are on the second cluster, and the management cluster
	// has not even their namespaces.
	if _, err := second.Client.CoreV1().ConfigMaps(cmNS).Get(t.Context(), "settings", metav1.GetOptions{}); err != nil {
		t.Errorf("ConfigMap on the second cluster: %v", err)
	}
	if _, err := second.Client.AppsV1().Deployments(webNS).Get(t.Context(), "web", metav1.GetOptions{}); err != nil {
		t.Errorf("Deployment on the second cluster: %v", err)
	}
	for _, ns := range []string{cmNS, webNS} {
		if _, err := cluster.Client.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("namespace %s on the management cluster: err = %v, want NotFound", ns, err)
		}
	}
	live := ctl.LiveFor(second.Config.Host)
	if live == nil {
		t.Fatal("no cache runs for the second cluster")
	}
	if got := len(live.Tree(cfgApp)); got != 1 {
		t.Errorf("tree of mc-config on the second cluster has %d nodes, want 1", got)
	}
	if got := len(ctl.Live().Tree(cfgApp)); got != 0 {
		t.Errorf("tree of mc-config on the management cluster has %d nodes, want 0", got)
	}

	// A changed Secret restarts the cluster's cache with the new config.
	secret, err := cluster.Client.CoreV1().Secrets(appNamespace).Get(t.Context(), secretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(secret.Data["config"], &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["disableCompression"] = true
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	secret.StringData = map[string]string{"config": string(b)}
	if _, err := cluster.Client.CoreV1().Secrets(appNamespace).Update(t.Context(), secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		now := ctl.LiveFor(second.Config.Host)
		return now != nil && now != live && len(now.Tree(cfgApp)) == 1, nil
	})
	if err != nil {
		t.Fatalf("the second cluster's cache was not restarted after its Secret changed: %v", err)
	}

	// An edit on the second cluster reaches the app through that
	// cluster's (new) cache (the resync is an hour).
	cm, err := second.Client.CoreV1().ConfigMaps(cmNS).Get(t.Context(), "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["mode"] = "debug"
	if _, err := second.Client.CoreV1().ConfigMaps(cmNS).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, cfgApp, "OutOfSync after an edit on the second cluster", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})

	// Without its Secret the cluster is unknown: both apps say so, by
	// name and by server, and its cache stops.
	if err := cluster.Client.CoreV1().Secrets(appNamespace).Delete(t.Context(), secretName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, cfgApp, "InvalidSpecError naming the cluster", func(s *v1alpha1.ApplicationStatus) bool {
		return hasCondition(s, v1alpha1.ApplicationConditionInvalidSpecError, "there are no clusters with this name: "+secretName)
	})
	waitStatus(t, webApp, "InvalidSpecError naming the server", func(s *v1alpha1.ApplicationStatus) bool {
		return hasCondition(s, v1alpha1.ApplicationConditionInvalidSpecError, "cluster "+second.Config.Host+" not found")
	})
	err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return ctl.LiveFor(second.Config.Host) == nil, nil
	})
	if err != nil {
		t.Errorf("the second cluster's cache still runs after its Secret was deleted: %v", err)
	}
}

// An app whose destination names a cluster nobody registered gets an
// InvalidSpecError that names it, and a sync of it ends in Error without
// touching any cluster.
func TestUnregisteredClusterDestination(t *testing.T) {
	t.Parallel()
	name := uniqueName("mc-nowhere")
	ns := secondApp(t, name, v1alpha1.ApplicationDestination{Name: "nowhere"}, map[string]string{
		"app/cm.yaml": configMap("DEST", name, "prod"),
	})
	waitStatus(t, name, "InvalidSpecError", func(s *v1alpha1.ApplicationStatus) bool {
		return hasCondition(s, v1alpha1.ApplicationConditionInvalidSpecError, "there are no clusters with this name: nowhere") &&
			s.Sync.Status == v1alpha1.SyncStatusCodeUnknown
	})
	requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	app := waitStatus(t, name, "sync ended in Error", opDone(v1alpha1.OperationError))
	if msg := app.Status.OperationState.Message; !strings.Contains(msg, "there are no clusters with this name: nowhere") {
		t.Errorf("operation message = %q, want it to name the cluster", msg)
	}
	for _, c := range []*localcluster.Cluster{cluster, second} {
		if _, err := c.Client.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("namespace %s exists on %s: err = %v", ns, c.Config.Host, err)
		}
	}
}
