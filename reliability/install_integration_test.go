//go:build integration

package reliability

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/testenv/localredis"
)

// graphcdNamespace holds the Applications, settings and Leases.
const graphcdNamespace = "graphcd"

// shards is how many controller shards run, each with a standby.
const shards = 2

// installation is graphcd's split roles on the local cluster, as
// deploy/ha runs them.
type installation struct {
	redis      *localredis.Server
	redisURL   string
	secretFile string // the key that signs what goes through Redis
	git        *repo
	// repoTarget is the gRPC target of the repository servers: a name
	// that resolves to both, like a headless Service.
	repoTarget  string
	repoServers []*role
	controllers [shards][]*role // two replicas per shard
	servers     []*role
	serverURLs  []string
	apps        client.Client
	admin       string // the admin's password
	webhooks    atomic.Int64
}

// install starts every role and waits until each serves.
func install(t *testing.T) *installation {
	t.Helper()
	in := &installation{}
	run := exec.CommandContext(t.Context(), graphcdBin, "install", "crds", "--kubeconfig", cluster.Kubeconfig)
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("graphcd install crds: %v\n%s", err, out)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: graphcdNamespace}}
	if _, err := cluster.Client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var err error
	if in.apps, err = client.New(cluster.Config, client.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}

	if in.redis, err = localredis.Start(t.Context()); err != nil {
		t.Fatalf("start redis: %v", err)
	}
	t.Cleanup(func() { _ = in.redis.Stop() })
	in.redisURL = "redis://:" + in.redis.Password + "@" + in.redis.Addr
	in.secretFile = filepath.Join(t.TempDir(), "redis.key")
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	if err := os.WriteFile(in.secretFile, key, 0o600); err != nil {
		t.Fatal(err)
	}

	in.git = newRepo(t)

	// Two repository servers on the same port of two loopback addresses,
	// behind one name.
	port := freePort(t)
	ips := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")}
	for i, ip := range ips {
		metrics := "127.0.0.1:" + strconv.Itoa(freePort(t))
		r := &role{name: fmt.Sprintf("repo-server-%d", i), health: "http://" + metrics + "/healthz", env: memoryEnv(), args: []string{
			"repo-server", "--listen", netip.AddrPortFrom(ip, uint16(port)).String(), "--plaintext",
			"--redis", in.redisURL, "--metrics-listen", metrics, "--log-format", "text",
		}}
		in.repoServers = append(in.repoServers, r)
	}
	const repoName = "repo-server.graphcd.test"
	in.repoTarget = "dns://" + serveDNS(t, repoName, ips...) + "/" + repoName + ":" + strconv.Itoa(port)
	shared := []string{"--kubeconfig", cluster.Kubeconfig, "--namespace", graphcdNamespace, "--log-format", "text",
		"--repo-server-addr", in.repoTarget, "--repo-server-plaintext",
		"--redis", in.redisURL, "--redis-secret-file", in.secretFile}
	for shard := range shards {
		for replica := range 2 {
			metrics := "127.0.0.1:" + strconv.Itoa(freePort(t))
			in.controllers[shard] = append(in.controllers[shard], &role{
				name:   fmt.Sprintf("controller-%d-%d", shard, replica),
				health: "http://" + metrics + "/healthz",
				env:    memoryEnv(),
				args: append([]string{"controller", "--shards", strconv.Itoa(shards), "--shard", strconv.Itoa(shard),
					"--metrics-listen", metrics}, shared...),
			})
		}
	}
	for i := range 2 {
		addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
		in.serverURLs = append(in.serverURLs, "http://"+addr)
		in.servers = append(in.servers, &role{name: fmt.Sprintf("server-%d", i), health: "http://" + addr + "/readyz", env: memoryEnv(),
			args: append([]string{"server", "--insecure", "--controller=false", "--listen", addr}, shared...)})
	}
	for _, r := range in.all() {
		r.start(t)
		t.Cleanup(r.stop)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, r := range in.all() {
				t.Logf("log of %s:\n%s", r.name, lastLines(r.log(), 60))
			}
		}
	})
	secret, err := cluster.Client.CoreV1().Secrets(graphcdNamespace).Get(t.Context(), "graphcd-initial-admin-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("initial admin secret: %v", err)
	}
	in.admin = string(secret.Data["password"])
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
	server := in.serverURLs[int(in.webhooks.Add(1))%len(in.serverURLs)]
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

// all returns every graphcd role.
func (in *installation) all() []*role {
	all := append([]*role{}, in.repoServers...)
	for _, replicas := range in.controllers {
		all = append(all, replicas...)
	}
	return append(all, in.servers...)
}

// role is the role called name.
func (in *installation) role(name string) *role {
	for _, r := range in.all() {
		if r.name == name {
			return r
		}
	}
	panic("no role " + name)
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
func (in *installation) leader(t *testing.T, shard int) (leader, standby *role) {
	t.Helper()
	name := controller.LeaseName(shard)
	waitFor(t, 2*time.Minute, "a leader of shard "+strconv.Itoa(shard), func() (bool, string) {
		holder := leaseHolder(t, name)
		for i, r := range in.controllers[shard] {
			if r.running() && holder != "" && holder == r.leaseIdentity() {
				leader, standby = r, in.controllers[shard][1-i]
				return true, ""
			}
		}
		return false, "Lease held by " + strconv.Quote(holder)
	})
	return leader, standby
}

// leaseHolder returns the holder of the Lease name, "" when none.
func leaseHolder(t *testing.T, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, err := cluster.Client.CoordinationV1().Leases(graphcdNamespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// checkNoPanics fails the test for every panic any role logged.
func (in *installation) checkNoPanics(t *testing.T) {
	t.Helper()
	for _, r := range in.all() {
		if p := r.panics(); len(p) > 0 {
			t.Errorf("%s panicked: %q", r.name, p)
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
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
