//go:build integration

package security

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/testenv/gitserver"
	"github.com/graphcd/graphcd/internal/testenv/graphcdbin"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/testenv/localredis"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// Markers that stand for secrets: each appears only in a Secret of the
// repository or in a credential sent to the API, so finding one in a log,
// an error, an event or a diff is a leak.
const (
	secretMarker   = "s3cr3t-Value-7f3a"
	repoPassword   = "repo-Pa55-9c1e"
	tenantPassword = "tenant-Pa55-41d2"
	inClusterURL   = "https://kubernetes.default.svc"
)

var markers = []string{secretMarker, repoPassword, tenantPassword}

// env is one running graphcd server with two tenants: alice may do
// anything to the applications of project team-a (destination namespace
// nsA), bob to those of team-b (nsB); admin is the built-in admin.
type env struct {
	bin, base string
	ns        string // graphcd's namespace
	nsA, nsB  string // the tenants' destination namespaces
	repo      string // the git repository every project permits
	logs      *syncBuffer
	kube      client.Client
	redis     *redis.Client // the Redis the server shares state through
	tokens    map[string]string
	secretKey []byte // server.secretkey, to forge tokens signed right
}

// repoFiles is the repository the tenants deploy from: good objects and
// hostile ones, one directory each; tenantNS is alice's namespace and
// otherNS bob's, which her manifests reach into.
func repoFiles(tenantNS, otherNS string) map[string]string {
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  a: b\n"
	}
	laughs := "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		laughs += fmt.Sprintf("%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n", n, n, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = n
	}
	return map[string]string{
		"good/cm.yaml": cm("good"),
		"bomb/bomb.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  x: y\n---\n" +
			laughs + "kind: ConfigMap\napiVersion: v1\nmetadata: {name: laughs}\n",
		"secret/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  password: " + secretMarker + "\n",
		"hook-cluster/hook.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: escalate-hook\n" +
			"  annotations:\n    argocd.argoproj.io/hook: PreSync\nrules:\n- apiGroups: ['*']\n  resources: ['*']\n  verbs: ['*']\n",
		"hook-cluster/cm.yaml":   cm("after-hook"),
		"hook-otherns/hook.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: planted\n  namespace: " + otherNS + "\n  annotations:\n    argocd.argoproj.io/hook: PreSync\ndata:\n  a: b\n",
		"hook-otherns/cm.yaml":   cm("after-hook"),
		"chart/Chart.yaml":       "apiVersion: v2\nname: chart\nversion: 0.1.0\n",
		"chart/values.yaml":      "name: chart\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n" +
			"data:\n  leak: {{ .Values.leak | default \"none\" | quote }}\n",
		"escape/README": "the symlink beside this file points out of the checkout\n",
		"cluster-escape/role.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: tenant-escape\n" +
			"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\n" +
			"subjects:\n- {kind: ServiceAccount, name: deployer, namespace: " + tenantNS + "}\n",
		"cluster-escape/cm.yaml":       cm("wide"),
		"neighbour/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: planted-by-a\n  namespace: " + otherNS + "\ndata:\n  a: b\n",
		"archive/Chart.yaml":           "apiVersion: v2\nname: archive\nversion: 0.1.0\n",
		"archive/charts/dep-0.1.0.tgz": gzipBomb(),
	}
}

// startEnv builds graphcd, prepares graphcd's namespace (accounts, RBAC,
// projects) and starts `graphcd server` with its controller.
func startEnv(t *testing.T) *env {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	kube, err := client.New(cluster.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{bin: buildGraphcd(t), ns: cluster.Namespace(t), nsA: cluster.Namespace(t), nsB: cluster.Namespace(t),
		logs: &syncBuffer{}, kube: kube, tokens: map[string]string{}}
	e.run(t, "install", "crds", "--kubeconfig", cluster.Kubeconfig)

	dir, _ := reposervertest.CommitFiles(t, repoFiles(e.nsA, e.nsB))
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "escape", "cm.yaml")); err != nil {
		t.Fatal(err)
	}
	reposervertest.CommitMore(t, dir, map[string]string{"escape/README": "a symlink to /etc/hostname\n"})
	e.repo = gitserver.Serve(t, dir, gitserver.Options{})

	hash := func(pw string) string {
		h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		return string(h)
	}
	e.create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "graphcd-cm"}, Data: map[string]string{
		"accounts.alice": "login", "accounts.bob": "login", "accounts.dave": "login", "accounts.dave.enabled": "false",
		// Every sync runs as the project's service account for the
		// destination, which may write only its own namespace.
		"application.sync.impersonation.enabled": "true",
	}})
	e.create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "graphcd-secret"}, StringData: map[string]string{
		"admin.password": hash(tenantPassword), "accounts.alice.password": hash(tenantPassword), "accounts.bob.password": hash(tenantPassword),
		"accounts.dave.password": hash(tenantPassword),
	}})
	e.create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "graphcd-rbac-cm"}, Data: map[string]string{
		"policy.csv": "p, alice, applications, *, team-a/*, allow\np, alice, projects, get, team-a, allow\n" +
			"p, alice, applications, *, team-wide/*, allow\np, alice, clusters, *, team-a/*, allow\n" +
			"p, bob, applications, *, team-b/*, allow\np, bob, projects, get, team-b, allow\np, bob, clusters, *, team-b/*, allow\n",
	}})
	// team-wide is alice's too and, wrongly, permits every cluster-scoped
	// kind and bob's namespace: only the rights of the service account it
	// names for her namespace stand between her and the cluster.
	for team, dest := range map[string]string{"team-a": e.nsA, "team-b": e.nsB, "team-wide": e.nsA} {
		proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: team, Namespace: e.ns}, Spec: v1alpha1.AppProjectSpec{
			SourceRepos:  []string{e.repo},
			Destinations: []v1alpha1.ApplicationDestination{{Server: inClusterURL, Namespace: dest}},
			DestinationServiceAccounts: []v1alpha1.ApplicationDestinationServiceAccount{
				{Server: inClusterURL, Namespace: dest, DefaultServiceAccount: "deployer"},
			},
		}}
		if team == "team-wide" {
			proj.Spec.ClusterResourceWhitelist = []metav1.GroupKind{{Group: "*", Kind: "*"}}
			proj.Spec.Destinations = append(proj.Spec.Destinations, v1alpha1.ApplicationDestination{Server: inClusterURL, Namespace: e.nsB})
		}
		if err := kube.Create(t.Context(), proj); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range []string{e.nsA, e.nsB} {
		deployer(t, ns)
	}

	// Redis carries the resource trees between the controller and the API,
	// signed with a key an attacker who reaches Redis does not have.
	rds, err := localredis.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rds.Stop() })
	e.redis = redis.NewClient(&redis.Options{Addr: rds.Addr, Password: rds.Password})
	t.Cleanup(func() { _ = e.redis.Close() })
	redisKey := filepath.Join(t.TempDir(), "redis.key")
	if err := os.WriteFile(redisKey, []byte("security-suite-redis-signing-key-0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}

	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	e.base = "http://127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), e.bin, "server", "--insecure", "--kubeconfig", cluster.Kubeconfig,
		"--namespace", e.ns, "--listen", "127.0.0.1:"+strconv.Itoa(port), "--log-format", "text", "--log-level", "debug",
		"--trusted-proxies", "127.0.0.9", "--redis", rds.Addr, "--redis-password", rds.Password, "--redis-secret-file", redisKey)
	cmd.Env = binaryEnv()
	cmd.Stdout, cmd.Stderr = e.logs, e.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			if f, err := os.CreateTemp("", "graphcd-security-*.log"); err == nil {
				_, _ = f.WriteString(e.logs.String())
				_ = f.Close()
				t.Logf("the server's log: %s", f.Name())
			}
		}
	})
	poll(t, "graphcd server to be ready", func() (bool, string) {
		resp, err := http.Get(e.base + "/readyz")
		if err != nil {
			return false, fmt.Sprintf("%v\n%s", err, e.logs)
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	for _, user := range []string{"admin", "alice", "bob"} {
		code, body := e.login(t, http.DefaultClient, user, tenantPassword)
		var reply struct{ Token string }
		if code != http.StatusOK || json.Unmarshal([]byte(body), &reply) != nil || reply.Token == "" {
			t.Fatalf("login %s: %d %s", user, code, body)
		}
		e.tokens[user] = reply.Token
	}
	sec, err := cluster.Client.CoreV1().Secrets(e.ns).Get(t.Context(), "graphcd-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.secretKey = sec.Data["server.secretkey"]
	if len(e.secretKey) == 0 {
		t.Fatal("graphcd-secret has no server.secretkey after the server started")
	}
	return e
}

// deployer creates the ServiceAccount deployer in namespace, allowed
// everything in that namespace and nothing elsewhere.
func deployer(t *testing.T, namespace string) {
	t.Helper()
	ctx, core, rbac := t.Context(), cluster.Client.CoreV1(), cluster.Client.RbacV1()
	if _, err := core.ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "deployer"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	if _, err := rbac.Roles(namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "deployer"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: namespace}}}
	if _, err := rbac.RoleBindings(namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// buildGraphcd builds the graphcd binary into a temporary directory.
func buildGraphcd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "graphcd")
	if err := graphcdbin.Build(t.Context(), bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// binaryEnv is the test's environment without Kubernetes or GRAPHCD_*
// settings, so the binary sees only its flags.
func binaryEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GRAPHCD_") || name == "KUBECONFIG" || name == "KUBERNETES_SERVICE_HOST" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func (e *env) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), e.bin, args...)
	cmd.Env = binaryEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("graphcd %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// create creates a ConfigMap or Secret in graphcd's namespace.
func (e *env) create(t *testing.T, obj client.Object) {
	t.Helper()
	var err error
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		_, err = cluster.Client.CoreV1().ConfigMaps(e.ns).Create(t.Context(), o, metav1.CreateOptions{})
	case *corev1.Secret:
		_, err = cluster.Client.CoreV1().Secrets(e.ns).Create(t.Context(), o, metav1.CreateOptions{})
	default:
		t.Fatalf("create %T", obj)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// login posts a password login with c and returns the status and body.
func (e *env) login(t *testing.T, c *http.Client, user, password string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"username": user, "password": password})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.base+"/auth/login", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return do(t, c, req)
}

func do(t *testing.T, c *http.Client, req *http.Request) (int, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(raw)
}

// gqlError is one error of a GraphQL answer.
type gqlError struct {
	Message    string
	Extensions struct{ Code string }
}

// answer is a GraphQL answer with its HTTP status and raw body.
type answer struct {
	status int
	body   string
	Data   json.RawMessage
	Errors []gqlError
}

// refused reports whether the answer is the refusal wanted: an error with
// code (or HTTP status 401 for "UNAUTHENTICATED") whose message contains
// text; it returns what was seen otherwise.
func (a answer) refused(code, text string) (bool, string) {
	if code == "UNAUTHENTICATED" {
		return a.status == http.StatusUnauthorized && strings.Contains(a.body, text), fmt.Sprintf("%d %s", a.status, a.body)
	}
	for _, e := range a.Errors {
		if e.Extensions.Code == code && strings.Contains(e.Message, text) {
			return true, ""
		}
	}
	return false, fmt.Sprintf("%d %s", a.status, a.body)
}

// ask posts a GraphQL document as the holder of token ("" for none).
func (e *env) ask(t *testing.T, token, query string, vars map[string]any) answer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.base+"/api/graphql", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	var a answer
	a.status, a.body = do(t, http.DefaultClient, req)
	_ = json.Unmarshal([]byte(a.body), &a)
	return a
}

// mustAsk is ask for a request that must succeed.
func (e *env) mustAsk(t *testing.T, token, query string, vars map[string]any) json.RawMessage {
	t.Helper()
	a := e.ask(t, token, query, vars)
	if a.status != http.StatusOK || len(a.Errors) > 0 {
		t.Fatalf("%s: %d %s", strings.Fields(query)[0], a.status, a.body)
	}
	return a.Data
}

const (
	createApp = `mutation($m: String!, $upsert: Boolean!) { createApplication(input: {manifest: $m, upsert: $upsert}) { name project } }`
	syncApp   = `mutation($name: String!) { syncApplication(input: {application: {name: $name}}) { name } }`
)

// manifest is an Application of project in graphcd's namespace that
// deploys dir of the repository into namespace dest.
func (e *env) manifest(name, project, dir, dest string) string {
	return fmt.Sprintf(`apiVersion: graphcd.io/v1alpha1
kind: Application
metadata:
  name: %s
  namespace: %s
spec:
  project: %s
  source: {repoURL: %q, path: %q, targetRevision: main}
  destination: {server: %q, namespace: %s}
`, name, e.ns, project, e.repo, dir, inClusterURL, dest)
}

// createAs creates an application through the API as user; it must work.
func (e *env) createAs(t *testing.T, user, name, project, dir, dest string) {
	t.Helper()
	e.mustAsk(t, e.tokens[user], createApp, map[string]any{"m": e.manifest(name, project, dir, dest), "upsert": false})
}

// app returns the Application name in graphcd's namespace, nil when there
// is none.
func (e *env) app(t *testing.T, name string) *v1alpha1.Application {
	t.Helper()
	var app v1alpha1.Application
	err := e.kube.Get(t.Context(), client.ObjectKey{Namespace: e.ns, Name: name}, &app)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return &app
}

// syncAndWait syncs app name as user and waits for the operation to end,
// returning its final state.
func (e *env) syncAndWait(t *testing.T, user, name string) *v1alpha1.OperationState {
	t.Helper()
	poll(t, "app "+name+" to be compared", func() (bool, string) {
		app := e.app(t, name)
		return app != nil && app.Status.Sync.Status != "" && app.Status.Sync.Status != v1alpha1.SyncStatusCodeUnknown, fmt.Sprintf("%+v", app.Status.Sync)
	})
	e.mustAsk(t, e.tokens[user], syncApp, map[string]any{"name": name})
	var state *v1alpha1.OperationState
	poll(t, "the sync of "+name+" to end", func() (bool, string) {
		app := e.app(t, name)
		if app == nil || app.Status.OperationState == nil {
			return false, "no operation state"
		}
		state = app.Status.OperationState
		return state.Phase != "" && state.Phase != v1alpha1.OperationRunning && state.Phase != v1alpha1.OperationTerminating, string(state.Phase)
	})
	return state
}

// poll checks cond every 200 ms until it holds, failing the test with
// cond's last word after a generous three minutes.
func poll(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
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

// syncBuffer collects the server's output from its two streams.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// gzipBomb is a chart archive of about 200 KB whose one file expands to
// 200 MiB of zeros.
func gzipBomb() string {
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	const size = 200 << 20
	_ = tw.WriteHeader(&tar.Header{Name: "dep/values.yaml", Mode: 0o644, Size: size})
	zeros := make([]byte, 1<<20)
	for range size / len(zeros) {
		_, _ = tw.Write(zeros)
	}
	_ = tw.Close()
	_ = gz.Close()
	return buf.String()
}

// osHostname is the content of /etc/hostname, which the repository's
// symlink points at.
func osHostname() (string, error) {
	b, err := os.ReadFile("/etc/hostname")
	return strings.TrimSpace(string(b)), err
}
