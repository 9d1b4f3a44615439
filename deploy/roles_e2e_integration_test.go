//go:build integration

package deploy_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/hack/demo/demorepo"
	"github.com/graphcd/graphcd/internal/testenv/localredis"
)

// These tests run graphcd's roles as they run in the cluster, each with
// nothing but its ServiceAccount's rights, and use them: a login, a
// subscription, a sync of a sample app and a Git webhook through the API
// server. Then they make the requests each role must not make, for real,
// and want the Kubernetes API to refuse them.

// appTimeout bounds each wait for an app or an event; generous, for a
// loaded machine.
const appTimeout = 3 * time.Minute

// haEndToEnd runs deploy/ha's roles in ns: the repo-server with no
// Kubernetes credentials at all and mutual TLS from the Secrets the
// bootstrap made, the controller as graphcd-controller and the API server
// as graphcd-server, sharing live events through Redis. It syncs the
// guestbook through the API while a subscription watches, and sends a
// GitHub push. No process may be refused anything.
func haEndToEnd(t *testing.T, ns string) {
	ctx := t.Context()
	serverTLS := secretFiles(t, ns, "graphcd-repo-server-tls")
	clientTLS := secretFiles(t, ns, "graphcd-repo-server-client-tls")
	keys := secretFiles(t, ns, "graphcd-redis")
	redis, err := localredis.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = redis.Stop() })
	redisEnv := []string{"GRAPHCD_REDIS_PASSWORD=" + redis.Password}
	// GitHub's deliveries are signed: the server reads the secret from
	// graphcd-secret.
	hookSecret := setSecretKey(t, ns, "graphcd-secret", "webhook.github.secret")

	repoServer := start(t, ns, runOptions{env: redisEnv}, repoServerReady, "repo-server", "--listen", "127.0.0.1:0",
		"--tls-cert", serverTLS["tls.crt"], "--tls-key", serverTLS["tls.key"], "--tls-client-ca", serverTLS["ca.crt"],
		"--redis", redis.Addr, "--cache-secret-file", keys["cache.key"])
	// The certificate names the Service, not the loopback address.
	clientFlags := []string{
		"--repo-server-addr", repoServerRE.FindStringSubmatch(repoServer.logs.String())[1],
		"--repo-server-tls-server-name", "graphcd-repo-server",
		"--repo-server-ca-file", clientTLS["ca.crt"],
		"--repo-server-client-cert", clientTLS["tls.crt"], "--repo-server-client-key", clientTLS["tls.key"],
		"--redis", redis.Addr, "--redis-secret-file", keys["shared.key"],
	}
	ctl := start(t, ns, runOptions{sa: "graphcd-controller", env: redisEnv}, logged(`msg="application controller starting"`),
		append([]string{"controller", "--metrics-listen", "0", "--shards", "1"}, clientFlags...)...)
	// Ready means /readyz answered, and it checks the repo-server: mutual
	// TLS works.
	server := start(t, ns, runOptions{sa: "graphcd-server", env: redisEnv}, serverReady,
		append([]string{"server", "--listen", "127.0.0.1:0", "--controller=false"}, clientFlags...)...)

	api := login(t, ns, server)
	events := subscribeEvents(t, api, "guestbook")
	git, err := demorepo.Serve(t.TempDir(), os.DirFS("../hack/demo/apps"), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(git.Close)
	dest := cluster.Namespace(t)
	createApp(t, api, "guestbook", git.URL, dest)
	syncApp(t, api, "guestbook")
	app := waitApp(t, api, "guestbook", "Synced, Succeeded and Healthy", func(a *client.AppDetail) bool {
		st := a.Status
		return st.Sync.Status == client.SyncStatusCodeSynced && st.Health.Status == client.HealthStatusCodeHealthy &&
			st.OperationState != nil && st.OperationState.Phase == client.OperationPhaseSucceeded
	})
	if _, err := cluster.Client.AppsV1().Deployments(dest).Get(ctx, "guestbook-web", metav1.GetOptions{}); err != nil {
		t.Errorf("the synced Deployment: %v", err)
	}
	events.wait(t, "the sync's end", func(e appEvent) bool {
		return e.Type == "OperationPhaseChanged" && e.OperationPhase == "Succeeded"
	})
	events.wait(t, "Synced", func(e appEvent) bool { return e.SyncStatus == "Synced" })

	// A push to the app's branch: the API server hands it to the
	// controller's leader through Redis (no refresh annotation), which
	// queues the app and compares it again.
	mark := len(events.seen())
	pushWebhook(t, api, git.URL, hookSecret)
	events.waitFrom(t, "a comparison after the push", mark, func(e appEvent) bool { return e.Type == "ReconcileCompleted" })
	// The logs arrive through pipes: wait for them.
	for _, l := range []struct {
		role string
		logs fmt.Stringer
		line *regexp.Regexp
	}{
		{"server", server.logs, regexp.MustCompile(`msg="webhook push" .*matched=1 queued=1 annotated=0 failed=0`)},
		{"controller", ctl.logs, regexp.MustCompile(`msg="webhook push relayed" apps=1 queued=1`)},
	} {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			return l.line.MatchString(l.logs.String()), nil
		})
		if err != nil {
			t.Errorf("the %s did not log %s:\n%s", l.role, l.line, l.logs)
		}
	}
	if strings.Contains(server.logs.String(), "without a secret check") {
		t.Errorf("the server did not check the push's signature:\n%s", server.logs)
	}
	t.Logf("synced %s at %s; events seen: %d", app.Name, app.Status.Sync.Revision, len(events.seen()))
}

// haRefusals makes, as deploy/ha's ServiceAccounts, requests their roles
// must not make, and wants each refused.
func haRefusals(t *testing.T, ns string) {
	ctx := t.Context()
	// The repo-server has no business with Secrets, not even its own.
	_, err := impersonate(t, ns, "graphcd-repo-server").CoreV1().Secrets(ns).Get(ctx, "graphcd-repo-server-tls", metav1.GetOptions{})
	wantForbidden(t, "graphcd-repo-server reading its own TLS Secret", err)
	_, err = impersonate(t, ns, "graphcd-repo-server").CoreV1().Secrets(ns).Get(ctx, "graphcd-secret", metav1.GetOptions{})
	wantForbidden(t, "graphcd-repo-server reading graphcd-secret", err)

	// Only the controller applies: the API server cannot create workloads.
	dest := cluster.Namespace(t)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "not-from-the-server"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}},
			},
		},
	}
	_, err = impersonate(t, ns, "graphcd-server").AppsV1().Deployments(dest).Create(ctx, d, metav1.CreateOptions{})
	wantForbidden(t, "graphcd-server creating a Deployment", err)
	// Nor read Secrets outside its namespace.
	_, err = impersonate(t, ns, "graphcd-server").CoreV1().Secrets(dest).List(ctx, metav1.ListOptions{})
	wantForbidden(t, "graphcd-server listing Secrets of another namespace", err)
}

// namespaceInstallEndToEnd runs deploy/namespace-install's server (with
// its controller) as graphcd-server in ns, after the cluster Secret was
// widened to a second namespace, outside, as a user who forgets to grant
// graphcd a Role there would: graphcd's own scope check then lets a sync
// there go on, and the Kubernetes API must refuse it. A sync into ns
// succeeds; one into a third namespace, beyond, which the Secret does not
// name, graphcd refuses itself without asking the API.
func namespaceInstallEndToEnd(t *testing.T, ns string) {
	ctx := t.Context()
	outside, beyond := cluster.Namespace(t), cluster.Namespace(t)
	sec, err := cluster.Client.CoreV1().Secrets(ns).Get(ctx, "graphcd-in-cluster", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec.Data["namespaces"] = []byte(ns + "," + outside)
	if _, err := cluster.Client.CoreV1().Secrets(ns).Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Refusals are expected in the other namespace only.
	server := start(t, ns, runOptions{sa: "graphcd-server", refused: func(line string) bool { return strings.Contains(line, outside) }},
		both(serverReady, defaultProjectIn(ns)), "server", "--listen", "127.0.0.1:0")

	api := login(t, ns, server)
	git, err := demorepo.Serve(t.TempDir(), os.DirFS("../hack/demo/apps"), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(git.Close)
	createApp(t, api, "inside", git.URL, ns)
	createApp(t, api, "outside", git.URL, outside)
	createApp(t, api, "beyond", git.URL, beyond)
	syncApp(t, api, "inside")
	syncApp(t, api, "outside")
	syncApp(t, api, "beyond")
	// Its Pods are refused by the namespace's Pod Security level, so the
	// app does not become Healthy; applying is what the Role allows.
	waitApp(t, api, "inside", "Synced and Succeeded", func(a *client.AppDetail) bool {
		st := a.Status
		return st.Sync.Status == client.SyncStatusCodeSynced && st.OperationState != nil && st.OperationState.Phase == client.OperationPhaseSucceeded
	})
	wantSyncFailed(t, api, "outside", outside, "forbidden")
	wantSyncFailed(t, api, "beyond", beyond, "which the cluster secret of https://kubernetes.default.svc does not allow")

	// Nor may it write there itself.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "not-from-graphcd"}}
	_, err = impersonate(t, ns, "graphcd-server").CoreV1().ConfigMaps(outside).Create(ctx, cm, metav1.CreateOptions{})
	wantForbidden(t, "graphcd-server creating a ConfigMap outside its namespace", err)
}

// wantSyncFailed waits for the sync of app name to end, and wants it
// failed with a message holding reason, and nothing created in dest.
func wantSyncFailed(t *testing.T, api *client.Client, name, dest, reason string) {
	t.Helper()
	app := waitApp(t, api, name, "done syncing", func(a *client.AppDetail) bool {
		op := a.Status.OperationState
		return op != nil && (op.Phase == client.OperationPhaseFailed || op.Phase == client.OperationPhaseError || op.Phase == client.OperationPhaseSucceeded)
	})
	op := app.Status.OperationState
	if op.Phase == client.OperationPhaseSucceeded || !strings.Contains(op.Message, reason) {
		t.Errorf("sync of %s: phase %s, message %q; want it failed with %q", name, op.Phase, op.Message, reason)
	}
	t.Logf("sync of %s: %s: %s", name, op.Phase, op.Message)
	ctx := t.Context()
	deployments, err := cluster.Client.AppsV1().Deployments(dest).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	services, err := cluster.Client.CoreV1().Services(dest).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(deployments.Items) + len(services.Items); n > 0 {
		t.Errorf("namespace %s holds %d Deployments and Services after the failed sync of %s, want none", dest, n, name)
	}
}

// wantForbidden wants err to be the Kubernetes API's Forbidden, and logs
// it.
func wantForbidden(t *testing.T, what string, err error) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s: err = %v, want Forbidden", what, err)
		return
	}
	t.Logf("%s: %v", what, err)
}

// setSecretKey sets key of Secret name in ns to a random value, and
// returns it.
func setSecretKey(t *testing.T, ns, name, key string) []byte {
	t.Helper()
	value := []byte(rand.Text())
	secrets := cluster.Client.CoreV1().Secrets(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sec, err := secrets.Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if sec.Data == nil {
			sec.Data = map[string][]byte{}
		}
		sec.Data[key] = value
		_, err = secrets.Update(t.Context(), sec, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return value
}

// secretFiles writes each key of Secret name in ns to a file of its own
// name, readable by the owner only, and returns the paths by key.
func secretFiles(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	sec, err := cluster.Client.CoreV1().Secrets(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths := map[string]string{}
	for k, v := range sec.Data {
		paths[k] = filepath.Join(dir, k)
		if err := os.WriteFile(paths[k], v, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

var repoServerRE = regexp.MustCompile(`msg="repo server serving" addr=(\S+)`)

// repoServerReady is ready once the repo-server logged where it serves.
func repoServerReady(_ context.Context, logs string) bool { return repoServerRE.MatchString(logs) }

// logged is ready once the logs hold s.
func logged(s string) func(context.Context, string) bool {
	return func(_ context.Context, logs string) bool { return strings.Contains(logs, s) }
}

// login logs in as admin, with the initial password, to the server p
// runs, trusting only the certificate it keeps in graphcd-secret of ns.
func login(t *testing.T, ns string, p *process) *client.Client {
	t.Helper()
	ctx := t.Context()
	sec, err := cluster.Client.CoreV1().Secrets(ns).Get(ctx, "graphcd-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ca := client.TLS{CACert: sec.Data["tls.crt"]}
	anon, err := client.NewTLS("https://"+servingRE.FindStringSubmatch(p.logs.String())[1], "", ca)
	if err != nil {
		t.Fatal(err)
	}
	var password string
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		s, err := cluster.Client.CoreV1().Secrets(ns).Get(ctx, "graphcd-initial-admin-secret", metav1.GetOptions{})
		if err == nil {
			password = string(s.Data["password"])
		}
		return password != "", nil
	})
	if err != nil {
		t.Fatalf("the initial admin password: %v", err)
	}
	session, err := anon.Login(ctx, "admin", password)
	if err != nil {
		t.Fatalf("log in as admin: %v", err)
	}
	c, err := client.NewTLS(anon.Server, session.Token, ca)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// createApp creates, through the API, app name of the guestbook sample
// in repoURL, deploying to dest on the cluster graphcd runs in.
func createApp(t *testing.T, c *client.Client, name, repoURL, dest string) {
	t.Helper()
	manifest := fmt.Sprintf(`apiVersion: graphcd.io/v1alpha1
kind: Application
metadata:
  name: %s
spec:
  project: default
  source:
    repoURL: %s
    path: guestbook
    targetRevision: %s
  destination:
    server: https://kubernetes.default.svc
    namespace: %s
`, name, repoURL, demorepo.Branch, dest)
	if _, err := client.CreateApplication(t.Context(), c.GraphQL, client.CreateApplicationInput{Manifest: manifest}); err != nil {
		t.Fatalf("create app %s: %v", name, client.Explain(err))
	}
}

// syncApp asks the API to sync app name.
func syncApp(t *testing.T, c *client.Client, name string) {
	t.Helper()
	if _, err := client.SyncApplication(t.Context(), c.GraphQL, client.SyncApplicationInput{Application: client.ApplicationRef{Name: name}}); err != nil {
		t.Fatalf("sync app %s: %v", name, client.Explain(err))
	}
}

// waitApp polls the API until app name is as done wants, and returns it.
func waitApp(t *testing.T, c *client.Client, name, what string, done func(*client.AppDetail) bool) *client.AppDetail {
	t.Helper()
	var last *client.AppDetail
	var lastErr error
	err := wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, appTimeout, true, func(ctx context.Context) (bool, error) {
		resp, err := client.GetApplication(ctx, c.GraphQL, name, nil)
		if err != nil {
			lastErr = client.Explain(err)
			return false, nil
		}
		if resp.Application == nil {
			return false, nil
		}
		last = &resp.Application.AppDetail
		return done(last), nil
	})
	if err != nil {
		state, _ := json.MarshalIndent(last, "", "  ")
		t.Fatalf("app %s not %s: %v (last error %v); last state:\n%s", name, what, err, lastErr, state)
	}
	return last
}

// appEvent is the part of an applicationEvents result the tests look at.
type appEvent struct {
	Lagged         bool   `json:"lagged"`
	Type           string `json:"type"`
	Name           string `json:"name"`
	SyncStatus     string `json:"syncStatus"`
	Health         string `json:"health"`
	OperationPhase string `json:"operationPhase"`
	Message        string `json:"message"`
}

// eventStream collects the events of a subscription as they arrive.
type eventStream struct {
	mu     sync.Mutex
	events []appEvent
	err    error
	more   chan struct{}
}

// subscribeEvents opens an applicationEvents subscription for app name
// and collects its events until the test ends.
func subscribeEvents(t *testing.T, c *client.Client, name string) *eventStream {
	t.Helper()
	type result struct {
		ApplicationEvents appEvent `json:"applicationEvents"`
	}
	sub, err := client.Subscribe[result](t.Context(), c, &graphql.Request{
		Query:     `subscription($names: [String!]) { applicationEvents(filter: {names: $names}) { lagged type name syncStatus health operationPhase message } }`,
		Variables: map[string]any{"names": []string{name}},
	})
	if err != nil {
		t.Fatalf("subscribe to applicationEvents: %v", err)
	}
	s := &eventStream{more: make(chan struct{}, 1)}
	done := make(chan struct{})
	t.Cleanup(func() { sub.Close(); <-done })
	go func() {
		defer close(done)
		for {
			r, err := sub.Next()
			s.mu.Lock()
			if err != nil {
				s.err = err
			} else {
				s.events = append(s.events, r.ApplicationEvents)
			}
			s.mu.Unlock()
			select {
			case s.more <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

// wait waits until an event that match wants has arrived.
func (s *eventStream) wait(t *testing.T, what string, match func(appEvent) bool) {
	t.Helper()
	s.waitFrom(t, what, 0, match)
}

// waitFrom is wait for an event after the first from.
func (s *eventStream) waitFrom(t *testing.T, what string, from int, match func(appEvent) bool) {
	t.Helper()
	timeout := time.After(appTimeout)
	for {
		s.mu.Lock()
		found, err := slices.ContainsFunc(s.events[min(from, len(s.events)):], match), s.err
		s.mu.Unlock()
		if found {
			return
		}
		if err != nil {
			t.Fatalf("waiting for the event of %s: subscription ended: %v; events: %+v", what, err, s.seen())
		}
		select {
		case <-s.more:
		case <-timeout:
			t.Fatalf("no event of %s; events: %+v", what, s.seen())
		}
	}
}

func (s *eventStream) seen() []appEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]appEvent(nil), s.events...)
}

// pushWebhook posts GitHub's push event for the main branch of repoURL to
// the server's webhook, signed with secret as GitHub signs it, and wants
// it received.
func pushWebhook(t *testing.T, c *client.Client, repoURL string, secret []byte) {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"ref":   "refs/heads/" + demorepo.Branch,
		"after": strings.Repeat("1", 40),
		"repository": map[string]any{
			"html_url": repoURL, "clone_url": repoURL, "default_branch": demorepo.Branch,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, c.Server+"/api/webhook", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-GitHub-Delivery", "graphcd-deploy-test")
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	// As GitHub sends it: without graphcd's token.
	anon, err := client.NewTLS(c.Server, "", c.TLS)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := anon.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), "push received") {
		t.Fatalf("webhook: HTTP %d %q, want 200 and push received", resp.StatusCode, answer)
	}
}
