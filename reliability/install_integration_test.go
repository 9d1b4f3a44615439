//go:build integration

package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/testenv/roles"
)

// graphcdNamespace holds the Applications, settings and Leases.
const graphcdNamespace = "graphcd"

// shards is how many controller shards run, each with a standby.
const shards = 2

// installation is graphcd's split roles on the local cluster, as
// deploy/ha runs them, with the battery's Git repository.
type installation struct {
	*roles.Installation
	git      *repo
	apps     client.Client
	admin    string // the admin's password
	webhooks atomic.Int64
}

// install starts every role and waits until each serves.
func install(t *testing.T) *installation {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	in := &installation{git: newRepo(t)}
	var err error
	if in.apps, err = client.New(cluster.Config, client.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
	in.Installation, err = roles.Install(t.Context(), roles.Options{
		Bin: graphcdBin, Cluster: cluster, Namespace: graphcdNamespace, LogDir: logDir,
		Shards: shards, Replicas: 2, APIReplicas: 2, RepoServers: 2, Env: memoryEnv(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Stop)
	t.Cleanup(func() {
		if t.Failed() {
			for _, r := range in.All() {
				t.Logf("log of %s:\n%s", r.Name, lastLines(r.Log(), 60))
			}
		}
	})
	if in.admin, err = in.AdminPassword(t.Context()); err != nil {
		t.Fatal(err)
	}
	return in
}

// push commits a change of the background apps and pushes it, then tells
// an API replica (each in turn) through its webhook, as a forge does, so
// the apps see it at once rather than at their next periodic refresh.
func (in *installation) push(ctx context.Context) (string, error) {
	sha, err := in.git.push(ctx)
	if err != nil {
		return "", err
	}
	return sha, in.webhook(ctx, sha)
}

// webhook posts a GitHub push event of the repository's main branch at
// sha to an API replica, unsigned (no webhook secret is configured).
func (in *installation) webhook(ctx context.Context, sha string) error {
	body, err := json.Marshal(map[string]any{
		"ref":        "refs/heads/main",
		"after":      sha,
		"repository": map[string]string{"html_url": in.git.url, "clone_url": in.git.url, "default_branch": "main"},
	})
	if err != nil {
		return err
	}
	server := in.ServerURLs[int(in.webhooks.Add(1))%len(in.ServerURLs)]
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, server+"/api/webhook", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "push")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("webhook to %s: %w", server, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook to %s: %s", server, resp.Status)
	}
	return nil
}

// inClusterShard is the shard whose controllers own the in-cluster
// destination, where every app of the battery goes.
func inClusterShard(t *testing.T) int {
	t.Helper()
	shard, err := controller.ShardOf(controller.InClusterServer, shards)
	if err != nil {
		t.Fatal(err)
	}
	return shard
}

// leader returns the replica of shard that holds its Lease, waiting for
// one to hold it.
func (in *installation) leader(t *testing.T, shard int) (leader, standby *roles.Role) {
	t.Helper()
	waitFor(t, 2*time.Minute, "a leader of shard "+strconv.Itoa(shard), func() (bool, string) {
		var holder string
		leader, holder = in.Leader(t.Context(), shard)
		return leader != nil, "Lease held by " + strconv.Quote(holder)
	})
	for _, r := range in.Controllers[shard] {
		if r != leader {
			standby = r
		}
	}
	return leader, standby
}

// checkNoPanics fails the test for every panic any role logged.
func (in *installation) checkNoPanics(t *testing.T) {
	t.Helper()
	for _, r := range in.All() {
		if p := r.Panics(); len(p) > 0 {
			t.Errorf("%s panicked: %q", r.Name, p)
		}
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// newApp creates an Application of path in the battery's repository,
// deploying into a namespace of its own, with mutate applied first.
func (in *installation) newApp(t *testing.T, name, path string, mutate func(*v1alpha1.Application)) (dest string) {
	t.Helper()
	dest = cluster.Namespace(t)
	in.newAppIn(t, name, path, dest, mutate)
	return dest
}

// newAppIn is newApp into the namespace dest.
func (in *installation) newAppIn(t *testing.T, name, path, dest string, mutate func(*v1alpha1.Application)) {
	t.Helper()
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: graphcdNamespace},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: in.git.url, Path: path, TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Name: controller.InClusterName, Namespace: dest},
		},
	}
	if mutate != nil {
		mutate(app)
	}
	if err := in.apps.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.apps.Delete(context.Background(), app) })
}

// app reads the Application name.
func (in *installation) app(ctx context.Context, name string) (*v1alpha1.Application, error) {
	var a v1alpha1.Application
	err := in.apps.Get(ctx, client.ObjectKey{Namespace: graphcdNamespace, Name: name}, &a)
	return &a, err
}
