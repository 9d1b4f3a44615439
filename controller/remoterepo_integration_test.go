//go:build integration

package controller_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/controller/manifests"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/inproc"
	"github.com/graphcd/graphcd/reposerver/remote"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// startOwnController runs a controller of the test's own for the
// Applications of namespace ns, rendering through repo; wrap, when not
// nil, wraps its transport to the API server. The returned function stops
// it (as a crash would: nothing is flushed).
func startOwnController(t *testing.T, ns string, repo reposerver.Service, wrap transport.WrapperFunc) (stop func()) {
	t.Helper()
	cfg := rest.CopyConfig(cluster.Config)
	if wrap != nil {
		cfg.Wrap(wrap)
	}
	return runController(t, controller.Config{RESTConfig: cfg, Namespace: ns, Repo: repo})
}

// runController runs a controller of the test's own with cfg, whose unset
// fields get the tests' defaults: the shared cluster and repository
// service, an hour's resync, short sync pauses, warnings logged. The returned function stops it (as
// a crash would: nothing is flushed).
func runController(t *testing.T, cfg controller.Config) (stop func()) {
	t.Helper()
	if cfg.RESTConfig == nil {
		cfg.RESTConfig = cluster.Config
	}
	if cfg.Repo == nil {
		cfg.Repo = repoSvc
	}
	if cfg.Resync == 0 {
		cfg.Resync = time.Hour
	}
	if cfg.SyncWaveDelay == 0 {
		cfg.SyncWaveDelay = 100 * time.Millisecond
	}
	if cfg.SyncPollInterval == 0 {
		cfg.SyncPollInterval = 200 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	c, err := controller.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := c.Run(ctx); err != nil {
			t.Errorf("controller: %v", err)
		}
	}()
	return func() { cancel(); <-done }
}

// remoteRepo serves a fresh in-process repository service over gRPC (TLS
// with a generated certificate) and returns a client of it.
func remoteRepo(t *testing.T) reposerver.Service {
	t.Helper()
	local, err := inproc.New(inproc.Options{WorkDir: t.TempDir(), AllowFileURLs: true})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := remote.NewServer(local, remote.ServerOptions{Hosts: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	t.Cleanup(func() {
		srv.Stop()
		if err := <-done; err != nil {
			t.Errorf("repo server: %v", err)
		}
	})
	c, err := remote.Dial(lis.Addr().String(), remote.ClientOptions{CACert: srv.CertificatePEM()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// A sync refused because the commit is not signed by the project's keys
// ends Failed (not Error, and without retries) when the manifests come
// from a remote repo server too: the refusal keeps its class across gRPC.
func TestSignatureRefusedOverGRPC(t *testing.T) {
	t.Parallel()
	const name = "unsigned-remote"
	ns, dest := cluster.Namespace(t), cluster.Namespace(t)
	_, _, armored := reposervertest.CommitSigned(t, map[string]string{"app/cm.yaml": configMap(dest, name, "signed")})
	id := keyID(t, armored)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: manifests.GPGKeysConfigMap}, Data: map[string]string{id: armored}}
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}}
	proj.Spec.SourceRepos, proj.Spec.Destinations = []string{"*"}, []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}}
	proj.Spec.SignatureKeys = []v1alpha1.SignatureKey{{KeyID: id}}
	if err := apps.Create(t.Context(), proj); err != nil {
		t.Fatal(err)
	}
	dir, _ := reposervertest.CommitFiles(t, map[string]string{"app/cm.yaml": configMap(dest, name, "unsigned")})
	retry := v1alpha1.RetryStrategy{Limit: 3, Backoff: &v1alpha1.Backoff{Duration: "1s"}}
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + dir, Path: "app", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: dest},
		},
		Operation: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, Retry: retry, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}},
	}
	stop := startOwnController(t, ns, remoteRepo(t), nil)
	defer stop()
	if err := apps.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apps.Delete(context.Background(), app) })
	var got v1alpha1.Application
	poll(t, "the sync ended", func(ctx context.Context) (bool, error) {
		if err := apps.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &got); err != nil {
			return false, err
		}
		st := got.Status.OperationState
		return st != nil && st.FinishedAt != nil && st.Phase != v1alpha1.OperationRunning, nil
	})
	st := got.Status.OperationState
	if st.Phase != v1alpha1.OperationFailed || st.RetryCount != 0 || !strings.Contains(st.Message, "commit is not signed") {
		b, _ := yaml.Marshal(st)
		t.Errorf("want phase Failed, no retry, a message naming the missing signature; got:\n%s", b)
	}
	if exists(t, dest, "ConfigMap", "settings") {
		t.Error("the unsigned commit's ConfigMap was applied")
	}
}
