//go:build integration

package chatops

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
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
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/testenv/graphcdbin"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Minimal}, &cluster))
}

// The manual's namespace, project, role, application and chat users.
const (
	namespace = "graphcd"
	project   = "shop"
	role      = "chatops"
	appName   = "guestbook"
	team      = "T0123SHOP"
	alice     = "U0123ALICE" // release
	bob       = "U0456BOB"   // ops
)

// The manual's sections, as the blocks of docs/chatops.md.
type manualSections struct {
	project, token, run, try string // sh
	identities, approval     string // yaml
}

func readManual(t *testing.T) manualSections {
	t.Helper()
	sh, yml := readmeBlocks(t, "sh"), readmeBlocks(t, "yaml")
	if len(sh) != 6 || len(yml) != 2 {
		t.Fatalf("docs/chatops.md has %d sh and %d yaml blocks, want 6 (project, token, run, try, secret, helm) and 2 (identities, approval policy): update this test with it", len(sh), len(yml))
	}
	return manualSections{project: sh[0], token: sh[1], run: sh[2], try: sh[3], identities: yml[0], approval: yml[1]}
}

// The bot, `graphcd chatops`, against a real `graphcd server` with its
// controller, set up with the manual's own commands: a command signed as
// the manual shows requests a sync as the project role, the sync fails on
// a manifest the API server refuses, and the chat hears of it; a bad
// signature is 401, an unmapped user is refused and an app of another
// project is NOT_FOUND. Under the manual's approval policy, a sync held
// for approval is announced in the chat, an approval from a user outside
// the policy's groups (or forged, or replayed) leaves it held, and one
// from a user in them lets it run.
func TestBotAgainstGraphcd(t *testing.T) {
	for _, tool := range []string{"kubectl", "curl", "jq", "openssl", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed; the manual's commands need it", tool)
		}
	}
	graphcd := startGraphcd(t)
	server := graphcd.url
	manual := readManual(t)
	work := t.TempDir()
	shellEnv := append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig, "GRAPHCD_SERVER="+server)

	// Sections 1 and 2: the project role and its token.
	for _, block := range []string{manual.project, manual.token} {
		runShell(t, work, shellEnv, block)
	}
	if fi, err := os.Stat(filepath.Join(work, "chatops-token")); err != nil || fi.Size() < 20 {
		t.Fatalf("the manual's commands left no token: %v", err)
	}

	apps := appClient(t)
	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		// Valid YAML that the API server refuses: not a DNS-1123 name.
		"guestbook/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_Valid_Name\ndata:\n  mode: fast\n",
		// One that syncs.
		"storefront/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: storefront\ndata:\n  mode: fast\n",
	})
	repo := serveGit(t, dir)
	if _, err := cluster.Client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createApp(t, apps, appName, project, repo, "guestbook")
	createApp(t, apps, "other-app", "default", repo, "guestbook")

	// Sections 4 and 5: the identity file, and the bot configured through
	// the variables the manual exports.
	chat := newChat(t)
	const signingSecret = "test-signing-secret"
	bot := startBot(t, graphcd, manual, work, chat, signingSecret)

	t.Run("bad signature", func(t *testing.T) {
		resp := postCommand(t, bot.endpoint, "not-the-secret", slash(cmdSync, appName, alice))
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

	t.Run("unmapped user", func(t *testing.T) {
		got := postCommand(t, bot.endpoint, signingSecret, slash(cmdSync, appName, "U0789EVE")).reply(t)
		if got.ResponseType != "ephemeral" || got.Text != notMapped {
			t.Errorf("reply %+v, want the polite refusal, to the caller only", got)
		}
	})

	t.Run("app of another project", func(t *testing.T) {
		got := postCommand(t, bot.endpoint, signingSecret, slash(cmdSync, "other-app "+namespace, alice)).reply(t)
		if got.ResponseType != "ephemeral" || !strings.HasPrefix(got.Text, "sync of other-app failed: ") || !strings.HasSuffix(got.Text, "(NOT_FOUND)") {
			t.Errorf("reply %+v, want graphcd's NOT_FOUND message, to the caller only", got)
		}
	})

	// Section 6: the manual's signed request, then the failure in the chat.
	t.Run("sync on command, failure in the chat", func(t *testing.T) {
		try := strings.ReplaceAll(manual.try, "localhost:8090", bot.listen)
		out := runShell(t, work, append(shellEnv, "SLACK_SIGNING_SECRET="+signingSecret), try)
		if want := `{"response_type":"in_channel","text":"sync of guestbook requested"}`; strings.TrimSpace(out) != want {
			t.Errorf("the manual's command answered %q, want %q", out, want)
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
		subscribed := strings.Count(bot.logs.String(), "subscribed to application events")
		graphcd.stop()
		poll(t, "the bot to notice", func() (bool, string) {
			return strings.Contains(bot.logs.String(), "application events interrupted; reconnecting"), bot.logs.String()
		})
		graphcd.start(t)
		poll(t, "the bot to subscribe again", func() (bool, string) {
			return strings.Count(bot.logs.String(), "subscribed to application events") > subscribed, bot.logs.String()
		})
		// An app with no operation yet, so its failure can only come from
		// the sync requested here.
		const name = "guestbook-2"
		createApp(t, apps, name, project, repo, "guestbook")
		resp := postCommand(t, bot.endpoint, signingSecret, slash(cmdSync, name, alice))
		if want := `{"response_type":"in_channel","text":"sync of guestbook-2 requested"}`; resp.code != http.StatusOK || strings.TrimSpace(resp.body) != want {
			t.Fatalf("command = %d %s, want %s", resp.code, resp.body, want)
		}
		want := ":x: Sync of *guestbook-2* (graphcd) ended "
		poll(t, "the chat to hear of the failure after the restart", func() (bool, string) {
			msgs := chat.messages()
			return slices.ContainsFunc(msgs, func(m string) bool { return strings.HasPrefix(m, want) }), fmt.Sprintf("messages %q, want one starting %q", msgs, want)
		})
	})

	// The manual's approval policy on the project: a sync another user
	// requests waits; the chat hears who may approve; Bob (ops) is
	// refused, and so are a forged and a replayed approval from Alice;
	// Alice (release) approves and the sync runs.
	t.Run("approval from the chat", func(t *testing.T) {
		requireApproval(t, apps, manual.approval)
		const name = "storefront"
		createApp(t, apps, name, project, repo, name)
		key := client.ObjectKey{Namespace: namespace, Name: name}
		admin := adminSession(t, graphcd, filepath.Join(work, "graphcd-ca.crt"))
		admin.do(t, `mutation($app: ApplicationRef!) { syncApplication(input: {application: $app}) { name } }`,
			map[string]any{"app": map[string]any{"name": name, "namespace": namespace}})

		var app v1alpha1.Application
		poll(t, "the sync to be held", func() (bool, string) {
			if err := apps.Get(t.Context(), key, &app); err != nil {
				return false, err.Error()
			}
			st := app.Status.OperationState
			if st == nil || st.Approval == nil {
				return false, fmt.Sprintf("operation state %+v", st)
			}
			return st.Phase == v1alpha1.OperationRunning, string(st.Phase)
		})
		held := ":hourglass_flowing_sand: The sync of *storefront* (graphcd) requested by admin waits for 1 approval from *release* until "
		poll(t, "the chat to hear of the held sync", func() (bool, string) {
			msgs := chat.messages()
			return slices.ContainsFunc(msgs, func(m string) bool {
				return strings.HasPrefix(m, held) && strings.HasSuffix(m, "To approve: `/approve storefront graphcd`")
			}), fmt.Sprintf("messages %q, want one starting %q", msgs, held)
		})
		stillHeld := func(after string) {
			t.Helper()
			if err := apps.Get(t.Context(), key, &app); err != nil {
				t.Fatal(err)
			}
			st := app.Status.OperationState
			if st == nil || st.Approval == nil || st.Approval.ApprovedAt != nil || st.Phase != v1alpha1.OperationRunning {
				t.Fatalf("after %s the sync is no longer held: %+v", after, st)
			}
			if a := app.Annotations[v1alpha1.SyncApprovalsAnnotation]; a != "" {
				t.Errorf("after %s the application records approvals: %s", after, a)
			}
		}

		got := postCommand(t, bot.endpoint, signingSecret, slash(cmdApprove, name+" "+namespace, bob)).reply(t)
		if got.ResponseType != "ephemeral" || !strings.HasPrefix(got.Text, "approval of the sync of storefront failed: ") || !strings.HasSuffix(got.Text, "(FORBIDDEN)") {
			t.Errorf("Bob's approval answered %+v, want graphcd's FORBIDDEN, to him only", got)
		}
		stillHeld("Bob's approval")

		alicesApproval := slash(cmdApprove, name+" "+namespace, alice)
		if resp := postCommand(t, bot.endpoint, "not-the-secret", alicesApproval); resp.code != http.StatusUnauthorized {
			t.Errorf("an approval signed with another secret = %d %s, want 401", resp.code, resp.body)
		}
		if resp := postCommandAt(t, bot.endpoint, signingSecret, alicesApproval, time.Now().Add(-6*time.Minute)); resp.code != http.StatusUnauthorized {
			t.Errorf("an approval signed six minutes ago = %d %s, want 401", resp.code, resp.body)
		}
		stillHeld("a forged and a replayed approval")

		got = postCommand(t, bot.endpoint, signingSecret, alicesApproval).reply(t)
		if want := (slackReply{"in_channel", "sync of storefront approved by alice"}); got != want {
			t.Errorf("Alice's approval answered %+v, want %+v", got, want)
		}
		poll(t, "the approved sync to run", func() (bool, string) {
			if err := apps.Get(t.Context(), key, &app); err != nil {
				return false, err.Error()
			}
			st := app.Status.OperationState
			return st != nil && st.Phase == v1alpha1.OperationSucceeded && app.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced,
				fmt.Sprintf("operation %+v, sync %s", st, app.Status.Sync.Status)
		})
		approval := app.Status.OperationState.Approval
		if approval == nil || approval.ApprovedAt == nil || len(approval.ApprovedBy) != 1 ||
			approval.ApprovedBy[0].User != "alice" || approval.ApprovedBy[0].Via != "proj:shop:chatops" {
			t.Errorf("the sync ran with approvals %+v, want Alice's via the bot's role", approval)
		}
		if _, err := cluster.Client.CoreV1().ConfigMaps("shop").Get(t.Context(), "storefront", metav1.GetOptions{}); err != nil {
			t.Errorf("the approved sync applied nothing: %v", err)
		}
	})

	bot.stop(t)
	token, err := os.ReadFile(filepath.Join(work, "chatops-token"))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{bot.env["GRAPHCD_WEBHOOK_URL"], "/services/", strings.TrimSpace(string(token)), signingSecret} {
		if strings.Contains(bot.logs.String(), secret) {
			t.Errorf("the bot's log shows the webhook URL, the token or the signing secret:\n%s", bot.logs)
		}
	}
}

// requireApproval sets the manual's approval policy, policy (the block
// under spec:), on the project.
func requireApproval(t *testing.T, apps client.Client, policy string) {
	t.Helper()
	var spec struct {
		Spec struct {
			SyncApproval *v1alpha1.SyncApproval `json:"syncApproval"`
		} `json:"spec"`
	}
	if err := yaml.UnmarshalStrict([]byte(policy), &spec); err != nil || spec.Spec.SyncApproval == nil {
		t.Fatalf("the manual's approval policy %q: %v", policy, err)
	}
	var proj v1alpha1.AppProject
	if err := apps.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: project}, &proj); err != nil {
		t.Fatal(err)
	}
	proj.Spec.SyncApproval = spec.Spec.SyncApproval
	if err := apps.Update(t.Context(), &proj); err != nil {
		t.Fatal(err)
	}
}

// apiSession is a logged-in user of graphcd's API.
type apiSession struct {
	server, token string
	http          *http.Client
}

// adminSession logs in as the built-in admin, as the manual's section 2
// does, trusting graphcd's certificate in caFile.
func adminSession(t *testing.T, graphcd *graphcdServer, caFile string) *apiSession {
	t.Helper()
	ca, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	s := &apiSession{server: graphcd.url, http: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}}
	sec, err := cluster.Client.CoreV1().Secrets(namespace).Get(t.Context(), "graphcd-initial-admin-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Token string }
	s.post(t, "/auth/login", map[string]string{"username": "admin", "password": string(sec.Data["password"])}, &out)
	if out.Token == "" {
		t.Fatal("the admin login returned no token")
	}
	s.token = out.Token
	return s
}

// do runs a GraphQL operation and fails the test on any error.
func (s *apiSession) do(t *testing.T, query string, vars map[string]any) {
	t.Helper()
	var out struct {
		Errors []json.RawMessage `json:"errors"`
	}
	s.post(t, "/api/graphql", map[string]any{"query": query, "variables": vars}, &out)
	if len(out.Errors) > 0 {
		t.Fatalf("%s: %s", query, out.Errors)
	}
}

func (s *apiSession) post(t *testing.T, path string, in, out any) {
	t.Helper()
	body, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.server+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
}

// chatBot is a running `graphcd chatops`.
type chatBot struct {
	cmd              *exec.Cmd
	listen, endpoint string
	env              map[string]string
	logs             *syncBuffer
	exited           chan error
	stopped          bool // stop waited for the process
}

// startBot runs `graphcd chatops` with the manual's identity file and the
// variables the manual exports, and waits until it has subscribed.
func startBot(t *testing.T, graphcd *graphcdServer, manual manualSections, work string, chat *chatServer, signingSecret string) *chatBot {
	t.Helper()
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	b := &chatBot{listen: "127.0.0.1:" + strconv.Itoa(port), logs: &syncBuffer{}, exited: make(chan error, 1)}
	b.endpoint = "http://" + b.listen + "/slack/command"
	secretFile := filepath.Join(work, "slack-signing-secret")
	if err := os.WriteFile(secretFile, []byte(signingSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	identities := filepath.Join(work, "chatops-users.yaml")
	if err := os.WriteFile(identities, []byte(manual.identities), 0o600); err != nil {
		t.Fatal(err)
	}
	b.env = map[string]string{
		"GRAPHCD_SERVER":              graphcd.url,
		"GRAPHCD_SERVER_CA_FILE":      filepath.Join(work, "graphcd-ca.crt"),
		"GRAPHCD_TOKEN_FILE":          filepath.Join(work, "chatops-token"),
		"GRAPHCD_WEBHOOK_URL":         chat.URL + "/services/T000/B000/secret",
		"GRAPHCD_SIGNING_SECRET_FILE": secretFile,
		"GRAPHCD_CONFIG":              identities,
		"GRAPHCD_LISTEN":              b.listen,
	}
	exported := regexp.MustCompile(`(?m)^export ([A-Z_]+)=`).FindAllStringSubmatch(manual.run, -1)
	if len(exported) != len(b.env) {
		t.Errorf("the manual's section 5 exports %d variables, the test sets %d", len(exported), len(b.env))
	}
	for _, m := range exported {
		if _, ok := b.env[m[1]]; !ok {
			t.Errorf("the manual's section 5 exports %s, which the test does not set", m[1])
		}
	}
	if !strings.Contains(manual.run, "\ngraphcd chatops\n") {
		t.Errorf("the manual's section 5 does not run `graphcd chatops`:\n%s", manual.run)
	}
	b.cmd = exec.CommandContext(context.WithoutCancel(t.Context()), graphcd.bin, "chatops")
	b.cmd.Env = graphcd.env
	for k, v := range b.env {
		b.cmd.Env = append(b.cmd.Env, k+"="+v)
	}
	b.cmd.Stdout, b.cmd.Stderr = b.logs, b.logs
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.exited <- b.cmd.Wait() }()
	t.Cleanup(func() {
		if !b.stopped {
			_ = b.cmd.Process.Kill()
			t.Logf("graphcd chatops killed: %v", <-b.exited)
		}
		if t.Failed() {
			t.Logf("graphcd chatops log:\n%s", b.logs)
		}
	})
	poll(t, "the bot to subscribe", func() (bool, string) {
		return strings.Contains(b.logs.String(), "subscribed to application events"), b.logs.String()
	})
	resp, err := http.Get("http://" + b.listen + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz = %s, want 200", resp.Status)
	}
	return b
}

// stop sends SIGTERM and wants the bot to end cleanly.
func (b *chatBot) stop(t *testing.T) {
	t.Helper()
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	b.stopped = true
	if err := <-b.exited; err != nil {
		t.Errorf("graphcd chatops after SIGTERM: %v\n%s", err, b.logs)
	}
}

// slash is the form of a slash command sent by a user of the manual's
// team.
func slash(name, text, user string) url.Values {
	return url.Values{"command": {name}, "text": {text}, "team_id": {team}, "user_id": {user}}
}

// graphcdServer is a `graphcd server` (API and controller) in the
// manual's namespace, at a fixed address so it can be restarted.
type graphcdServer struct {
	url, listen, bin string
	env              []string
	cmd              *exec.Cmd
	logs             *syncBuffer
}

// startGraphcd builds graphcd, installs its CRDs and starts the server.
func startGraphcd(t *testing.T) *graphcdServer {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not in PATH")
	}
	s := &graphcdServer{bin: filepath.Join(t.TempDir(), "graphcd"), logs: &syncBuffer{}}
	if err := graphcdbin.Build(t.Context(), s.bin); err != nil {
		t.Fatal(err)
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
// directory path to the namespace shop.
func createApp(t *testing.T, apps client.Client, name, project, repo, path string) {
	t.Helper()
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: v1alpha1.ApplicationSpec{
			Project:     project,
			Source:      &v1alpha1.ApplicationSource{RepoURL: repo, Path: path, TargetRevision: "main"},
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

// slackReply is the bot's answer to a slash command.
type slackReply struct {
	ResponseType string `json:"response_type"`
	Text         string `json:"text"`
}

// reply decodes a 200 answer, failing the test on anything else.
func (r response) reply(t *testing.T) slackReply {
	t.Helper()
	var got slackReply
	if err := json.Unmarshal([]byte(r.body), &got); err != nil || r.code != http.StatusOK {
		t.Fatalf("command = %d %s", r.code, r.body)
	}
	return got
}

// postCommand posts a slash command signed with secret, as Slack would.
func postCommand(t *testing.T, endpoint, secret string, form url.Values) response {
	t.Helper()
	return postCommandAt(t, endpoint, secret, form, time.Now())
}

// postCommandAt posts a slash command signed with secret at at.
func postCommandAt(t *testing.T, endpoint, secret string, form url.Values, at time.Time) response {
	t.Helper()
	body := form.Encode()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	ts := strconv.FormatInt(at.Unix(), 10)
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
