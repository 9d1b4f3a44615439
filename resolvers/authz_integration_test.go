//go:build integration

package resolvers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver"
	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/internal/kubewatch"
	"github.com/graphcd/graphcd/resolvers"
)

// tokenTable authenticates the tokens it lists: a stand-in for signed
// sessions, so these tests look only at authorization.
type tokenTable map[string]auth.Principal

func (tt tokenTable) Authenticate(ctx context.Context, token string) (context.Context, error) {
	p, ok := tt[token]
	if !ok {
		return ctx, errors.New("invalid token")
	}
	return auth.NewContext(ctx, p), nil
}

func (tokenTable) Bind(ctx context.Context) context.Context { return ctx }

// authAPI serves the shared index with RBAC from the graphcd-rbac-cm of
// ns (watched, as the server does) and the roles of every AppProject;
// authn checks tokens, and accounts (optional) manages them.
func authAPI(t *testing.T, ns string, authn apiserver.Authenticator, accounts resolvers.AccountService) string {
	t.Helper()
	a := auth.NewAuthorizer()
	quiet := slog.New(slog.DiscardHandler)
	if err := auth.WatchPolicy(t.Context(), kubewatch.NewSource(t.Context(), cluster.Client, ns), a, quiet); err != nil {
		t.Fatal(err)
	}
	if err := auth.WatchProjects(t.Context(), objects, a, quiet); err != nil {
		t.Fatal(err)
	}
	opts, err := apiOptions(events)
	if err != nil {
		t.Fatal(err)
	}
	opts.API.Authz, opts.API.AccountService, opts.Authenticator = a, accounts, authn
	ts, err := serveAPI(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	return ts.URL
}

// setPolicy writes graphcd-rbac-cm in ns.
func setPolicy(t *testing.T, ns, csv string) {
	t.Helper()
	cms := cluster.Client.CoreV1().ConfigMaps(ns)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: auth.RBACConfigMap}, Data: map[string]string{"policy.csv": csv}}
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err == nil {
		return
	}
	if _, err := cms.Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

type gqlError struct {
	Message    string
	Extensions map[string]any
}

// ask posts q to the API at base as token and returns the data and the
// errors.
func ask(t *testing.T, base, token, q string, vars map[string]any) (json.RawMessage, []gqlError) {
	t.Helper()
	return askFrom(t, base, token, "", q, vars)
}

// askFrom is ask through a proxy: it sends X-Forwarded-For xff when not
// empty.
func askFrom(t *testing.T, base, token, xff, q string, vars map[string]any) (json.RawMessage, []gqlError) {
	t.Helper()
	_, resp := queryFrom(t, base, token, xff, q, vars)
	errs := make([]gqlError, len(resp.Errors))
	for i, e := range resp.Errors {
		errs[i] = gqlError{Message: e.Message, Extensions: e.Extensions}
	}
	return resp.Data, errs
}

func codeOf(errs []gqlError) string {
	if len(errs) == 0 {
		return ""
	}
	code, _ := errs[0].Extensions["code"].(string)
	return code
}

func TestAuthorization(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	project := "authz-" + ns
	setPolicy(t, ns, fmt.Sprintf(`
p, role:shop-dev, applications, get, %[1]s/*, allow
p, role:shop-dev, applications, sync, %[1]s/*, allow
p, role:shop-dev, applications, update, %[1]s/*, allow
g, org:shop, role:shop-dev
`, project))
	proj := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: project},
		Spec: v1alpha1.AppProjectSpec{Roles: []v1alpha1.ProjectRole{{
			Name:     "ci",
			Policies: []string{fmt.Sprintf("p, proj:%[1]s:ci, applications, get, %[1]s/*, allow", project)},
		}}},
	}
	if err := kube.Create(t.Context(), proj); err != nil {
		t.Fatal(err)
	}
	api := authAPI(t, ns, tokenTable{
		"alice-token":  {Subject: "alice", Groups: []string{"org:shop"}},
		"ci-token":     {Subject: "proj:" + project + ":ci"},
		"nobody-token": {Subject: "nobody"},
	}, nil)
	createApps(t, ns, appSpec{name: "shop-web", project: project}, appSpec{name: "blog-web", project: "blog"})
	waitCount(t, ns, 2)

	const list = `query($ns: [String!]) { applications(filter: {namespaces: $ns}) { totalCount edges { node { name } } } }`
	listNames := func(token string) ([]string, int, string) {
		raw, errs := ask(t, api, token, list, map[string]any{"ns": []string{ns}})
		if len(errs) > 0 {
			return nil, 0, codeOf(errs)
		}
		var got struct {
			Applications struct {
				TotalCount int
				Edges      []struct{ Node struct{ Name string } }
			}
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range got.Applications.Edges {
			names = append(names, e.Node.Name)
		}
		return names, got.Applications.TotalCount, ""
	}

	t.Run("anonymous sees only the public fields", func(t *testing.T) {
		if _, _, code := listNames(""); code != "UNAUTHENTICATED" {
			t.Errorf("applications without a token: code %q, want UNAUTHENTICATED", code)
		}
		if _, errs := ask(t, api, "", `{ __schema { queryType { name } } }`, nil); codeOf(errs) != "UNAUTHENTICATED" {
			t.Errorf("introspection without a token: %+v, want UNAUTHENTICATED", errs)
		}
		raw, errs := ask(t, api, "", `{ version { version } settings { url } me { loggedIn username permissions { action } } }`, nil)
		if len(errs) > 0 || !strings.Contains(string(raw), `"loggedIn":false`) || !strings.Contains(string(raw), `"permissions":[]`) {
			t.Errorf("public fields: %s %+v", raw, errs)
		}
		status, resp := queryAt(t, api, "forged-token", `{ version { version } }`, nil)
		if status != http.StatusUnauthorized || len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != "UNAUTHENTICATED" {
			t.Errorf("an invalid token: HTTP %d %+v, want 401 UNAUTHENTICATED", status, resp.Errors)
		}
	})

	t.Run("lists show only what the caller may get", func(t *testing.T) {
		for token, want := range map[string][]string{
			"alice-token": {"shop-web"}, "ci-token": {"shop-web"}, "nobody-token": nil,
		} {
			names, total, code := listNames(token)
			if code != "" || !slices.Equal(names, want) || total != len(want) {
				t.Errorf("%s lists %v (total %d, error %q), want %v", token, names, total, code, want)
			}
		}
	})

	t.Run("hidden apps do not exist", func(t *testing.T) {
		raw, errs := ask(t, api, "alice-token", `query($ns: String) { application(name: "blog-web", namespace: $ns) { name } }`, map[string]any{"ns": ns})
		if len(errs) > 0 || string(raw) != `{"application":null}` {
			t.Errorf("application(blog-web) as alice = %s %+v, want null", raw, errs)
		}
		const sync = `mutation($n: String!, $ns: String) { syncApplication(input: {application: {name: $n, namespace: $ns}}) { name } }`
		_, hidden := ask(t, api, "alice-token", sync, map[string]any{"n": "blog-web", "ns": ns})
		_, missing := ask(t, api, "alice-token", sync, map[string]any{"n": "no-such-app", "ns": ns})
		if codeOf(hidden) != "NOT_FOUND" || codeOf(missing) != "NOT_FOUND" ||
			strings.ReplaceAll(hidden[0].Message, "blog-web", "X") != strings.ReplaceAll(missing[0].Message, "no-such-app", "X") {
			t.Errorf("sync of a hidden app %+v and of a missing one %+v differ", hidden, missing)
		}
	})

	t.Run("visible apps: allowed actions work, others are forbidden", func(t *testing.T) {
		const sync = `mutation($ns: String) { syncApplication(input: {application: {name: "shop-web", namespace: $ns}}) { operation { initiatedBy { username } } } }`
		raw, errs := ask(t, api, "alice-token", sync, map[string]any{"ns": ns})
		if len(errs) > 0 || !strings.Contains(string(raw), `"username":"alice"`) {
			t.Errorf("alice's sync: %s %+v", raw, errs)
		}
		if _, errs := ask(t, api, "ci-token", sync, map[string]any{"ns": ns}); codeOf(errs) != "FORBIDDEN" {
			t.Errorf("the ci token's sync: %+v, want FORBIDDEN", errs)
		}
		const patch = `mutation($ns: String, $p: String!) { patchApplication(input: {application: {name: "shop-web", namespace: $ns}, patch: $p}) { project } }`
		if _, errs := ask(t, api, "alice-token", patch, map[string]any{"ns": ns, "p": `{"spec": {"project": "blog"}}`}); codeOf(errs) != "FORBIDDEN" {
			t.Errorf("alice moving shop-web to a project she may not update: %+v, want FORBIDDEN", errs)
		}
		if raw, errs := ask(t, api, "alice-token", patch, map[string]any{"ns": ns, "p": `{"metadata": {"labels": {"owner": "alice"}}}`}); len(errs) > 0 {
			t.Errorf("alice's label patch: %s %+v", raw, errs)
		}
		const del = `mutation($ns: String) { deleteApplication(input: {application: {name: "shop-web", namespace: $ns}}) }`
		if _, errs := ask(t, api, "alice-token", del, map[string]any{"ns": ns}); codeOf(errs) != "FORBIDDEN" {
			t.Errorf("alice's delete: %+v, want FORBIDDEN", errs)
		}
	})

	t.Run("me reports the effective rights", func(t *testing.T) {
		q := `query($sync: String!, $other: String!) { me { username groups
		  canSync: can(resource: "applications", action: "sync", object: $sync)
		  canOther: can(resource: "applications", action: "sync", object: $other)
		  permissions { subject resource action object effect } } }`
		raw, errs := ask(t, api, "alice-token", q, map[string]any{
			"sync": project + "/" + ns + "/shop-web", "other": "blog/" + ns + "/blog-web",
		})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		var got struct {
			Me struct {
				Username          string
				Groups            []string
				CanSync, CanOther bool
				Permissions       []map[string]string
			}
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"subject": "role:shop-dev", "resource": "applications", "action": "sync", "object": project + "/*", "effect": "allow"}
		if got.Me.Username != "alice" || !got.Me.CanSync || got.Me.CanOther || len(got.Me.Permissions) != 3 ||
			!slices.ContainsFunc(got.Me.Permissions, func(p map[string]string) bool { return fmt.Sprint(p) == fmt.Sprint(want) }) {
			t.Errorf("me = %+v", got.Me)
		}
	})

	t.Run("Application.can", func(t *testing.T) {
		raw, errs := ask(t, api, "alice-token", `query($ns: String) { application(name: "shop-web", namespace: $ns) {
		  sync: can(action: "sync") del: can(action: "delete") } }`, map[string]any{"ns": ns})
		if len(errs) > 0 || string(raw) != `{"application":{"sync":true,"del":false}}` {
			t.Errorf("can on shop-web as alice = %s %+v", raw, errs)
		}
	})

	t.Run("a bad token in connection_init closes the socket", func(t *testing.T) {
		c := openWS(t, api, 0)
		c.send(wsMessage{Type: "connection_init", Payload: json.RawMessage(`{"authorization":"Bearer forged-token"}`)})
		for {
			var m wsMessage
			err := c.conn.ReadJSON(&m)
			if err == nil {
				continue // connection_error
			}
			if !websocket.IsCloseError(err, 4401) {
				t.Errorf("socket ended with %v, want close code 4401", err)
			}
			break
		}
	})

	t.Run("a subscription ends when the policy takes the app away", func(t *testing.T) {
		c := openWS(t, api, 0)
		c.send(wsMessage{Type: "connection_init", Payload: json.RawMessage(`{"authorization":"Bearer alice-token"}`)})
		if m := c.read(); m.Type != "connection_ack" {
			t.Fatalf("after connection_init: %s %s", m.Type, m.Payload)
		}
		c.subscribe("1", `subscription($ns: String) { application(name: "shop-web", namespace: $ns) { name } }`, map[string]any{"ns": ns})
		var first struct{ Application struct{ Name string } }
		c.next("1", &first)
		if first.Application.Name != "shop-web" {
			t.Fatalf("first delivery: %+v", first)
		}
		setPolicy(t, ns, "")
		for {
			// Changes of the app (an earlier subtest synced it) may still
			// arrive; then the subscription must complete.
			m := c.read()
			if m.Type == "next" && m.ID == "1" {
				continue
			}
			if m.Type != "complete" || m.ID != "1" {
				t.Errorf("after the policy change: %s %s, want complete", m.Type, m.Payload)
			}
			break
		}
		if names, _, _ := listNames("alice-token"); len(names) != 0 {
			t.Errorf("alice still lists %v", names)
		}
	})
}
