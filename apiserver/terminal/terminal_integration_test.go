//go:build integration

package terminal_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver"
	"github.com/graphcd/graphcd/apiserver/audit"
	"github.com/graphcd/graphcd/apiserver/catalog"
	"github.com/graphcd/graphcd/apiserver/terminal"
	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/auth/accounts"
	"github.com/graphcd/graphcd/auth/session"
	"github.com/graphcd/graphcd/internal/appstate"
	"github.com/graphcd/graphcd/internal/kubewatch"
	"github.com/graphcd/graphcd/internal/wellknown"
	"github.com/graphcd/graphcd/resolvers"
)

// fixture is one API server over a namespace of its own: an app "web"
// whose tree holds the running KWOK pod "web-0", real sessions for the
// accounts alice and bob, RBAC from the namespace's graphcd-rbac-cm.
type fixture struct {
	ns       string
	url      string
	sessions *auth.Sessions
}

// policy gives alice and bob the app, and alice a terminal into it.
const policy = `p, alice, applications, get, default/*, allow
p, alice, exec, create, default/*, allow
p, bob, applications, get, default/*, allow
`

func newFixture(t *testing.T, settings map[string]string, tune ...func(*terminal.Options)) *fixture {
	t.Helper()
	ctx := t.Context()
	f := &fixture{ns: cluster.Namespace(t)}
	cm := map[string]string{"accounts.alice": "login", "accounts.bob": "login"}
	for k, v := range settings {
		cm[k] = v
	}
	create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: wellknown.SettingsConfigMap, Namespace: f.ns}, Data: cm})
	f.setPolicy(t, policy)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: f.ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
	}
	create(t, pod)
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: f.ns},
		Spec: v1alpha1.ApplicationSpec{
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: "web"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: f.ns},
		},
	}
	if err := kubeClient(t).Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	states := appstate.NewMemory()
	key := types.NamespacedName{Namespace: f.ns, Name: "web"}
	if err := states.Put(ctx, appstate.State{App: key, Tree: []appstate.Node{{Version: "v1", Kind: "Pod", Namespace: f.ns, Name: "web-0"}}}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := cluster.Client.CoreV1().Pods(f.ns).Get(ctx, "web-0", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning && objects.Apps.Get(key) != nil, nil
	})
	if err != nil {
		t.Fatalf("pod web-0 not running or app web not indexed: %v", err)
	}

	watch := kubewatch.NewSource(ctx, cluster.Client, f.ns)
	keys := session.NewSecretKeys(watch)
	if err := keys.Start(ctx); err != nil {
		t.Fatal(err)
	}
	store := accounts.NewStore(watch)
	if err := store.Start(ctx); err != nil {
		t.Fatal(err)
	}
	f.sessions = &auth.Sessions{Issuer: session.NewIssuer(keys, session.Options{}), Accounts: store, Projects: objects}
	authz := auth.NewAuthorizer()
	quiet := slog.New(slog.DiscardHandler)
	if err := auth.WatchPolicy(ctx, watch, authz, quiet); err != nil {
		t.Fatal(err)
	}
	if err := auth.WatchProjects(ctx, objects, authz, quiet); err != nil {
		t.Fatal(err)
	}
	settingsView := catalog.NewSettings(watch)
	if err := settingsView.Start(ctx); err != nil {
		t.Fatal(err)
	}
	term := &terminal.Options{
		Exec: catalog.NewPodExec(clusterList), Settings: settingsView,
		Events: audit.NewEventWriter(cluster.Client, f.ns, "terminal-test"),
	}
	for _, tweak := range tune {
		tweak(term)
	}
	srv, err := apiserver.New(apiserver.Options{
		Listen: "127.0.0.1:0", Authenticator: f.sessions,
		API:      resolvers.Config{Apps: objects.Apps, Projects: objects, Namespace: f.ns, Authz: authz, States: states, Settings: settingsView},
		Terminal: term,
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	f.url = ts.URL
	return f
}

func kubeClient(t *testing.T) client.Client {
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

func create[T interface {
	*corev1.ConfigMap | *corev1.Pod
}](t *testing.T, obj T) {
	t.Helper()
	var err error
	switch o := any(obj).(type) {
	case *corev1.ConfigMap:
		_, err = cluster.Client.CoreV1().ConfigMaps(o.Namespace).Create(t.Context(), o, metav1.CreateOptions{})
	case *corev1.Pod:
		_, err = cluster.Client.CoreV1().Pods(o.Namespace).Create(t.Context(), o, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// setPolicy writes the namespace's graphcd-rbac-cm.
func (f *fixture) setPolicy(t *testing.T, csv string) {
	t.Helper()
	cms := cluster.Client.CoreV1().ConfigMaps(f.ns)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: auth.RBACConfigMap, Namespace: f.ns}, Data: map[string]string{"policy.csv": csv}}
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err == nil {
		return
	}
	if _, err := cms.Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// login returns a session token of user and its claims.
func (f *fixture) login(t *testing.T, user string) (string, *session.Claims) {
	t.Helper()
	password := user + "-password-1"
	if err := f.sessions.Accounts.SetPassword(t.Context(), user, password); err != nil {
		t.Fatal(err)
	}
	token, claims, err := f.sessions.Login(t.Context(), user, password, "test")
	if err != nil {
		t.Fatal(err)
	}
	return token, claims
}

// term is a client of the terminal's socket.
type term struct {
	t    *testing.T
	conn *websocket.Conn
	out  strings.Builder
}

// open opens a terminal as token into web-0's container app; query
// overrides or adds parameters.
func (f *fixture) open(t *testing.T, token string, query ...string) *term {
	t.Helper()
	q := url.Values{"app": {"web"}, "appNamespace": {f.ns}, "namespace": {f.ns}, "pod": {"web-0"}, "container": {"app"}}
	for i := 0; i+1 < len(query); i += 2 {
		q.Set(query[i], query[i+1])
	}
	u := "ws" + strings.TrimPrefix(f.url, "http") + "/api/terminal?" + q.Encode()
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	conn, resp, err := websocket.DefaultDialer.DialContext(t.Context(), u, h)
	if resp != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		t.Fatalf("dial %s: %v", u, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return &term{t: t, conn: conn}
}

func (c *term) send(op, data string) {
	c.t.Helper()
	m := map[string]any{"operation": op, "data": data}
	if op == "resize" {
		m = map[string]any{"operation": op, "rows": 24, "cols": 100}
	}
	if err := c.conn.WriteJSON(m); err != nil {
		c.t.Fatalf("send %s: %v", op, err)
	}
}

// until reads output until it holds want; it fails on a close first.
func (c *term) until(want string) {
	c.t.Helper()
	if err := c.read(func() bool { return strings.Contains(c.out.String(), want) }); err != nil {
		c.t.Fatalf("waiting for %q: %v; output so far:\n%s", want, err, c.out.String())
	}
}

// closed reads until the socket closes and returns its close frame.
func (c *term) closed() *websocket.CloseError {
	c.t.Helper()
	err := c.read(func() bool { return false })
	ce, ok := errors.AsType[*websocket.CloseError](err)
	if !ok {
		c.t.Fatalf("want a close frame, got %v; output:\n%s", err, c.out.String())
	}
	return ce
}

func (c *term) read(done func() bool) error {
	_ = c.conn.SetReadDeadline(time.Now().Add(time.Minute))
	for !done() {
		var m struct{ Operation, Data string }
		if err := c.conn.ReadJSON(&m); err != nil {
			return err
		}
		if m.Operation != "stdout" {
			return fmt.Errorf("unexpected operation %q", m.Operation)
		}
		c.out.WriteString(m.Data)
	}
	return nil
}

// terminalEvents returns the notes of the namespace's terminal Events
// with reason.
func terminalEvents(t *testing.T, ns, reason string) []string {
	t.Helper()
	list, err := cluster.Client.EventsV1().Events(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, e := range list.Items {
		if e.Reason == reason && e.Regarding.Kind == "Application" && e.Regarding.Name == "web" {
			notes = append(notes, e.Note)
		}
	}
	return notes
}

// A terminal runs a real command in the pod's container (KWOK runs it on
// this machine) and shows its output; the session leaves a start and an
// end Event naming who and which container.
func TestTerminalRunsACommand(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"exec.enabled": "true", "exec.shells": "no-such-shell,sh"})
	alice, _ := f.login(t, "alice")
	c := f.open(t, alice)
	c.send("resize", "")
	c.send("stdin", "echo graphcd-$((6*7)); stty size\r")
	c.until("graphcd-42")
	c.until("24 100")
	c.send("stdin", "exit\r")
	if ce := c.closed(); ce.Code != websocket.CloseNormalClosure {
		t.Errorf("close = %d %q, want 1000 when the shell exits", ce.Code, ce.Text)
	}
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return len(terminalEvents(t, f.ns, audit.ReasonTerminalEnded)) == 1, nil
	})
	if err != nil {
		t.Fatalf("no TerminalEnded event: %v", err)
	}
	started := terminalEvents(t, f.ns, audit.ReasonTerminalStarted)
	want := "alice opened a terminal in container app of pod " + f.ns + "/web-0 (shell sh)"
	if len(started) != 1 || started[0] != want {
		t.Errorf("TerminalStarted events = %q, want [%q]", started, want)
	}
	if ended := terminalEvents(t, f.ns, audit.ReasonTerminalEnded); !strings.Contains(ended[0], "alice's terminal in container app of pod "+f.ns+"/web-0") ||
		!strings.HasSuffix(ended[0], ": the shell exited") {
		t.Errorf("TerminalEnded event = %q", ended[0])
	}
}

// Without exec.enabled, without the permission, for a pod outside the
// app or with a shell exec.shells does not list, the terminal is refused
// with a code and a reason, and runs nothing.
func TestTerminalRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"exec.enabled": "true"})
	alice, _ := f.login(t, "alice")
	bob, _ := f.login(t, "bob")
	for _, tt := range []struct {
		name  string
		token string
		query []string
		code  int
		why   string
	}{
		{"no permission", bob, nil, terminal.CloseForbidden, "permission denied: exec create default/web"},
		{"no session", "", nil, terminal.CloseUnauthenticated, "log in first"},
		{"a pod outside the app", alice, []string{"pod", "other-0"}, terminal.CloseNotFound, "pod " + f.ns + "/other-0 is not part of application web"},
		{"an unlisted shell", alice, []string{"shell", "zsh"}, terminal.CloseBadRequest, "shell is not one of exec.shells: bash, sh, powershell, cmd"},
		{"a bad name", alice, []string{"container", "../x"}, terminal.CloseBadRequest, "container is not a valid name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ce := f.open(t, tt.token, tt.query...).closed()
			if ce.Code != tt.code || ce.Text != tt.why {
				t.Errorf("close = %d %q, want %d %q", ce.Code, ce.Text, tt.code, tt.why)
			}
		})
	}
	if got := terminalEvents(t, f.ns, audit.ReasonTerminalStarted); len(got) != 0 {
		t.Errorf("refused terminals left events: %q", got)
	}

	t.Run("cross-site origin", func(t *testing.T) {
		u := "ws" + strings.TrimPrefix(f.url, "http") + "/api/terminal?app=web"
		conn, resp, err := websocket.DefaultDialer.DialContext(t.Context(), u, http.Header{"Origin": {"https://evil.example.com"}, "Authorization": {"Bearer " + alice}})
		if conn != nil {
			_ = conn.Close()
		}
		status := 0
		if resp != nil {
			status = resp.StatusCode
			_ = resp.Body.Close()
		}
		if err == nil || status != http.StatusForbidden {
			t.Errorf("handshake from another origin: %v, HTTP %d, want 403", err, status)
		}
	})

	t.Run("disabled", func(t *testing.T) {
		g := newFixture(t, nil)
		token, _ := g.login(t, "alice")
		ce := g.open(t, token).closed()
		if ce.Code != terminal.CloseForbidden || !strings.Contains(ce.Text, "exec.enabled") {
			t.Errorf("close = %d %q, want 4403 naming exec.enabled", ce.Code, ce.Text)
		}
	})
}

// An open terminal is closed when its token is revoked, and when a
// policy change takes the permission away.
func TestTerminalClosesWhenAccessEnds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"exec.enabled": "true"})

	t.Run("token revoked", func(t *testing.T) {
		token, claims := f.login(t, "alice")
		c := f.open(t, token)
		c.send("stdin", "echo before-$((1+1))\r")
		c.until("before-2")
		if err := f.sessions.Issuer.Revoke(t.Context(), claims); err != nil {
			t.Fatal(err)
		}
		ce := c.closed()
		if ce.Code != terminal.CloseUnauthenticated || ce.Text != "your session ended: token revoked" {
			t.Errorf("close = %d %q, want 4401 saying the token was revoked", ce.Code, ce.Text)
		}
	})

	t.Run("token expired", func(t *testing.T) {
		token, _, err := f.sessions.Issuer.Issue(t.Context(), session.Template{Subject: "alice", Kind: session.KindSession, TTL: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		c := f.open(t, token)
		c.send("stdin", "echo alive\r")
		c.until("alive")
		if ce := c.closed(); ce.Code != terminal.CloseUnauthenticated || ce.Text != "your session ended: token expired" {
			t.Errorf("close = %d %q, want 4401 saying the token expired", ce.Code, ce.Text)
		}
	})

	t.Run("permission revoked", func(t *testing.T) {
		token, _ := f.login(t, "alice")
		c := f.open(t, token)
		c.send("stdin", "echo still-$((2+2))\r")
		c.until("still-4")
		f.setPolicy(t, "p, alice, applications, get, default/*, allow\n")
		ce := c.closed()
		if ce.Code != terminal.CloseForbidden || ce.Text != "permission revoked: permission denied: exec create default/web" {
			t.Errorf("close = %d %q, want 4403 saying the permission was revoked", ce.Code, ce.Text)
		}
		if !strings.Contains(c.out.String(), "permission revoked") {
			t.Errorf("the terminal does not say why it closed:\n%s", c.out.String())
		}
	})
}

// A user has at most MaxSessionsPerUser terminals open, and a terminal
// without input for IdleTimeout closes.
func TestTerminalLimits(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"exec.enabled": "true"}, func(o *terminal.Options) {
		// Long enough that neither open terminal idles out, on a loaded
		// machine, before the third is refused.
		o.MaxSessionsPerUser, o.IdleTimeout = 2, 10*time.Second
	})
	token, _ := f.login(t, "alice")
	first := f.open(t, token)
	first.send("stdin", "echo one-$((0+1))\r")
	first.until("one-1")
	// The second has surely taken its slot once it answered.
	second := f.open(t, token)
	second.send("stdin", "echo two-$((1+1))\r")
	second.until("two-2")
	if ce := f.open(t, token).closed(); ce.Code != terminal.CloseTooMany {
		t.Errorf("a third terminal: close %d %q, want %d", ce.Code, ce.Text, terminal.CloseTooMany)
	}
	if ce := second.closed(); ce.Code != terminal.CloseIdle || ce.Text != "no input for 10s" {
		t.Errorf("an idle terminal: close %d %q, want %d saying why", ce.Code, ce.Text, terminal.CloseIdle)
	}
	// The idle one's slot is free again.
	third := f.open(t, token)
	third.send("stdin", "echo three-$((1+2))\r")
	third.until("three-3")
}
