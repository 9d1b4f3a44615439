//go:build integration

package main

// This file sorts after server_integration_test.go on purpose: its tests
// install the CRDs, which TestServerAgainstCluster needs absent at its
// start.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi" //nolint:gosec // G504: Go 1.26 is not affected; serves git http-backend on loopback
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
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
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// shardNamespace holds the Applications and the Leases of these tests.
const shardNamespace = "graphcd"

// Two replicas of one shard against one cluster: exactly one holds the
// Lease and reconciles every app while the other stands by with no cluster
// cache and no reconcile; when the leader is stopped with SIGTERM, the
// standby takes the Lease and reconciles a newly created app.
func TestControllerReplicasElectOneLeader(t *testing.T) {
	env := newShardEnv(t)
	a, b := env.start(t), env.start(t)
	lease := controller.LeaseName(0)
	holder := env.waitLeaseHolder(t, lease, a.identity, b.identity)
	leader, standby := a, b
	if holder == b.identity {
		leader, standby = b, a
	}

	apps := []string{env.createApp(t, "elect-a"), env.createApp(t, "elect-b"), env.createApp(t, "elect-c")}
	for _, name := range apps {
		env.waitReconciled(t, name)
	}
	poll(t, "the leader to count its reconciles", func() (bool, string) {
		n := leader.metric(t, "graphcd_app_reconciles_total", `shard="0"`)
		return n >= float64(len(apps)), fmt.Sprintf("graphcd_app_reconciles_total = %v", n)
	})
	if got := env.leaseHolder(t, lease); got != leader.identity {
		t.Fatalf("Lease %s held by %q after the reconciles, want the leader %q", lease, got, leader.identity)
	}
	for _, c := range []struct {
		series, labels string
		want           float64
	}{
		{"graphcd_cluster_cache_running", `server="` + controller.InClusterServer + `"`, 1},
		{"leader_election_master_status", `name="` + lease + `"`, 1},
	} {
		if got := leader.metric(t, c.series, c.labels); got != c.want {
			t.Errorf("leader: %s{%s} = %v, want %v", c.series, c.labels, got, c.want)
		}
	}
	if got := leader.metric(t, "graphcd_repo_renders_total", ""); got < 1 {
		t.Errorf("leader: graphcd_repo_renders_total = %v, want the apps' renders", got)
	}
	for _, series := range []string{"graphcd_app_reconciles_total", "graphcd_cluster_cache_running", "controller_runtime_reconcile_total", "graphcd_repo_renders_total"} {
		if got := standby.metric(t, series, ""); got != 0 {
			t.Errorf("standby: %s = %v while the leader runs, want 0", series, got)
		}
	}
	if code, body := get(t, standby.base+"/healthz"); code != http.StatusOK {
		t.Errorf("standby /healthz = %d %q, want 200", code, body)
	}

	if err := leader.stop(); err != nil {
		t.Fatalf("leader after SIGTERM: %v, want exit 0; logs:\n%s", err, leader.logs)
	}
	env.waitLeaseHolder(t, lease, standby.identity)
	late := env.createApp(t, "elect-late")
	env.waitReconciled(t, late)
	poll(t, "the new leader to count its reconciles", func() (bool, string) {
		n := standby.metric(t, "graphcd_app_reconciles_total", `shard="0"`)
		return n > 0, fmt.Sprintf("graphcd_app_reconciles_total = %v", n)
	})
	if got := standby.metric(t, "graphcd_cluster_cache_running", ""); got != 1 {
		t.Errorf("new leader: graphcd_cluster_cache_running = %v, want 1", got)
	}
	for _, want := range []string{"leading the shard", "starting cluster cache"} {
		if !strings.Contains(standby.logs.String(), want) {
			t.Errorf("new leader's logs lack %q:\n%s", want, standby.logs)
		}
	}
}

// With --shards 2, the replica whose shard owns the in-cluster destination
// reconciles every app, and the other one, leading its own shard and
// seeing every app, reconciles none and runs no cluster cache.
func TestControllerShardsSplitClusters(t *testing.T) {
	env := newShardEnv(t)
	owner, err := controller.ShardOf(controller.InClusterServer, 2)
	if err != nil {
		t.Fatal(err)
	}
	other := 1 - owner
	replicas := map[int]*replica{}
	for _, shard := range []int{owner, other} {
		replicas[shard] = env.start(t, "--shards", "2", "--shard", strconv.Itoa(shard))
	}
	for shard, r := range replicas {
		env.waitLeaseHolder(t, controller.LeaseName(shard), r.identity)
	}

	apps := []string{env.createApp(t, "shard-a"), env.createApp(t, "shard-b"), env.createApp(t, "shard-c")}
	for _, name := range apps {
		env.waitReconciled(t, name)
	}
	o, x := replicas[owner], replicas[other]
	poll(t, "the other shard to look at every app", func() (bool, string) {
		n := x.metric(t, "controller_runtime_reconcile_total", `controller="application"`)
		return n >= float64(len(apps)), fmt.Sprintf("controller_runtime_reconcile_total{controller=\"application\"} = %v", n)
	})
	poll(t, "the owning shard to count its reconciles", func() (bool, string) {
		n := o.metric(t, "graphcd_app_reconciles_total", `shard="`+strconv.Itoa(owner)+`"`)
		return n >= float64(len(apps)), fmt.Sprintf("graphcd_app_reconciles_total = %v", n)
	})
	if got := o.metric(t, "graphcd_cluster_cache_running", ""); got != 1 {
		t.Errorf("owning shard %d: graphcd_cluster_cache_running = %v, want 1", owner, got)
	}
	for _, series := range []string{"graphcd_app_reconciles_total", "graphcd_cluster_cache_running"} {
		if got := x.metric(t, series, ""); got != 0 {
			t.Errorf("shard %d: %s = %v, want 0 (it owns no cluster)", other, series, got)
		}
	}
	if got := x.metric(t, "leader_election_master_status", `name="`+controller.LeaseName(other)+`"`); got != 1 {
		t.Errorf("shard %d does not lead its own Lease (leader_election_master_status = %v)", other, got)
	}
	if !strings.Contains(x.logs.String(), "owns no destination cluster") {
		t.Errorf("shard %d does not say it owns no cluster; logs:\n%s", other, x.logs)
	}
}

// shardEnv is what the tests share: the binary, CRDs and namespace, a Git
// server with one app directory, and a client for Applications.
type shardEnv struct {
	bin     string
	repoURL string
	apps    client.Client
}

func newShardEnv(t *testing.T) *shardEnv {
	t.Helper()
	env := &shardEnv{bin: buildBinary(t)}
	install := exec.CommandContext(t.Context(), env.bin, "install", "crds", "--kubeconfig", cluster.Kubeconfig)
	install.Env = binaryEnv()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("graphcd install crds: %v\n%s", err, out)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shardNamespace}}
	if _, err := cluster.Client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var err error
	if env.apps, err = client.New(cluster.Config, client.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		"app/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n",
	})
	env.repoURL = serveGit(t, dir)
	return env
}

// serveGit serves a bare clone of the working copy dir over smart HTTP
// (git http-backend) on loopback and returns its URL.
func serveGit(t *testing.T, dir string) string {
	t.Helper()
	url, _ := serveGitBare(t, dir)
	return url
}

// serveGitBare is serveGit that also returns the bare clone's directory,
// which later commits of dir can be pushed to.
func serveGitBare(t *testing.T, dir string) (url, bare string) {
	t.Helper()
	root := t.TempDir()
	clone := exec.CommandContext(t.Context(), "git", "clone", "-q", "--bare", dir, filepath.Join(root, "apps.git"))
	clone.Env = append(os.Environ(), "HOME="+root, "GIT_CONFIG_NOSYSTEM=1")
	if out, err := clone.CombinedOutput(); err != nil {
		t.Fatalf("git clone --bare: %v\n%s", err, out)
	}
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git CLI not installed")
	}
	handler := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"}, Env: []string{
		"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "HOME=" + root, "GIT_CONFIG_NOSYSTEM=1",
	}}
	lis, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + lis.Addr().String() + "/apps.git", filepath.Join(root, "apps.git")
}

// createApp creates an Application of the test repository's app directory
// with a destination namespace of its own, deleted when the test ends.
func (env *shardEnv) createApp(t *testing.T, name string) string {
	t.Helper()
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: shardNamespace},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: env.repoURL, Path: "app", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Name: controller.InClusterName, Namespace: cluster.Namespace(t)},
		},
	}
	if err := env.apps.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.apps.Delete(context.Background(), app) })
	return name
}

// waitReconciled waits until the app's status shows a comparison with the
// repository: a revision and a sync status, stamped with reconciledAt.
func (env *shardEnv) waitReconciled(t *testing.T, name string) {
	t.Helper()
	poll(t, "app "+name+" to be reconciled", func() (bool, string) {
		var app v1alpha1.Application
		if err := env.apps.Get(t.Context(), client.ObjectKey{Namespace: shardNamespace, Name: name}, &app); err != nil {
			return false, err.Error()
		}
		s := app.Status
		return s.ReconciledAt != nil && s.Sync.Revision != "" && s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync,
			fmt.Sprintf("status %+v", s)
	})
}

// leaseHolder returns the holder of the Lease name, "" when nobody holds
// it or it does not exist.
func (env *shardEnv) leaseHolder(t *testing.T, name string) string {
	t.Helper()
	l, err := cluster.Client.CoordinationV1().Leases(shardNamespace).Get(t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// waitLeaseHolder waits until one of identities holds the Lease name and
// returns it.
func (env *shardEnv) waitLeaseHolder(t *testing.T, name string, identities ...string) string {
	t.Helper()
	var holder string
	poll(t, "Lease "+name+" to be held by one of "+strings.Join(identities, ", "), func() (bool, string) {
		holder = env.leaseHolder(t, name)
		for _, id := range identities {
			if holder == id {
				return true, ""
			}
		}
		return false, "holder " + strconv.Quote(holder)
	})
	return holder
}

// replica is one `graphcd controller` process.
type replica struct {
	cmd      *exec.Cmd
	logs     *syncBuffer
	base     string // http://host:port of /metrics and /healthz
	identity string
	exited   chan struct{}
	err      error // set before exited closes
}

var identityRE = regexp.MustCompile(`msg="application controller running" .*identity=(\S+)`)

// start runs `graphcd controller` with args (leader election stays on)
// against the test cluster and returns once it logged its Lease identity
// and serves /healthz. The process is stopped with SIGTERM when the test
// ends, so that it releases its Lease for the next test.
func (env *shardEnv) start(t *testing.T, args ...string) *replica {
	t.Helper()
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	args = append([]string{"controller", "--kubeconfig", cluster.Kubeconfig, "--namespace", shardNamespace,
		"--metrics-listen", addr, "--log-format", "text"}, args...)
	// Not t.Context(): its end would kill the process before the cleanup
	// below stops it gracefully.
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), env.bin, args...)
	cmd.Env = binaryEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &replica{cmd: cmd, logs: &syncBuffer{}, base: "http://" + addr, exited: make(chan struct{})}
	announced := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			r.logs.WriteString(lines.Text() + "\n")
			if m := identityRE.FindStringSubmatch(lines.Text()); m != nil {
				announced <- m[1]
			}
		}
		r.err = cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() {
		if err := r.stop(); err != nil && !errors.Is(err, errStopped) {
			t.Logf("graphcd controller %s: %v", addr, err)
		}
	})
	select {
	case r.identity = <-announced:
	case <-r.exited:
		t.Fatalf("graphcd controller exited at start: %v; logs:\n%s", r.err, r.logs)
	}
	poll(t, "graphcd controller to serve /healthz", func() (bool, string) {
		resp, err := http.Get(r.base + "/healthz")
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return r
}

// errStopped is stop's answer for a process that already exited.
var errStopped = errors.New("already stopped")

// stop sends SIGTERM and waits for the process to exit, killing it if it
// does not within a minute. It returns the process's exit error.
func (r *replica) stop() error {
	select {
	case <-r.exited:
		return errStopped
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(time.Minute):
		_ = r.cmd.Process.Kill()
		<-r.exited
	}
	return r.err
}

// metric sums, over the series of name whose labels contain labels, the
// values /metrics reports; a series not reported counts as 0.
func (r *replica) metric(t *testing.T, name, labels string) float64 {
	t.Helper()
	code, body := get(t, r.base+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET %s/metrics = %d", r.base, code)
	}
	var sum float64
	for line := range strings.Lines(body) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), name)
		if !ok || rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		series, value, ok := strings.Cut(rest, " ")
		if !ok || !strings.Contains(series, labels) {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}

// poll checks cond every 200 ms until it holds, failing the test with
// cond's last word after a generous two minutes.
func poll(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %s", what, why)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
