//go:build integration

package security

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// attack is one case of the suite: what a hostile tenant sends, and the
// checks that it was refused and that nothing was written. Its name and
// class appear in docs/security.md's table (TestCaseTable).
type attack struct {
	name  string
	class string
	run   func(t *testing.T, e *env)
}

// The classes of attack, as docs/security.md's table names them, each a
// class of Argo CD advisory.
const (
	classTraversal = "path traversal and symlinks out of a checkout"
	classBomb      = "YAML and archive bombs"
	classCache     = "cache poisoning"
	classTokens    = "forged, unsigned, expired and foreign tokens"
	classLogin     = "login brute force and user enumeration"
	classCSRF      = "CSRF and cross-origin websockets"
	classRBAC      = "RBAC bypass through a body naming another project or cluster"
	classHooks     = "project rules bypassed by hooks"
	classLeaks     = "secrets leaking into errors, events, diffs or logs"
	classTenant    = "tenant escape through impersonation"
)

var attacks = []attack{
	{"app-path-outside-checkout", classTraversal, pathOutsideCheckout},
	{"helm-values-outside-checkout", classTraversal, valuesOutsideCheckout},
	{"symlink-out-of-checkout", classTraversal, symlinkOutOfCheckout},
	{"yaml-alias-bomb", classBomb, yamlAliasBomb},
	{"cache-entry-replayed-across-apps", classCache, cacheEntryReplayed},
	{"chart-archive-bomb", classBomb, chartArchiveBomb},
	{"token-wrong-key", classTokens, forgedToken(func(c jwt.MapClaims) {}, []byte("not-the-server-key-0123456789abcdef"), jwt.SigningMethodHS256)},
	{"token-unsigned", classTokens, forgedToken(func(c jwt.MapClaims) {}, nil, jwt.SigningMethodNone)},
	{"token-expired", classTokens, forgedToken(func(c jwt.MapClaims) {
		c["iat"], c["nbf"], c["exp"] = time.Now().Add(-2*time.Hour).Unix(), time.Now().Add(-2*time.Hour).Unix(), time.Now().Add(-time.Hour).Unix()
	}, nil, jwt.SigningMethodHS256)},
	{"token-foreign-audience", classTokens, forgedToken(func(c jwt.MapClaims) { c["aud"] = []string{"argo-cd"} }, nil, jwt.SigningMethodHS256)},
	{"token-foreign-issuer", classTokens, forgedToken(func(c jwt.MapClaims) { c["iss"] = "https://dex.example" }, nil, jwt.SigningMethodHS256)},
	{"login-enumeration", classLogin, loginEnumeration},
	{"login-brute-force", classLogin, loginBruteForce},
	{"csrf-form-post", classCSRF, csrfFormPost},
	{"websocket-foreign-origin", classCSRF, websocketForeignOrigin},
	{"create-in-other-project", classRBAC, createInOtherProject},
	{"upsert-over-other-tenant-app", classRBAC, upsertOverOtherTenant},
	{"patch-app-into-other-project", classRBAC, patchIntoOtherProject},
	{"destination-outside-project", classRBAC, destinationOutsideProject},
	{"act-on-other-tenant-app", classRBAC, actOnOtherTenantApp},
	{"cluster-in-cluster-takeover", classRBAC, clusterInClusterTakeover},
	{"cluster-name-shadowing", classRBAC, clusterNameShadowing},
	{"cluster-upsert-over-other-tenant", classRBAC, clusterUpsertOverOtherTenant},
	{"hook-cluster-resource", classHooks, hookClusterResource},
	{"hook-other-namespace", classHooks, hookOtherNamespace},
	{"repository-credentials-in-errors", classLeaks, repositoryCredentialsInErrors},
	{"secret-in-diff-and-events", classLeaks, secretInDiffAndEvents},
	{"impersonation-cluster-admin", classTenant, impersonationClusterAdmin},
	{"impersonation-other-namespace", classTenant, impersonationOtherNamespace},
}

// TestAttacks runs every case against one server, in parallel, and then
// reads the server's whole log (at debug level) for any secret marker.
func TestAttacks(t *testing.T) {
	e := startEnv(t)
	t.Run("cases", func(t *testing.T) {
		for _, a := range attacks {
			t.Run(a.name, func(t *testing.T) {
				t.Parallel()
				a.run(t, e)
			})
		}
	})
	t.Run("no-secret-in-logs", func(t *testing.T) {
		logs := e.logs.String()
		for _, m := range markers {
			if i := strings.Index(logs, m); i >= 0 {
				t.Errorf("the server's log holds the secret %q: ...%s...", m, logs[max(0, i-300):min(len(logs), i+100)])
			}
		}
	})
}

// comparisonError waits for app's ComparisonError condition and returns
// its message.
func (e *env) comparisonError(t *testing.T, name string) string {
	t.Helper()
	var msg string
	poll(t, name+"'s ComparisonError", func() (bool, string) {
		app := e.app(t, name)
		if app == nil {
			return false, "no app"
		}
		for _, c := range app.Status.Conditions {
			if c.Type == v1alpha1.ApplicationConditionComparisonError {
				msg = c.Message
				return true, ""
			}
		}
		return false, fmt.Sprintf("conditions %+v", app.Status.Conditions)
	})
	return msg
}

// noConfigMap checks that the ConfigMap name does not exist in namespace.
func noConfigMap(t *testing.T, namespace, name string) {
	t.Helper()
	_, err := cluster.Client.CoreV1().ConfigMaps(namespace).Get(t.Context(), name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap %s/%s: %v, want it never written", namespace, name, err)
	}
}

func pathOutsideCheckout(t *testing.T, e *env) {
	e.createAs(t, "alice", "trav-path", "team-a", "../../../../../../etc", e.nsA)
	// The path is refused as missing from the repository, whatever is
	// outside it, so nothing can be learnt of the host's files.
	if msg := e.comparisonError(t, "trav-path"); !strings.Contains(msg, "does not exist in the repository") {
		t.Errorf("condition %q, want the path refused as not in the repository", msg)
	}
	a := e.ask(t, e.tokens["alice"], `{ application(name: "trav-path") { manifests } }`, nil)
	if strings.Contains(a.body, "root:") {
		t.Errorf("manifests answer shows a file outside the checkout: %s", a.body)
	}
}

func valuesOutsideCheckout(t *testing.T, e *env) {
	m := strings.Replace(e.manifest("trav-values", "team-a", "chart", e.nsA), "targetRevision: main}",
		"targetRevision: main, helm: {valueFiles: [../../../../../../../etc/passwd]}}", 1)
	e.mustAsk(t, e.tokens["alice"], createApp, map[string]any{"m": m, "upsert": false})
	if msg := e.comparisonError(t, "trav-values"); !strings.Contains(msg, "outside") {
		t.Errorf("condition %q, want it to say the value file is outside the repository", msg)
	}
	noConfigMap(t, e.nsA, "chart")
}

func symlinkOutOfCheckout(t *testing.T, e *env) {
	e.createAs(t, "alice", "trav-link", "team-a", "escape", e.nsA)
	msg := e.comparisonError(t, "trav-link")
	if !strings.Contains(msg, "escape/cm.yaml: path escapes from parent") {
		t.Errorf("condition %q, want the symlink refused as escaping the repository", msg)
	}
	host, _ := osHostname()
	if host != "" && strings.Contains(msg, host) {
		t.Errorf("condition %q shows the content of the file the symlink points at", msg)
	}
}

func yamlAliasBomb(t *testing.T, e *env) {
	e.createAs(t, "alice", "bomb", "team-a", "bomb", e.nsA)
	msg := e.comparisonError(t, "bomb")
	if !strings.Contains(strings.ToLower(msg), "alias") {
		t.Errorf("condition %q, want the alias expansion named", msg)
	}
	// The server still answers everyone else.
	e.mustAsk(t, e.tokens["bob"], `{ me { username } }`, nil)
	noConfigMap(t, e.nsA, "bomb")
}

// forgedToken is a case that creates an application with a token
// claiming to be alice's, changed by edit and signed with key (the
// server's own when nil) by method: it must be refused with 401 and
// create nothing.
func forgedToken(edit func(jwt.MapClaims), key []byte, method jwt.SigningMethod) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		claims := jwt.MapClaims{}
		issued, _, err := jwt.NewParser().ParseUnverified(e.tokens["alice"], claims)
		if err != nil {
			t.Fatal(err)
		}
		// The token names its key (kid), as every token alice holds does.
		sign := func(m jwt.SigningMethod, key any) (string, error) {
			tok := jwt.NewWithClaims(m, claims)
			tok.Header["kid"] = issued.Header["kid"]
			return tok.SignedString(key)
		}
		// Control: the claims as issued, signed again with the server's
		// key, are accepted, so what is refused below is the change.
		resigned, err := sign(jwt.SigningMethodHS256, e.secretKey)
		if err != nil {
			t.Fatal(err)
		}
		e.mustAsk(t, resigned, `{ me { username } }`, nil)
		edit(claims)
		var signed string
		if method == jwt.SigningMethodNone {
			signed, err = sign(method, jwt.UnsafeAllowNoneSignatureType)
		} else {
			if key == nil {
				key = e.secretKey
			}
			signed, err = sign(method, key)
		}
		if err != nil {
			t.Fatal(err)
		}
		name := "forged-" + strings.ToLower(strings.ReplaceAll(t.Name()[strings.LastIndex(t.Name(), "/")+1:], "token-", ""))
		a := e.ask(t, signed, createApp, map[string]any{"m": e.manifest(name, "team-a", "good", e.nsA), "upsert": false})
		if ok, got := a.refused("UNAUTHENTICATED", "invalid or expired session: log in again"); !ok {
			t.Errorf("forged token: %s, want 401", got)
		}
		if e.app(t, name) != nil {
			t.Errorf("the forged token created app %s", name)
		}
	}
}

func loginEnumeration(t *testing.T, e *env) {
	c := clientFrom("127.0.0.21")
	codeKnown, bodyKnown := e.login(t, c, "alice", "wrong-password")
	codeUnknown, bodyUnknown := e.login(t, c, "nobody-here", "wrong-password")
	// dave's account is disabled: his right password answers as a wrong one.
	codeDisabled, bodyDisabled := e.login(t, c, "dave", tenantPassword)
	if codeKnown != http.StatusUnauthorized || codeKnown != codeUnknown || bodyKnown != bodyUnknown || bodyUnknown != bodyDisabled || codeDisabled != codeKnown {
		t.Errorf("a wrong password, an unknown user and a disabled one answer differently: %d %q / %d %q / %d %q",
			codeKnown, bodyKnown, codeUnknown, bodyUnknown, codeDisabled, bodyDisabled)
	}
}

func loginBruteForce(t *testing.T, e *env) {
	c := clientFrom("127.0.0.22")
	var code int
	var body string
	for i := range 10 {
		if code, body = e.login(t, c, "bob", fmt.Sprint("guess-", i)); code == http.StatusTooManyRequests {
			break
		}
	}
	if code != http.StatusTooManyRequests || !strings.Contains(body, "too many failed sign-in attempts") {
		t.Fatalf("ten wrong guesses from one address: last %d %s, want 429", code, body)
	}
	// Refused even with the right password, while bob elsewhere is not.
	if code, _ := e.login(t, c, "bob", tenantPassword); code != http.StatusTooManyRequests {
		t.Errorf("the guesser with the right password: %d, want 429", code)
	}
	if code, body := e.login(t, clientFrom("127.0.0.23"), "bob", tenantPassword); code != http.StatusOK {
		t.Errorf("bob from another address: %d %s, want 200", code, body)
	}
	// A proxy the server does not trust cannot make the guesser new.
	spoofed := clientFrom("127.0.0.22")
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.base+"/auth/login",
		strings.NewReader(`{"username":"bob","password":"guess-x"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", "198.51.100.7")
	if code, _ := do(t, spoofed, req); code != http.StatusTooManyRequests {
		t.Errorf("the guesser behind a forged X-Forwarded-For: %d, want 429", code)
	}
}

// clientFrom is an HTTP client whose connections leave from the loopback
// address ip, so that the server sees another client.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

func csrfFormPost(t *testing.T, e *env) {
	// What a page on another site can send without a preflight: a form
	// post (text/plain) carrying the console's cookie.
	body, _ := json.Marshal(map[string]any{"query": createApp, "variables": map[string]any{"m": e.manifest("csrf", "team-a", "good", e.nsA), "upsert": false}})
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.base+"/api/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Origin", "https://evil.example")
		req.AddCookie(&http.Cookie{Name: "graphcd.token", Value: e.tokens["alice"]})
		code, answer := do(t, http.DefaultClient, req)
		if code < 400 {
			t.Errorf("%s post from another site: %d %s, want it refused", ct, code, answer)
		}
	}
	if e.app(t, "csrf") != nil {
		t.Error("a cross-site form post created an application")
	}
}

func websocketForeignOrigin(t *testing.T, e *env) {
	url := "ws" + strings.TrimPrefix(e.base, "http") + "/api/graphql"
	h := http.Header{"Origin": {"https://evil.example"}, "Sec-WebSocket-Protocol": {"graphql-transport-ws"}}
	h.Add("Cookie", "graphcd.token="+e.tokens["alice"])
	conn, resp, err := websocket.DefaultDialer.DialContext(t.Context(), url, h)
	if resp != nil {
		_ = resp.Body.Close()
	}
	if err == nil {
		_ = conn.Close()
		t.Fatal("a websocket from another origin was accepted")
	}
	if resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("websocket from another origin: %v %v, want 403", resp, err)
	}
}

func createInOtherProject(t *testing.T, e *env) {
	a := e.ask(t, e.tokens["alice"], createApp, map[string]any{"m": e.manifest("into-b", "team-b", "good", e.nsB), "upsert": false})
	if ok, got := a.refused("FORBIDDEN", "permission denied: applications create team-b/into-b"); !ok {
		t.Errorf("alice creating into team-b: %s", got)
	}
	if e.app(t, "into-b") != nil {
		t.Error("alice's app was written into team-b")
	}
}

func upsertOverOtherTenant(t *testing.T, e *env) {
	e.createAs(t, "bob", "bobs-shop", "team-b", "good", e.nsB)
	before := e.app(t, "bobs-shop")
	// The same answer whether bob's app exists or not.
	for _, name := range []string{"bobs-shop", "no-such-app"} {
		a := e.ask(t, e.tokens["alice"], createApp, map[string]any{"m": e.manifest(name, "team-a", "good", e.nsA), "upsert": true})
		if name == "no-such-app" {
			if len(a.Errors) > 0 {
				t.Fatalf("alice upserting a new app of her own: %s", a.body)
			}
			continue
		}
		if ok, got := a.refused("FORBIDDEN", "permission denied: applications update team-b/bobs-shop"); !ok {
			if ok2, _ := a.refused("FORBIDDEN", "permission denied: applications create"); !ok2 {
				t.Errorf("alice upserting over bob's app: %s", got)
			}
		}
	}
	// The controller writes bob's status meanwhile; his spec is what alice
	// must not change.
	if after := e.app(t, "bobs-shop"); after.Generation != before.Generation || after.Spec.Project != "team-b" {
		t.Errorf("bob's app changed: project %s, generation %d → %d", after.Spec.Project, before.Generation, after.Generation)
	}
}

func patchIntoOtherProject(t *testing.T, e *env) {
	e.createAs(t, "alice", "mover", "team-a", "good", e.nsA)
	before := e.app(t, "mover")
	a := e.ask(t, e.tokens["alice"], `mutation($p: String!) { patchApplication(input: {application: {name: "mover"}, patch: $p}) { project } }`,
		map[string]any{"p": fmt.Sprintf(`{"spec": {"project": "team-b", "destination": {"namespace": %q}}}`, e.nsB)})
	if ok, got := a.refused("FORBIDDEN", "permission denied: applications update team-b/mover"); !ok {
		t.Errorf("alice moving her app into team-b: %s", got)
	}
	if after := e.app(t, "mover"); after.Generation != before.Generation || after.Spec.Project != "team-a" {
		t.Error("the refused patch changed the app")
	}
}

func destinationOutsideProject(t *testing.T, e *env) {
	for _, dest := range []struct{ server, namespace string }{
		{inClusterURL, e.nsB},
		{"https://192.0.2.10:6443", e.nsA},
	} {
		m := strings.Replace(e.manifest("far-away", "team-a", "good", e.nsA), fmt.Sprintf("destination: {server: %q, namespace: %s}", inClusterURL, e.nsA),
			fmt.Sprintf("destination: {server: %q, namespace: %s}", dest.server, dest.namespace), 1)
		a := e.ask(t, e.tokens["alice"], createApp, map[string]any{"m": m, "upsert": false})
		if ok, got := a.refused("BAD_USER_INPUT", "do not match any of the allowed destinations in project 'team-a'"); !ok {
			t.Errorf("destination %v: %s", dest, got)
		}
	}
	if e.app(t, "far-away") != nil {
		t.Error("an app with a destination outside its project was written")
	}
}

func actOnOtherTenantApp(t *testing.T, e *env) {
	e.createAs(t, "bob", "bobs-db", "team-b", "good", e.nsB)
	before := e.app(t, "bobs-db")
	// alice gets the same answer for bob's app as for one that does not
	// exist, so she cannot learn its name.
	for _, op := range []string{
		`mutation($n: String!) { syncApplication(input: {application: {name: $n}}) { name } }`,
		`mutation($n: String!) { deleteApplication(input: {application: {name: $n}}) }`,
		`mutation($n: String!) { refreshApplication(input: {application: {name: $n}}) { name } }`,
		`mutation($n: String!) { patchApplicationResource(input: {application: {name: $n}, version: "v1", kind: "ConfigMap", namespace: "kube-system", name: "x"}, patch: "{}") }`,
	} {
		theirs := e.ask(t, e.tokens["alice"], op, map[string]any{"n": "bobs-db"})
		none := e.ask(t, e.tokens["alice"], op, map[string]any{"n": "no-such-db"})
		if len(theirs.Errors) == 0 || len(none.Errors) == 0 {
			t.Errorf("%s: bob's app %s / none %s, want both refused", strings.Fields(op)[2], theirs.body, none.body)
			continue
		}
		if theirs.Errors[0].Extensions.Code != none.Errors[0].Extensions.Code ||
			strings.ReplaceAll(theirs.Errors[0].Message, "bobs-db", "X") != strings.ReplaceAll(none.Errors[0].Message, "no-such-db", "X") {
			t.Errorf("%s tells bob's app from a missing one: %s / %s", strings.Fields(op)[2], theirs.body, none.body)
		}
	}
	if after := e.app(t, "bobs-db"); after == nil || after.Generation != before.Generation || after.Operation != nil {
		t.Error("alice's refused requests changed bob's app")
	}
}

const addCluster = `mutation($in: ClusterInput!) { addCluster(input: $in) { server } }`

// clusterInput is the input of addCluster for a cluster of project.
func clusterInput(name, server, project string, upsert bool) map[string]any {
	return map[string]any{"in": map[string]any{"name": name, "server": server, "project": project, "bearerToken": "tenant-token", "upsert": upsert}}
}

func clusterInClusterTakeover(t *testing.T, e *env) {
	// No Secret declares the cluster graphcd runs in; it is a global
	// cluster all the same, which alice may not make team-a's.
	for _, tt := range []struct {
		name   string
		upsert bool
		want   string
	}{
		{"in-cluster", false, "permission denied: clusters create team-a/" + inClusterURL},
		{"in-cluster", true, "permission denied: clusters update team-a/" + inClusterURL},
		{"team-a-local", true, "permission denied: clusters update team-a/" + inClusterURL},
	} {
		a := e.ask(t, e.tokens["alice"], addCluster, clusterInput(tt.name, inClusterURL, "team-a", tt.upsert))
		if ok, got := a.refused("FORBIDDEN", tt.want); !ok {
			t.Errorf("alice declaring in-cluster as %s (upsert %v): %s", tt.name, tt.upsert, got)
		}
	}
	if a := e.ask(t, e.tokens["alice"], `mutation { removeCluster(server: "`+inClusterURL+`") }`, nil); len(a.Errors) == 0 || a.Errors[0].Extensions.Code != "NOT_FOUND" {
		t.Errorf("alice removing in-cluster: %s, want NOT_FOUND", a.body)
	}
	if secs := e.clusterSecrets(t, inClusterURL); len(secs) > 0 {
		t.Errorf("cluster Secrets for in-cluster after alice's refused requests: %v", secs)
	}
	// bob's apps still deploy to in-cluster, as a global cluster.
	e.createAs(t, "bob", "bobs-local", "team-b", "good", e.nsB)
}

func clusterNameShadowing(t *testing.T, e *env) {
	const bobs = "https://192.0.2.21:6443"
	e.mustAsk(t, e.tokens["bob"], addCluster, clusterInput("team-b-prod", bobs, "team-b", false))
	before := e.clusterSecrets(t, bobs)
	// alice's server under the built-in name, and under bob's cluster's
	// name, would win the name for apps that deploy by name.
	const alices = "https://192.0.2.22:6443"
	for _, name := range []string{"in-cluster", "team-b-prod"} {
		for _, upsert := range []bool{false, true} {
			a := e.ask(t, e.tokens["alice"], addCluster, clusterInput(name, alices, "team-a", upsert))
			if ok, _ := a.refused("CONFLICT", "the name is used by another cluster"); !ok || strings.Contains(a.body, "team-b") {
				t.Errorf("alice naming her cluster %s (upsert %v): %s, want CONFLICT without naming team-b", name, upsert, a.body)
			}
		}
	}
	if secs := e.clusterSecrets(t, alices); len(secs) > 0 {
		t.Errorf("alice's cluster was written: %v", secs)
	}
	if after := e.clusterSecrets(t, bobs); !maps.Equal(after, before) {
		t.Errorf("bob's cluster Secret changed: %v → %v", before, after)
	}
}

func clusterUpsertOverOtherTenant(t *testing.T, e *env) {
	const bobs = "https://192.0.2.23:6443"
	e.mustAsk(t, e.tokens["bob"], addCluster, clusterInput("team-b-edge", bobs, "team-b", false))
	before := e.clusterSecrets(t, bobs)
	// alice gets the refusal of her own new object, as if bob's cluster did
	// not exist: neither its project nor that it exists.
	for upsert, want := range map[bool]string{
		false: "permission denied: clusters create team-a/" + bobs,
		true:  "permission denied: clusters update team-a/" + bobs,
	} {
		a := e.ask(t, e.tokens["alice"], addCluster, clusterInput("team-a-edge", bobs, "team-a", upsert))
		if ok, _ := a.refused("FORBIDDEN", want); !ok || strings.Contains(a.body, "team-b") {
			t.Errorf("alice declaring bob's cluster as hers (upsert %v): %s, want FORBIDDEN %q", upsert, a.body, want)
		}
	}
	if a := e.ask(t, e.tokens["alice"], `mutation { removeCluster(server: "`+bobs+`") }`, nil); len(a.Errors) == 0 || a.Errors[0].Extensions.Code != "NOT_FOUND" {
		t.Errorf("alice removing bob's cluster: %s, want NOT_FOUND", a.body)
	}
	if after := e.clusterSecrets(t, bobs); !maps.Equal(after, before) {
		t.Errorf("bob's cluster Secret changed: %v → %v", before, after)
	}
}

// clusterSecrets returns the name and resource version of each cluster
// Secret in graphcd's namespace whose server is server.
func (e *env) clusterSecrets(t *testing.T, server string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, label := range []string{"graphcd.io/secret-type", "argocd.argoproj.io/secret-type"} {
		secs, err := cluster.Client.CoreV1().Secrets(e.ns).List(t.Context(), metav1.ListOptions{LabelSelector: label + "=cluster"})
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range secs.Items {
			if got := strings.TrimRight(string(sec.Data["server"]), "/"); got == server {
				out[sec.Name] = sec.ResourceVersion
			}
		}
	}
	return out
}

func hookClusterResource(t *testing.T, e *env) {
	e.createAs(t, "alice", "hook-cr", "team-a", "hook-cluster", e.nsA)
	state := e.syncAndWait(t, "alice", "hook-cr")
	if state.Phase == v1alpha1.OperationSucceeded || !strings.Contains(state.Message, "not permitted in project") {
		t.Errorf("sync with a ClusterRole hook: %s %q, want it failed as not permitted in project", state.Phase, state.Message)
	}
	t.Logf("refused: %s", state.Message)
	if _, err := cluster.Client.RbacV1().ClusterRoles().Get(t.Context(), "escalate-hook", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the hook's ClusterRole: %v, want it never created", err)
	}
	noConfigMap(t, e.nsA, "after-hook")
}

func hookOtherNamespace(t *testing.T, e *env) {
	// The hook's manifest names bob's namespace.
	name := "hook-ns"
	e.createAs(t, "alice", name, "team-a", "hook-otherns", e.nsA)
	state := e.syncAndWait(t, "alice", name)
	if state.Phase == v1alpha1.OperationSucceeded || !strings.Contains(state.Message, "do not match any of the allowed destinations in project 'team-a'") {
		t.Errorf("sync with a hook in another namespace: %s %q, want it refused by the project", state.Phase, state.Message)
	}
	t.Logf("refused: %s", state.Message)
	noConfigMap(t, e.nsB, "planted")
}

func repositoryCredentialsInErrors(t *testing.T, e *env) {
	a := e.ask(t, e.tokens["admin"], `mutation($in: RepositoryInput!) { createRepository(input: $in) { url } }`,
		map[string]any{"in": map[string]any{"url": "http://127.0.0.1:1/nothing.git", "username": "git", "password": repoPassword}})
	if len(a.Errors) == 0 {
		t.Fatalf("a repository that cannot be reached was stored: %s", a.body)
	}
	if strings.Contains(a.body, repoPassword) {
		t.Errorf("the error shows the password: %s", a.body)
	}
	if secs, err := cluster.Client.CoreV1().Secrets(e.ns).List(t.Context(), metav1.ListOptions{LabelSelector: "argocd.argoproj.io/secret-type"}); err != nil || len(secs.Items) > 0 {
		t.Errorf("repository Secrets after a failed test: %v %v", secs, err)
	}
}

func secretInDiffAndEvents(t *testing.T, e *env) {
	e.createAs(t, "alice", "with-secret", "team-a", "secret", e.nsA)
	// A live Secret of the same name with another value, so the diff has
	// something to show.
	live := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: e.nsA}, StringData: map[string]string{"password": "live-" + secretMarker}}
	if _, err := cluster.Client.CoreV1().Secrets(e.nsA).Create(t.Context(), live, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var body string
	poll(t, "the Secret's diff", func() (bool, string) {
		a := e.ask(t, e.tokens["alice"], `{ application(name: "with-secret") { managedResources { kind name live desired diff } events { reason note } status { conditions { message } } } }`, nil)
		body = a.body
		return strings.Contains(a.body, `"diff":"`) && !strings.Contains(a.body, `"diff":""`), a.body
	})
	if strings.Contains(body, secretMarker) {
		t.Errorf("the app's resources, events or conditions show the Secret's value: %s", body)
	}
	state := e.syncAndWait(t, "alice", "with-secret")
	events, err := cluster.Client.CoreV1().Events("").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events.Items {
		if strings.Contains(ev.Message, secretMarker) {
			t.Errorf("event %s/%s shows the Secret's value: %s", ev.Namespace, ev.Name, ev.Message)
		}
	}
	if strings.Contains(state.Message, secretMarker) {
		t.Errorf("the sync's message shows the Secret's value: %s", state.Message)
	}
}

// cacheEntryReplayed is an attacker who can write to Redis but lacks the
// signing key: bob's app's stored state copied under alice's app's key,
// and a state of alice's app rewritten with a forged signature. The API
// must refuse both (and say so in its log) and never show bob's objects
// as alice's.
func cacheEntryReplayed(t *testing.T, e *env) {
	e.createAs(t, "alice", "cache-a", "team-a", "good", e.nsA)
	e.createAs(t, "bob", "cache-b", "team-b", "chart", e.nsB)
	keyA, keyB := "graphcd|appstate|"+e.ns+"/cache-a", "graphcd|appstate|"+e.ns+"/cache-b"
	var stateB []byte
	poll(t, "both apps' states in Redis", func() (bool, string) {
		var err error
		stateB, err = e.redis.Get(t.Context(), keyB).Bytes()
		n, _ := e.redis.Exists(t.Context(), keyA).Result()
		return err == nil && n == 1, fmt.Sprint(err)
	})
	read := func() string {
		return string(e.mustAsk(t, e.tokens["alice"], `{ application(name: "cache-a") { managedResources { kind name } resourceTree { nodes { kind name } } } }`, nil))
	}
	for _, forged := range []struct {
		what  string
		value []byte
	}{
		{"bob's state replayed under alice's key", stateB},
		{"a state with a forged signature", append(bytes.Repeat([]byte{0x42}, 32), stateB[32:]...)},
	} {
		before := strings.Count(e.logs.String(), "application state failed its signature check")
		// The controller rewrites the state as it reconciles; write the
		// forgery until the API has read (and refused) it.
		poll(t, "the API to refuse "+forged.what, func() (bool, string) {
			if err := e.redis.Set(t.Context(), keyA, forged.value, time.Hour).Err(); err != nil {
				t.Fatal(err)
			}
			answer := read()
			if strings.Contains(answer, `"name":"chart"`) {
				t.Fatalf("%s: alice's app shows bob's object: %s", forged.what, answer)
			}
			return strings.Count(e.logs.String(), "application state failed its signature check") > before, "no refusal logged yet"
		})
	}
}

func chartArchiveBomb(t *testing.T, e *env) {
	e.createAs(t, "alice", "archive-bomb", "team-a", "archive", e.nsA)
	msg := e.comparisonError(t, "archive-bomb")
	t.Logf("refused: %s", msg)
	if !strings.Contains(msg, "dep-0.1.0.tgz") {
		t.Errorf("condition %q, want the archive named", msg)
	}
	e.mustAsk(t, e.tokens["bob"], `{ me { username } }`, nil)
}

// impersonationClusterAdmin is alice's app in team-wide, a project that
// permits every cluster-scoped kind, binding her own service account to
// cluster-admin: the project lets it through, her service account may
// not, and the API server says so.
func impersonationClusterAdmin(t *testing.T, e *env) {
	e.createAs(t, "alice", "escape-wide", "team-wide", "cluster-escape", e.nsA)
	state := e.syncAndWait(t, "alice", "escape-wide")
	want := fmt.Sprintf(`User "system:serviceaccount:%s:deployer" cannot`, e.nsA)
	t.Logf("refused: %s %q %s", state.Phase, state.Message, syncMessages(state))
	if state.Phase == v1alpha1.OperationSucceeded || !strings.Contains(fmt.Sprint(state.SyncResult), want) && !strings.Contains(state.Message, want) {
		t.Errorf("sync binding cluster-admin: %s %q %+v, want the API server's Forbidden for %s", state.Phase, state.Message, state.SyncResult, want)
	}
	if _, err := cluster.Client.RbacV1().ClusterRoleBindings().Get(t.Context(), "tenant-escape", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ClusterRoleBinding: %v, want it never created", err)
	}
}

// syncMessages lists the resource results of a sync, one per line.
func syncMessages(st *v1alpha1.OperationState) string {
	if st.SyncResult == nil {
		return ""
	}
	var b strings.Builder
	for _, r := range st.SyncResult.Resources {
		fmt.Fprintf(&b, "\n  %s %s/%s: %s %s", r.Kind, r.Namespace, r.Name, r.Status, r.Message)
	}
	return b.String()
}

// impersonationOtherNamespace is alice's app whose object names bob's
// namespace while its project, wrongly, permits both: her service
// account cannot write there.
func impersonationOtherNamespace(t *testing.T, e *env) {
	e.createAs(t, "alice", "escape-ns", "team-wide", "neighbour", e.nsA)
	state := e.syncAndWait(t, "alice", "escape-ns")
	want := fmt.Sprintf(`User "system:serviceaccount:%s:deployer" cannot`, e.nsA)
	t.Logf("refused: %s %q %s", state.Phase, state.Message, syncMessages(state))
	if state.Phase == v1alpha1.OperationSucceeded || !strings.Contains(fmt.Sprint(state.SyncResult), want) && !strings.Contains(state.Message, want) {
		t.Errorf("sync into bob's namespace: %s %q %+v, want the API server's Forbidden for %s", state.Phase, state.Message, state.SyncResult, want)
	}
	noConfigMap(t, e.nsB, "planted-by-a")
}
