//go:build integration

package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/hack/demo/demorepo"
	"github.com/graphcd/graphcd/internal/testenv/install"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// syncTimeout bounds the wait for one sync of an app, its render and its
// resources' health included.
const syncTimeout = 4 * time.Minute

// TestSelfManage follows docs/install.md's "Self-management": graphcd
// syncs its own install (examples/self-manage) from Git, and a commit
// changing a setting, the Deployment's resources and then the image tag
// (an upgrade) is synced by graphcd itself, without losing the sessions,
// the keys graphcd wrote into graphcd-secret, or another app and its
// history; a restart, as an upgraded Pod makes, keeps them too.
//
// graphcd runs as the real binary outside the cluster (the Deployment it
// installs runs on KWOK nodes, whose Pods turn Ready without running), in
// a namespace of its own that the synced install targets.
func TestSelfManage(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	plainNS := cluster.Namespace(t)
	restrictPods(t, ns)
	apps := appClient(t)

	// The user's repository: graphcd's manifests (a fork, or a remote
	// reference in real life), the overlay of examples/self-manage, and an
	// ordinary app.
	src := t.TempDir()
	for _, dir := range []string{"deploy/base", "deploy/install", "deploy/crds", "deploy/components", "config/crd"} {
		// The test runs in deploy/.
		reposervertest.CopyTree(t, filepath.Join("..", filepath.FromSlash(dir)), filepath.Join(src, filepath.FromSlash(dir)))
	}
	ov := overlay{t: t, ns: ns, tag: "v0.3.0", url: "https://graphcd.example.com", banner: "managed by graphcd"}
	writeFile(t, filepath.Join(src, "graphcd", "kustomization.yaml"), ov.render())
	writeFile(t, filepath.Join(src, "plain", "objects.yaml"), plainManifests)
	repo, err := demorepo.Serve(t.TempDir(), os.DirFS(src), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(repo.Close)
	for _, kind := range []string{"clusterroles", "clusterrolebindings"} {
		t.Cleanup(func() {
			_ = cluster.Client.RbacV1().RESTClient().Delete().Resource(kind).Name("graphcd-server-" + ns).Do(context.Background()).Error()
		})
	}

	// Installed by hand first, as docs/install.md says: the overlay,
	// server-side, under the field manager of graphcd's syncs.
	applyAs(t, kustomize(t, filepath.Join(src, "graphcd")), "graphcd")

	srv := startServer(t, ns)
	poll(t, "the default AppProject", time.Minute, func(ctx context.Context) (bool, string) {
		return defaultProjectIn(ns)(ctx, ""), "none yet"
	})
	token := srv.login(t, ns)
	keys := secretData(t, ns, "graphcd-secret")
	for _, k := range []string{"server.secretkey", "admin.password", "tls.crt", "tls.key"} {
		if _, ok := keys[k]; !ok {
			t.Fatalf("graphcd-secret has no %s after the server started (keys %v)", k, keyNames(keys))
		}
	}

	// An ordinary app, applied client-side (the default), with history:
	// synced, a key written into its Secret by someone else, synced again.
	srv.createApp(t, token, fmt.Sprintf(plainApp, ns, repo.URL, plainNS))
	srv.sync(t, token, ns, "plain")
	first := waitSynced(t, apps, ns, "plain", "", 1)
	if _, err := cluster.Client.CoreV1().Secrets(plainNS).Patch(ctx, "plain-secret", types.MergePatchType,
		[]byte(`{"stringData":{"written":"by another writer"}}`), metav1.PatchOptions{FieldManager: "other-writer"}); err != nil {
		t.Fatal(err)
	}
	srv.sync(t, token, ns, "plain")
	plain := waitSynced(t, apps, ns, "plain", first.Status.Sync.Revision, 2)
	if got := secretData(t, plainNS, "plain-secret")["written"]; string(got) != "by another writer" {
		t.Fatalf("a client-side sync of a Secret without data removed the key another writer put there (now %q)", got)
	}

	// The self-management Application, as the example has it.
	srv.createApp(t, token, selfManageApp(t, ns, repo.URL))
	self := waitSynced(t, apps, ns, "graphcd", "", 1)
	check := func(t *testing.T, tag string) {
		t.Helper()
		checkInstalled(t, ns, tag)
		if got := srv.me(t, token); got != "admin" {
			t.Errorf("the session token now answers me = %q, want admin", got)
		}
		now := secretData(t, ns, "graphcd-secret")
		for k, v := range keys {
			if !bytes.Equal(now[k], v) {
				t.Errorf("graphcd-secret key %s changed or went away (keys now %v)", k, keyNames(now))
			}
		}
		if _, err := cluster.Client.CoreV1().Secrets(ns).Get(t.Context(), "graphcd-initial-admin-secret", metav1.GetOptions{}); err != nil {
			t.Errorf("graphcd-initial-admin-secret: %v", err)
		}
		got := &v1alpha1.Application{}
		if err := apps.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "plain"}, got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got.Status.History, plain.Status.History); diff != "" {
			t.Errorf("the other app's history changed (-got +want):\n%s", diff)
		}
		if got.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
			t.Errorf("the other app is %s, want Synced", got.Status.Sync.Status)
		}
	}
	check(t, "v0.3.0")
	if got := srv.settings(t); got.URL != ov.url || got.UIBannerContent != ov.banner {
		t.Errorf("settings %+v, want url %q and banner %q from Git", got, ov.url, ov.banner)
	}
	// A setting made outside Git, by kubectl edit or patch.
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Patch(ctx, "graphcd-cm", types.MergePatchType,
		[]byte(`{"data":{"ui.bannerurl":"https://status.example.com"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}

	steps := []struct {
		name   string
		change func(*overlay)
		check  func(t *testing.T)
	}{
		// A setting changed, one removed from Git.
		{"setting", func(o *overlay) { o.url, o.banner = "https://graphcd.changed.example.com", "" }, func(t *testing.T) {
			cm, err := cluster.Client.CoreV1().ConfigMaps(ns).Get(t.Context(), "graphcd-cm", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"url": "https://graphcd.changed.example.com", "ui.bannerurl": "https://status.example.com"}
			if diff := cmp.Diff(cm.Data, want); diff != "" {
				t.Errorf("graphcd-cm data after the sync (-got +want):\n%s", diff)
			}
			poll(t, "the server to serve the new settings", time.Minute, func(context.Context) (bool, string) {
				got := srv.settings(t)
				return got.URL == want["url"] && got.UIBannerContent == "", fmt.Sprintf("%+v", got)
			})
		}},
		{"resources", func(o *overlay) { o.cpu = "500m" }, func(t *testing.T) {
			d := deployment(t, ns)
			if got := d.Spec.Template.Spec.Containers[0].Resources.Requests.Cpu().String(); got != "500m" {
				t.Errorf("graphcd-server cpu request = %s after the sync, want 500m", got)
			}
		}},
		{"upgrade", func(o *overlay) { o.tag = "v0.4.0" }, func(*testing.T) {}},
	}
	history := 1
	for _, step := range steps {
		step.change(&ov)
		sha := commitAndPush(t, repo, "graphcd/kustomization.yaml", ov.render(), step.name)
		history++
		srv.refresh(t, token, ns, "graphcd")
		self = waitSynced(t, apps, ns, "graphcd", sha, history)
		if !t.Run(step.name, func(t *testing.T) {
			step.check(t)
			check(t, ov.tag)
		}) {
			t.FailNow()
		}
	}

	// graphcd restarts, as the upgraded Pod would: everything lives in
	// the Kubernetes API.
	appsBefore := srv.appHistories(t, token, ns)
	fingerprint := srv.fingerprint
	srv.stop()
	srv = startServer(t, ns)
	if srv.fingerprint != fingerprint {
		t.Errorf("after the restart the server serves another certificate")
	}
	if got := srv.me(t, token); got != "admin" {
		t.Errorf("after the restart the session token answers me = %q, want admin", got)
	}
	if diff := cmp.Diff(srv.appHistories(t, token, ns), appsBefore); diff != "" {
		t.Errorf("apps and history after the restart (-got +want):\n%s", diff)
	}
	check(t, ov.tag)
	if n := len(self.Status.History); n != len(steps)+1 {
		t.Errorf("the self-management app has %d history entries, want %d", n, len(steps)+1)
	}

	// Deleting the Application with its resources (the API's default)
	// leaves graphcd installed: every object says Delete=false.
	srv.gql(t, token, `mutation($n: String!, $ns: String) { deleteApplication(input: {application: {name: $n, namespace: $ns}}) }`,
		map[string]any{"n": "graphcd", "ns": ns}, nil)
	poll(t, "the self-management app to be deleted", syncTimeout, func(ctx context.Context) (bool, string) {
		err := apps.Get(ctx, client.ObjectKey{Namespace: ns, Name: "graphcd"}, &v1alpha1.Application{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
	check(t, ov.tag)
	for _, name := range []string{"applications.graphcd.io", "applicationsets.graphcd.io", "appprojects.graphcd.io"} {
		c, err := cluster.Client.Discovery().RESTClient().Get().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", name).DoRaw(ctx)
		if err != nil || !bytes.Contains(c, []byte(`"argocd.argoproj.io/sync-options":"Prune=false,Delete=false"`)) {
			t.Errorf("CRD %s after the app's deletion: %v, or without Prune=false,Delete=false", name, err)
		}
	}
}

// overlay is the user's graphcd/kustomization.yaml: the example with the
// test's namespace, tag, url and cpu request.
type overlay struct {
	t                         *testing.T
	ns, tag, url, banner, cpu string
}

func (o overlay) render() string {
	o.t.Helper()
	b, err := os.ReadFile("../examples/self-manage/kustomization.yaml")
	if err != nil {
		o.t.Fatal(err)
	}
	s := string(b)
	for _, r := range [][2]string{
		{"- https://github.com/graphcd/graphcd//deploy/install?ref=v0.3.0\n", "- ../deploy/install\n"},
		{"\nnamespace: graphcd\n", "\nnamespace: " + o.ns + "\n"},
		{"newTag: v0.3.0\n", "newTag: " + o.tag + "\n"},
		{"url: https://graphcd.example.com\n", "url: " + o.url + "\n"},
	} {
		if !strings.Contains(s, r[0]) {
			o.t.Fatalf("examples/self-manage/kustomization.yaml has no %q any more", r[0])
		}
		s = strings.Replace(s, r[0], r[1], 1)
	}
	// Cluster-wide names of this namespace's own, so that installs run
	// side by side.
	s += fmt.Sprintf(`- target: {kind: ClusterRole, name: graphcd-server}
  patch: |-
    - {op: replace, path: /metadata/name, value: graphcd-server-%[1]s}
- target: {kind: ClusterRoleBinding, name: graphcd-server}
  patch: |-
    - {op: replace, path: /metadata/name, value: graphcd-server-%[1]s}
    - {op: replace, path: /roleRef/name, value: graphcd-server-%[1]s}
`, o.ns)
	if o.banner != "" {
		s += fmt.Sprintf(`- patch: |-
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "graphcd-cm"}, "data": {"ui.bannercontent": %q}}
`, o.banner)
	}
	if o.cpu != "" {
		s += fmt.Sprintf(`- target: {kind: Deployment, name: graphcd-server}
  patch: |-
    - {op: replace, path: /spec/template/spec/containers/0/resources/requests/cpu, value: %s}
`, o.cpu)
	}
	return s
}

// plainManifests are the ordinary app's: a ConfigMap, and a Secret that
// Git ships without data, as graphcd-secret.
const plainManifests = `apiVersion: v1
kind: ConfigMap
metadata:
  name: plain
data:
  greeting: hello
---
apiVersion: v1
kind: Secret
metadata:
  name: plain-secret
type: Opaque
`

const plainApp = `apiVersion: graphcd.io/v1alpha1
kind: Application
metadata:
  name: plain
  namespace: %s
spec:
  project: default
  source:
    repoURL: %s
    path: plain
    targetRevision: main
  destination:
    server: https://kubernetes.default.svc
    namespace: %s
`

// selfManageApp is examples/self-manage/application.yaml pointed at the
// test's repository and namespace.
func selfManageApp(t *testing.T, ns, repoURL string) string {
	t.Helper()
	b, err := os.ReadFile("../examples/self-manage/application.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var app v1alpha1.Application
	if err := yaml.UnmarshalStrict(b, &app); err != nil {
		t.Fatal(err)
	}
	if len(app.Finalizers) != 0 {
		t.Errorf("the example carries finalizers %v: deleting it would delete graphcd", app.Finalizers)
	}
	app.Namespace = ns
	app.Spec.Source.RepoURL = repoURL
	app.Spec.Destination.Namespace = ns
	out, err := yaml.Marshal(&app)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// checkInstalled wants graphcd's install in ns, its Deployment running
// tag and ready.
func checkInstalled(t *testing.T, ns, tag string) {
	t.Helper()
	ctx := t.Context()
	core := cluster.Client.CoreV1()
	for _, name := range []string{"graphcd-cm", "graphcd-rbac-cm"} {
		if _, err := core.ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("ConfigMap %s: %v", name, err)
		}
	}
	if _, err := core.Services(ns).Get(ctx, "graphcd-server", metav1.GetOptions{}); err != nil {
		t.Errorf("Service graphcd-server: %v", err)
	}
	if _, err := core.ServiceAccounts(ns).Get(ctx, "graphcd-server", metav1.GetOptions{}); err != nil {
		t.Errorf("ServiceAccount graphcd-server: %v", err)
	}
	if _, err := cluster.Client.RbacV1().ClusterRoleBindings().Get(ctx, "graphcd-server-"+ns, metav1.GetOptions{}); err != nil {
		t.Errorf("ClusterRoleBinding graphcd-server-%s: %v", ns, err)
	}
	var d *appsv1.Deployment
	poll(t, "graphcd-server to roll out "+tag, readyTimeout, func(context.Context) (bool, string) {
		d = deployment(t, ns)
		return deploymentReady(d) && d.Spec.Template.Spec.Containers[0].Image == "ghcr.io/graphcd/graphcd:"+tag,
			fmt.Sprintf("image %s, status %+v", d.Spec.Template.Spec.Containers[0].Image, d.Status)
	})
	pods, err := core.Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=graphcd-server"})
	if err != nil {
		t.Fatal(err)
	}
	ready := 0
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil {
				ready++
			}
		}
	}
	if ready != 1 {
		t.Errorf("%d ready graphcd-server Pods, want 1", ready)
	}
}

// applyAs server-side-applies objs in order, as `kubectl apply
// --server-side --field-manager manager` would.
func applyAs(t *testing.T, objs []*unstructured.Unstructured, manager string) {
	t.Helper()
	if err := install.Apply(t.Context(), cluster.Config, manager, objs); err != nil {
		t.Fatal(err)
	}
}

func deployment(t *testing.T, ns string) *appsv1.Deployment {
	t.Helper()
	d, err := cluster.Client.AppsV1().Deployments(ns).Get(t.Context(), "graphcd-server", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// waitSynced waits until app's last operation succeeded with history
// entries in its history, at revision (any when ""), and the app is
// Synced and Healthy; it returns the app.
func waitSynced(t *testing.T, apps client.Client, ns, name, revision string, history int) *v1alpha1.Application {
	t.Helper()
	app := &v1alpha1.Application{}
	poll(t, fmt.Sprintf("app %s to be synced (history %d)", name, history), syncTimeout, func(ctx context.Context) (bool, string) {
		if err := apps.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, app); err != nil {
			return false, err.Error()
		}
		st := app.Status
		op := st.OperationState
		state := fmt.Sprintf("sync %s at %s, health %s, history %d, operation %+v, conditions %+v", st.Sync.Status, st.Sync.Revision, st.Health.Status, len(st.History), op, st.Conditions)
		return op != nil && op.Phase == v1alpha1.OperationSucceeded && len(st.History) == history &&
			(revision == "" || st.Sync.Revision == revision && st.History[len(st.History)-1].Revision == revision) &&
			st.Sync.Status == v1alpha1.SyncStatusCodeSynced && st.Health.Status == v1alpha1.HealthStatusHealthy, state
	})
	return app
}

func appClient(t *testing.T) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// restrictPods makes ns enforce the restricted Pod Security Standard, as
// applySet does.
func restrictPods(t *testing.T, ns string) {
	t.Helper()
	obj, err := cluster.Client.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obj.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	if _, err := cluster.Client.CoreV1().Namespaces().Update(t.Context(), obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func secretData(t *testing.T, ns, name string) map[string][]byte {
	t.Helper()
	s, err := cluster.Client.CoreV1().Secrets(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s.Data
}

// keyNames lists a map's keys, never its values.
func keyNames(m map[string][]byte) []string {
	var keys []string
	for k := range maps.Keys(m) {
		keys = append(keys, k)
	}
	return keys
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// commitAndPush changes one file in the repository's working copy,
// commits and pushes it, as a user would, and returns the commit.
func commitAndPush(t *testing.T, repo *demorepo.Repo, file, content, message string) string {
	t.Helper()
	writeFile(t, filepath.Join(repo.WorkDir, filepath.FromSlash(file)), content)
	var sha string
	for _, args := range [][]string{{"commit", "-q", "-am", message}, {"push", "-q"}, {"rev-parse", "HEAD"}} {
		cmd := exec.CommandContext(t.Context(), "git", args...)
		cmd.Dir = repo.WorkDir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		sha = strings.TrimSpace(string(out))
	}
	return sha
}

func mustBinary(t *testing.T) string {
	t.Helper()
	bin, err := graphcdBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// binaryEnv is the test's environment without graphcd's variables and
// KUBECONFIG, so that only the flags configure the binary.
func binaryEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GRAPHCD_") && !strings.HasPrefix(kv, "KUBECONFIG=") {
			env = append(env, kv)
		}
	}
	return env
}

// server is a `graphcd server` running as the cluster's administrator,
// over HTTPS with the certificate it keeps in graphcd-secret.
type server struct {
	base, fingerprint string
	client            *http.Client
	logs              *lockedBuffer
	stop              func()
}

func startServer(t *testing.T, ns string) *server {
	t.Helper()
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), mustBinary(t), "server", "--listen", "127.0.0.1:0",
		"--kubeconfig", cluster.Kubeconfig, "--namespace", ns, "--log-format", "text")
	cmd.Env = binaryEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{logs: &lockedBuffer{}}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			s.logs.add(lines.Text() + "\n")
		}
	}()
	stopped := false
	s.stop = func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Signal(syscall.SIGTERM)
			<-drained
			_ = cmd.Wait()
		}
	}
	t.Cleanup(s.stop)
	poll(t, "graphcd server to be ready", time.Minute, func(ctx context.Context) (bool, string) {
		logs := s.logs.String()
		return serverReady(ctx, logs), logs
	})
	logs := s.logs.String()
	s.base = "https://" + servingRE.FindStringSubmatch(logs)[1]
	s.fingerprint = certificateRE.FindStringSubmatch(logs)[1]
	s.client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, //nolint:gosec // VerifyPeerCertificate pins the logged certificate instead
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if sum := sha256.Sum256(raw[0]); hex.EncodeToString(sum[:]) != s.fingerprint {
				return errors.New("not the certificate the server logged")
			}
			return nil
		},
	}}}
	return s
}

// login logs in as admin with the initial password and returns the
// session token.
func (s *server) login(t *testing.T, ns string) string {
	t.Helper()
	var password []byte
	poll(t, "the initial admin password", time.Minute, func(ctx context.Context) (bool, string) {
		sec, err := cluster.Client.CoreV1().Secrets(ns).Get(ctx, "graphcd-initial-admin-secret", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		password = sec.Data["password"]
		return len(password) > 0, "no password"
	})
	body, _ := json.Marshal(map[string]string{"username": "admin", "password": string(password)})
	var got struct{ Token string }
	code, raw := s.post(t, "/auth/login", "", body)
	if code != http.StatusOK || json.Unmarshal(raw, &got) != nil || got.Token == "" {
		t.Fatalf("admin login: %d %s", code, raw)
	}
	return got.Token
}

func (s *server) post(t *testing.T, path, token string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, raw
}

// gql runs a GraphQL request and decodes its data into out; an error
// fails the test.
func (s *server) gql(t *testing.T, token, query string, vars map[string]any, out any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	code, raw := s.post(t, "/api/graphql", token, body)
	var resp struct {
		Data   json.RawMessage
		Errors []json.RawMessage
	}
	if code != http.StatusOK || json.Unmarshal(raw, &resp) != nil || len(resp.Errors) > 0 {
		t.Fatalf("GraphQL %s: %d %s", query, code, raw)
	}
	if out != nil {
		if err := json.Unmarshal(resp.Data, out); err != nil {
			t.Fatal(err)
		}
	}
}

func (s *server) me(t *testing.T, token string) string {
	t.Helper()
	var out struct{ Me struct{ Username string } }
	s.gql(t, token, `{ me { username } }`, nil, &out)
	return out.Me.Username
}

// publicSettings are those of graphcd-cm's keys the API shows anyone.
type publicSettings struct {
	URL             string
	UIBannerContent string
}

func (s *server) settings(t *testing.T) publicSettings {
	t.Helper()
	var out struct{ Settings publicSettings }
	s.gql(t, "", `{ settings { url uiBannerContent } }`, nil, &out)
	return out.Settings
}

func (s *server) createApp(t *testing.T, token, manifest string) {
	t.Helper()
	s.gql(t, token, `mutation($m: String!) { createApplication(input: {manifest: $m}) { name } }`, map[string]any{"m": manifest}, nil)
}

func (s *server) sync(t *testing.T, token, ns, name string) {
	t.Helper()
	s.gql(t, token, `mutation($n: String!, $ns: String) { syncApplication(input: {application: {name: $n, namespace: $ns}}) { name } }`,
		map[string]any{"n": name, "ns": ns}, nil)
}

// refresh asks for a comparison with Git now, rather than at the next
// periodic one, so that automated sync sees the new commit.
func (s *server) refresh(t *testing.T, token, ns, name string) {
	t.Helper()
	s.gql(t, token, `mutation($n: String!, $ns: String) { refreshApplication(input: {application: {name: $n, namespace: $ns}}) { name } }`,
		map[string]any{"n": name, "ns": ns}, nil)
}

// appHistory is what the API shows of an app and its deployments.
type appHistory struct {
	Name   string
	Status struct {
		Sync    struct{ Status, Revision string }
		History []struct {
			ID         int
			Revision   string
			DeployedAt string
		}
	}
}

func (s *server) appHistories(t *testing.T, token, ns string) []appHistory {
	t.Helper()
	var out struct {
		Applications struct{ Edges []struct{ Node appHistory } }
	}
	s.gql(t, token, `query($ns: String!) { applications(filter: {namespaces: [$ns]}) { edges { node {
		name status { sync { status revision } history { id revision deployedAt } } } } } }`, map[string]any{"ns": ns}, &out)
	var apps []appHistory
	for _, e := range out.Applications.Edges {
		apps = append(apps, e.Node)
	}
	if len(apps) != 2 {
		t.Errorf("the API lists %d apps, want 2 (plain, graphcd)", len(apps))
	}
	return apps
}

// poll calls done until it reports true, failing the test with its last
// description after timeout.
func poll(t *testing.T, what string, timeout time.Duration, done func(context.Context) (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, state := done(ctx)
		last = state
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v\nlast: %s", what, err, last)
	}
}
