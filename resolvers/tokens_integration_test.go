//go:build integration

package resolvers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/auth/accounts"
	"github.com/graphcd/graphcd/auth/session"
	"github.com/graphcd/graphcd/internal/kubewatch"
)

// sessionsIn starts real sessions for the accounts of ns: keys in its
// graphcd-secret, accounts from its graphcd-cm.
func sessionsIn(t *testing.T, ns string, cm map[string]string) *auth.Sessions {
	t.Helper()
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: auth.SettingsConfigMap}, Data: cm,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	keys := session.NewSecretKeys(kubewatch.NewSource(t.Context(), cluster.Client, ns))
	if err := keys.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	store := accounts.NewStore(kubewatch.NewSource(t.Context(), cluster.Client, ns))
	if err := store.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	return &auth.Sessions{Issuer: session.NewIssuer(keys, session.Options{}), Accounts: store, Projects: objects}
}

// Real signed tokens end to end: a password login, an account's API token
// and a project role's token each work, and each stops working — an open
// subscription included — once revoked; a password change ends the
// account's sessions.
func TestTokens(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	project := "tokens-" + ns
	sessions := sessionsIn(t, ns, map[string]string{"accounts.alice": "login", "accounts.ci": "apiKey"})
	if err := sessions.Accounts.SetPassword(t.Context(), "alice", "alice-password-1"); err != nil {
		t.Fatal(err)
	}
	setPolicy(t, ns, fmt.Sprintf("p, alice, accounts, update, ci, allow\np, alice, accounts, get, *, allow\np, alice, projects, *, %[1]s, allow\np, alice, applications, get, %[1]s/*, allow\n", project))
	proj := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: project},
		Spec: v1alpha1.AppProjectSpec{Roles: []v1alpha1.ProjectRole{{
			Name:     "deployer",
			Policies: []string{fmt.Sprintf("p, proj:%[1]s:deployer, applications, get, %[1]s/*, allow", project)},
		}}},
	}
	if err := kube.Create(t.Context(), proj); err != nil {
		t.Fatal(err)
	}
	api := authAPI(t, ns, sessions, sessions)
	createApps(t, ns, appSpec{name: "web", project: project})
	waitCount(t, ns, 1)

	alice, _, err := sessions.Login(t.Context(), "alice", "alice-password-1", "test")
	if err != nil {
		t.Fatal(err)
	}
	must := func(token, q string, vars map[string]any, out any) {
		t.Helper()
		raw, errs := ask(t, api, token, q, vars)
		if len(errs) > 0 {
			t.Fatalf("%s: %+v", q, errs)
		}
		if out != nil {
			if err := json.Unmarshal(raw, out); err != nil {
				t.Fatal(err)
			}
		}
	}
	refused := func(token string) bool {
		t.Helper()
		status, _ := queryAt(t, api, token, `{ me { username } }`, nil)
		return status == http.StatusUnauthorized
	}

	t.Run("accounts", func(t *testing.T) {
		var got struct {
			Accounts []struct {
				Name         string
				Enabled      bool
				Capabilities []string
			}
		}
		must(alice, `{ accounts { name enabled capabilities } }`, nil, &got)
		names := fmt.Sprint(got.Accounts)
		if !strings.Contains(names, "{alice true [login]}") || !strings.Contains(names, "{ci true [apiKey]}") || !strings.Contains(names, "admin") {
			t.Errorf("accounts = %s", names)
		}
	})

	t.Run("account API token", func(t *testing.T) {
		var created struct{ CreateAccountToken struct{ ID, Token string } }
		must(alice, `mutation { createAccountToken(input: {account: "ci", id: "pipeline", expiresIn: "1h"}) { id token expiresAt } }`, nil, &created)
		ci := created.CreateAccountToken.Token
		var me struct{ Me struct{ Username string } }
		must(ci, `{ me { username } }`, nil, &me)
		if me.Me.Username != "ci" || created.CreateAccountToken.ID != "pipeline" {
			t.Fatalf("the ci token: %+v, me %+v", created, me)
		}
		if _, errs := ask(t, api, ci, `mutation { createAccountToken(input: {account: "alice"}) { id } }`, nil); codeOf(errs) != "FORBIDDEN" {
			t.Errorf("ci made a token for alice: %+v", errs)
		}
		must(alice, `mutation { deleteAccountToken(account: "ci", id: "pipeline") }`, nil, nil)
		if !refused(ci) {
			t.Error("the deleted API token still works")
		}
	})

	t.Run("project role token and its subscription", func(t *testing.T) {
		var created struct{ CreateProjectToken struct{ ID, Token string } }
		must(alice, `mutation($p: String!) { createProjectToken(input: {project: $p, role: "deployer"}) { id token expiresAt } }`,
			map[string]any{"p": project}, &created)
		token := created.CreateProjectToken.Token
		eventually(t, "the project token to list web", func() error {
			raw, errs := ask(t, api, token, `query($ns: [String!]) { applications(filter: {namespaces: $ns}) { totalCount } }`, map[string]any{"ns": []string{ns}})
			if len(errs) > 0 || !strings.Contains(string(raw), `"totalCount":1`) {
				return fmt.Errorf("%s %+v", raw, errs)
			}
			return nil
		})
		c := openWS(t, api, 0)
		c.send(wsMessage{Type: "connection_init", Payload: json.RawMessage(`{"authorization":"Bearer ` + token + `"}`)})
		if m := c.read(); m.Type != "connection_ack" {
			t.Fatalf("after connection_init: %s %s", m.Type, m.Payload)
		}
		c.subscribe("1", `subscription($ns: String) { application(name: "web", namespace: $ns) { name } }`, map[string]any{"ns": ns})
		var first struct{ Application struct{ Name string } }
		c.next("1", &first)

		must(alice, `mutation($p: String!, $id: String!) { deleteProjectToken(project: $p, role: "deployer", id: $id) }`,
			map[string]any{"p": project, "id": created.CreateProjectToken.ID}, nil)
		_ = c.conn.SetReadDeadline(time.Now().Add(time.Minute)) // a hang fails; no timing is asserted
		for {
			var m wsMessage
			err := c.conn.ReadJSON(&m)
			if err == nil {
				continue // deliveries and the connection_error before the close
			}
			if !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
				t.Errorf("the socket ended with %v, want a close when the token was revoked", err)
			}
			break
		}
		if !refused(token) {
			t.Error("the deleted project token still works")
		}
	})

	t.Run("one token ID on an account and a role: revoking one keeps the other", func(t *testing.T) {
		var acct struct{ CreateAccountToken struct{ ID, Token string } }
		must(alice, `mutation { createAccountToken(input: {account: "ci", id: "shared"}) { id token } }`, nil, &acct)
		var role struct{ CreateProjectToken struct{ ID, Token string } }
		must(alice, `mutation($p: String!) { createProjectToken(input: {project: $p, role: "deployer", id: "shared"}) { id token } }`,
			map[string]any{"p": project}, &role)
		if acct.CreateAccountToken.ID != "shared" || role.CreateProjectToken.ID != "shared" {
			t.Fatalf("token ids %q and %q, want the ones asked for", acct.CreateAccountToken.ID, role.CreateProjectToken.ID)
		}
		must(alice, `mutation($p: String!) { deleteProjectToken(project: $p, role: "deployer", id: "shared") }`, map[string]any{"p": project}, nil)
		eventually(t, "the role's token to stop", func() error {
			if !refused(role.CreateProjectToken.Token) {
				return errNotYet
			}
			return nil
		})
		if refused(acct.CreateAccountToken.Token) {
			t.Error("revoking the role's token revoked the account's token of the same id")
		}
	})

	t.Run("password change ends the sessions", func(t *testing.T) {
		const change = `mutation($cur: String!, $next: String!) { updatePassword(input: {currentPassword: $cur, newPassword: $next}) }`
		if _, errs := ask(t, api, alice, change, map[string]any{"cur": "wrong", "next": "alice-password-2"}); codeOf(errs) != "FORBIDDEN" {
			t.Errorf("a wrong current password: %+v, want FORBIDDEN", errs)
		}
		if _, errs := ask(t, api, alice, change, map[string]any{"cur": "alice-password-1", "next": "short"}); codeOf(errs) != "BAD_USER_INPUT" {
			t.Errorf("a short password: %+v, want BAD_USER_INPUT", errs)
		}
		must(alice, change, map[string]any{"cur": "alice-password-1", "next": "alice-password-2"}, nil)
		eventually(t, "the old session to stop", func() error {
			if !refused(alice) {
				return errNotYet
			}
			return nil
		})
		if _, _, err := sessions.Login(t.Context(), "alice", "alice-password-1", "test"); err == nil {
			t.Error("the old password still logs in")
		}
		fresh, _, err := sessions.Login(t.Context(), "alice", "alice-password-2", "test")
		if err != nil || refused(fresh) {
			t.Errorf("a login with the new password: %v", err)
		}
	})
}
