//go:build integration

package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Minimal}, &cluster))
}

// The README's namespace, project, role and application.
const (
	namespace = "graphcd"
	project   = "shop"
	role      = "chatops"
	appName   = "guestbook"
)

// The bot against a real `graphcd server` with its controller, set up
// with the README's own commands: a command signed as the README shows
// requests a sync as the project role, the sync fails on a manifest the
// API server refuses, and the chat hears of it; a bad signature is 401
// and an app of another project is NOT_FOUND.
func TestBotAgainstGraphcd(t *testing.T) {
	for _, tool := range []string{"kubectl", "curl", "jq", "openssl", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed; the README's commands need it", tool)
		}
	}
	graphcd := startGraphcd(t)
	server := graphcd.url
	blocks := readmeBlocks(t, "sh")
	if len(blocks) != 4 {
		t.Fatalf("README.md has %d sh blocks, want 4 (project, token, run, try): update this test with it", len(blocks))
	}
	work := t.TempDir()
	shellEnv := append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig, "GRAPHCD_SERVER="+server)

	// Sections 1 and 2: the project role and its token.
	for _, block := range blocks[:2] {
		runShell(t, work, shellEnv, block)
	}
	if fi, err := os.Stat(filepath.Join(work, "chatops-token")); err != nil || fi.Size() < 20 {
		t.Fatalf("the README's commands left no token: %v", err)
	}

	apps := appClient(t)
	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		// Valid YAML that the API server refuses: not a DNS-1123 name.
		"guestbook/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_Valid_Name\ndata:\n  mode: fast\n",
	})
	repo := serveGit(t, dir)
	if _, err := cluster.Client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createApp(t, apps, appName, project, repo)
	createApp(t, apps, "other-app", "default", repo)

	// Section 4: the bot, configured through the variables the README
	// exports, run in-process.
	chat := newChat(t)
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	listen := "127.0.0.1:" + strconv.Itoa(port)
	const signingSecret = "test-signing-secret"
	secretFile := filepath.Join(work, "slack-signing-secret")
	if err := os.WriteFile(secretFile, []byte(signingSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"GRAPHCD_SERVER":            server,
		"GRAPHCD_SERVER_CA_FILE":    filepath.Join(work, "graphcd-ca.crt"),
		"GRAPHCD_TOKEN_FILE":        filepath.Join(work, "chatops-token"),
		"CHAT_WEBHOOK_URL":          chat.URL + "/services/T000/B000/secret",
		"SLACK_SIGNING_SECRET_FILE": secretFile,
		"LISTEN":                    listen,
	}
	exported := regexp.MustCompile(`(?m)^export ([A-Z_]+)=`).FindAllStringSubmatch(blocks[2], -1)
	if len(exported) != len(env) {
		t.Errorf("README section 4 exports %d variables, the test sets %d", len(exported), len(env))
	}
	for _, m := range exported {
		if _, ok := env[m[1]]; !ok {
			t.Errorf("README section 4 exports %s, which the test does not set", m[1])
		}
	}
	cfg, err := loadConfig(nil, func(k string) string { return env[k] }, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- run(ctx, cfg, slog.New(slog.NewTextHandler(logs, nil))) }()
	t.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	poll(t, "the bot to subscribe", func() (bool, string) {
		return strings.Contains(logs.String(), "subscribed to application events"), logs.String()
	})
	bot := "http://" + listen + "/slack/command"

	t.Run("bad signature", func(t *testing.T) {
		resp := postCommand(t, bot, "not-the-secret", url.Values{"command": {"/sync"}, "text": {appName}})
		if resp.code != http.StatusUnauthorized {
			t.Errorf("a command signed with another secret = %d %s, want 401", resp.code, resp.body)
		}
		key := client.ObjectKey{Namespace: namespace, Name: appName}
		var app v1alpha1.Application
		if err := apps.Get(t.Context(), key, &app); err != nil {
			t.Fatal(err)
		}
		if app.Operation != nil || app.Status.OperationState != nil {
			t.Errorf("a refused command started an operation")
		}
	})

	t.Run("app of another project", func(t *testing.T) {
		resp := postCommand(t, bot, signingSecret, url.Values{"command": {"/sync"}, "text": {"other-app " + namespace}})
		var got struct {
			ResponseType string `json:"response_type"`
			Text         string `json:"text"`
		}
		if err := json.Unmarshal([]byte(resp.body), &got); err != nil || resp.code != http.StatusOK {
			t.Fatalf("command = %d %s", resp.code, resp.body)
		}
		if got.ResponseType != "ephemeral" || !strings.HasPrefix(got.Text, "sync of other-app failed: ") || !strings.HasSuffix(got.Text, "(NOT_FOUND)") {
			t.Errorf("reply %+v, want graphcd's NOT_FOUND message, to the caller only", got)
		}
	})

	// Section 5: the README's signed request, then the failure in the chat.
	t.Run("sync on command, failure in the chat", func(t *testing.T) {
		try := strings.ReplaceAll(blocks[3], "localhost:8090", listen)
		out := runShell(t, work, append(shellEnv, "SLACK_SIGNING_SECRET="+signingSecret), try)
		if want := `{"response_type":"in_channel","text":"sync of guestbook requested"}`; strings.TrimSpace(out) != want {
			t.Errorf("the README's command answered %q, want %q", out, want)
		}
		var app v1alpha1.Application
		poll(t, "the sync to fail", func() (bool, string) {
			if err := apps.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: appName}, &app); err != nil {
				return false, err.Error()
			}
			st := app.Status.OperationState
			if st == nil {
				return false, "no operation state"
			}
			return st.Phase == v1alpha1.OperationFailed || st.Phase == v1alpha1.OperationError, fmt.Sprintf("%s: %s", st.Phase, st.Message)
		})
		if by := app.Status.OperationState.Operation.InitiatedBy.Username; by != "proj:shop:chatops" {
			t.Errorf("the sync was requested by %q, want the project role proj:shop:chatops", by)
		}
		want := ":x: Sync of *guestbook* (graphcd) ended " + string(app.Status.OperationState.Phase)
		poll(t, "the chat to hear of the failure", func() (bool, string) {
			msgs := chat.messages()
			return slices.ContainsFunc(msgs, func(m string) bool { return strings.HasPrefix(m, want) }), fmt.Sprintf("messages %q, want one starting %q", msgs, want)
		})
		t.Logf("the chat heard %q", chat.messages())
		for _, m := range chat.messages() {
			if strings.Contains(m, "other-app") {
				t.Errorf("the chat heard of an app outside the project: %q", m)
			}
		}
	})
	// The socket drops when graphcd goes away; the bot reconnects and
	// reports the failures that happen after graphcd is back.
	t.Run("reconnects when graphcd restarts", func(t *testing.T) {
		graphcd.stop()
		poll(t, "the bot to notice", func() (bool, string) {
			return strings.Contains(logs.String(), "application events interrupted; reconnecting"), logs.String()
		})
		graphcd.start(t)
		poll(t, "the bot to subscribe again", func() (bool, string) {
			return strings.Count(logs.String(), "subscribed to application events") >= 2, logs.String()
		})
		// An app with no operation yet, so its failure can only come from
		// the sync requested here.
		const name = "guestbook-2"
		createApp(t, apps, name, project, repo)
		resp := postCommand(t, bot, signingSecret, url.Values{"command": {"/sync"}, "text": {name}})
		if want := `{"response_type":"in_channel","text":"sync of guestbook-2 requested"}`; resp.code != http.StatusOK || strings.TrimSpace(resp.body) != want {
			t.Fatalf("command = %d %s, want %s", resp.code, resp.body, want)
		}
		want := ":x: Sync of *guestbook-2* (graphcd) ended "
		poll(t, "the chat to hear of the failure after the restart", func() (bool, string) {
			msgs := chat.messages()
			return slices.ContainsFunc(msgs, func(m string) bool { return strings.HasPrefix(m, want) }), fmt.Sprintf("messages %q, want one starting %q", msgs, want)
		})
	})

	for _, secret := range []string{env["CHAT_WEBHOOK_URL"], "/services/", cfg.token, signingSecret} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the bot's log shows the webhook URL, the token or the signing secret:\n%s", logs)
		}
	}
}

// graphcdServer is a `graphcd server` (API and controller) in the
// README's namespace, at a fixed address so it can be restarted.
type graphcdServer struct {
	url, listen, bin string
	env              []string
	cmd              *exec.Cmd
	logs             *syncBuffer
}

// startGraphcd builds graphcd, installs its CRDs and starts the server.
func startGraphcd(t *testing.T) *graphcdServer {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not in PATH")
	}
	s := &graphcdServer{bin: filepath.Join(t.TempDir(), "graphcd"), logs: &syncBuffer{}}
	if out, err := exec.CommandContext(t.Context(), goTool, "build", "-o", s.bin, "github.com/graphcd/graphcd/cmd/graphcd").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	s.env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "GRAPHCD_") || strings.HasPrefix(kv, "KUBECONFIG=") || strings.HasPrefix(kv, "KUBERNETES_SERVICE_HOST=")
	})
	install := exec.CommandContext(t.Context(), s.bin, "install", "crds", "--kubeconfig", cluster.Kubeconfig)
	install.Env = s.env
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("graphcd install crds: %v\n%s", err, out)
	}
	if _, err := cluster.Client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	s.listen = "127.0.0.1:" + strconv.Itoa(port)
	s.url = "https://" + s.listen
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("graphcd server log:\n%s", s.logs)
		}
	})
	s.start(t)
	return s
}

// start runs the server and waits until it is ready.
func (s *graphcdServer) start(t *testing.T) {
	t.Helper()
	s.cmd = exec.CommandContext(context.WithoutCancel(t.Context()), s.bin, "server", "--kubeconfig", cluster.Kubeconfig,
		"--namespace", namespace, "--listen", s.listen, "--log-format", "text")
	s.cmd.Env = s.env
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	poll(t, "graphcd server to be ready", func() (bool, string) {
		// It serves HTTPS with the self-signed certificate it keeps in
		// graphcd-secret; trust only that one.
		sec, err := cluster.Client.CoreV1().Secrets(namespace).Get(t.Context(), "graphcd-secret", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(sec.Data["tls.crt"]) {
			return false, "no certificate in graphcd-secret yet"
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
		resp, err := c.Get(s.url + "/readyz")
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
}

// stop kills the server, as a crash would.
func (s *graphcdServer) stop() {
	if s.cmd != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

// appClient is a controller-runtime client for graphcd's CRDs.
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

// createApp creates an Application of project that deploys the repo's
// guestbook directory to the namespace shop.
func createApp(t *testing.T, apps client.Client, name, project, repo string) {
	t.Helper()
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: v1alpha1.ApplicationSpec{
			Project:     project,
			Source:      &v1alpha1.ApplicationSource{RepoURL: repo, Path: "guestbook", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "shop"},
		},
	}
	if err := apps.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
}

// serveGit serves a bare clone of the working copy dir over smart HTTP
// (git http-backend) and returns the repository's URL.
func serveGit(t *testing.T, dir string) string {
	t.Helper()
	root := t.TempDir()
	gitEnv := []string{"HOME=" + root, "GIT_CONFIG_NOSYSTEM=1"}
	clone := exec.CommandContext(t.Context(), "git", "clone", "-q", "--bare", dir, filepath.Join(root, "apps.git"))
	clone.Env = append(os.Environ(), gitEnv...)
	if out, err := clone.CombinedOutput(); err != nil {
		t.Fatalf("git clone --bare: %v\n%s", err, out)
	}
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	handler := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"},
		Env: append(gitEnv, "GIT_PROJECT_ROOT="+root, "GIT_HTTP_EXPORT_ALL=1")}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv.URL + "/apps.git"
}

// runShell runs script with sh -e in dir and returns its standard output.
func runShell(t *testing.T, dir string, env []string, script string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "sh", "-e", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("sh -e -c %q: %v\nstdout: %s\nstderr: %s", script, err, &stdout, &stderr)
	}
	return stdout.String()
}

type response struct {
	code int
	body string
}

// postCommand posts a slash command signed with secret, as Slack would.
func postCommand(t *testing.T, endpoint, secret string, form url.Values) response {
	t.Helper()
	body := form.Encode()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", fmt.Sprintf("v0=%x", sign([]byte(secret), ts, []byte(body))))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, b.String()}
}

// chatServer is a Slack-compatible incoming webhook that keeps the texts
// posted to it.
type chatServer struct {
	*httptest.Server
	mu    sync.Mutex
	texts []string
}

func newChat(t *testing.T) *chatServer {
	t.Helper()
	c := &chatServer{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct{ Text string }
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" ||
			json.NewDecoder(r.Body).Decode(&msg) != nil || msg.Text == "" {
			http.Error(w, "invalid_payload", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.texts = append(c.texts, msg.Text)
		c.mu.Unlock()
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *chatServer) messages() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.texts)
}

// poll calls cond until it holds, failing the test with cond's last
// explanation if it still does not after two minutes.
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

// syncBuffer is a bytes.Buffer safe for concurrent writers.
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
