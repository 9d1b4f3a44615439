//go:build integration

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/auth/session"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// The real server with its controller, sessions and RBAC: a sync alice
// (SSO group dev) requests under a project asking for one approval from
// group release is held and applies nothing; bob of ops is refused,
// directly and through the chat bot (a local account with an API token
// and approve-on-behalf), and so is alice approving her own sync through
// the bot; the bot's approval on behalf of carol of release unblocks the
// sync, which runs to Synced.
func TestSyncApprovalFromBot(t *testing.T) {
	s := startAuthServer(t, "--controller=true")
	accounts, _ := json.Marshal(map[string]any{"data": map[string]string{"accounts.chatops": "apiKey"}})
	if _, err := cluster.Client.CoreV1().ConfigMaps(s.namespace).Patch(t.Context(), "graphcd-cm", types.MergePatchType, accounts, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	policy, _ := json.Marshal(map[string]any{"data": map[string]string{"policy.csv": `
p, role:deployer, applications, get, approvals/*, allow
p, role:deployer, applications, sync, approvals/*, allow
p, role:deployer, applications, approve, approvals/*, allow
g, dev, role:deployer
g, ops, role:deployer
g, release, role:deployer
p, chatops, applications, get, approvals/*, allow
p, chatops, applications, approve, approvals/*, allow
p, chatops, applications, approve-on-behalf, approvals/*, allow
`}})
	if _, err := cluster.Client.CoreV1().ConfigMaps(s.namespace).Patch(t.Context(), "graphcd-rbac-cm", types.MergePatchType, policy, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	kube := kubeClient(t)
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: "approvals"}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos:  []string{"*"},
		Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Name: "*", Namespace: "*"}},
		SyncApproval: &v1alpha1.SyncApproval{Approvals: 1, Groups: []string{"release"}},
	}}
	if err := kube.Create(t.Context(), proj); err != nil {
		t.Fatal(err)
	}
	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		"app/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: prod\n",
	})
	dest := cluster.Namespace(t)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: "payments"}, Spec: v1alpha1.ApplicationSpec{
		Project:     "approvals",
		Source:      &v1alpha1.ApplicationSource{RepoURL: serveGit(t, dir), Path: "app", TargetRevision: "main"},
		Destination: v1alpha1.ApplicationDestination{Name: controller.InClusterName, Namespace: dest},
	}}
	if err := kube.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}

	// SSO sessions as the code flow issues them (TestServerLogin goes
	// through Dex), and the bot's API token from the admin.
	key, err := s.signingKey(t)
	if err != nil {
		t.Fatal(err)
	}
	issuer := session.NewIssuer(session.StaticKeys{Current: key}, session.Options{})
	sso := func(user string, groups ...string) string {
		token, _, err := issuer.Issue(t.Context(), session.Template{Subject: user + "-id", Email: user + "@example.com", Groups: groups, Kind: session.KindSSO})
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	alice, bob := sso("alice", "dev"), sso("bob", "ops")
	run, _ := s.adminCLI(t)
	var bot string
	poll(t, "the bot's API token", func() (bool, string) {
		res := run("account", "generate-token", "--account", "chatops")
		bot = strings.TrimSpace(res.stdout)
		return res.code == 0 && bot != "", res.stderr
	})

	// ask returns the data and the first error's code and message.
	ask := func(token, q string) (data json.RawMessage, code, message string) {
		t.Helper()
		status, body := s.gql(t, http.DefaultClient, token, q)
		var resp struct {
			Data   json.RawMessage
			Errors []struct {
				Message    string
				Extensions struct{ Code string }
			}
		}
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatalf("HTTP %d %s", status, body)
		}
		if len(resp.Errors) > 0 {
			return resp.Data, resp.Errors[0].Extensions.Code, resp.Errors[0].Message
		}
		return resp.Data, "", ""
	}
	const state = `{ application(name: "payments") { syncApproval { held operation { initiatedBy approvals { user via } } }
  status { sync { status } operationState { phase message } } } }`
	var got struct {
		Application struct {
			SyncApproval struct {
				Held      bool
				Operation *struct {
					InitiatedBy string
					Approvals   []struct{ User, Via string }
				}
			}
			Status struct {
				Sync           struct{ Status string }
				OperationState *struct{ Phase, Message string }
			}
		}
	}
	read := func() string {
		t.Helper()
		data, code, _ := ask(alice, state)
		if code != "" || json.Unmarshal(data, &got) != nil {
			t.Fatalf("state: %s %s", code, data)
		}
		return string(data)
	}
	poll(t, "the app compared", func() (bool, string) {
		out := read()
		return got.Application.Status.Sync.Status == "OutOfSync", out
	})
	if _, code, _ := ask(alice, `mutation { syncApplication(input: {application: {name: "payments"}}) { name } }`); code != "" {
		t.Fatalf("alice's sync: %s", code)
	}
	poll(t, "the sync held", func() (bool, string) {
		out := read()
		return got.Application.SyncApproval.Held, out
	})
	if op := got.Application.SyncApproval.Operation; op.InitiatedBy != "alice@example.com" ||
		!strings.HasPrefix(got.Application.Status.OperationState.Message, "waiting for 1 approval from groups [release] (0 of 1)") {
		t.Errorf("held sync: initiated by %q, message %q", op.InitiatedBy, got.Application.Status.OperationState.Message)
	}

	const approve = `mutation { approveSync(input: {application: {name: "payments"}%s}) { name } }`
	for _, c := range []struct{ who, token, input, why string }{
		{"bob of ops", bob, "", "in none of the groups"},
		{"the bot for bob of ops", bot, `, onBehalfOf: {user: "bob@example.com", groups: ["ops"]}`, "bob@example.com is in none of [release]"},
		{"the bot for alice, who requested the sync", bot, `, onBehalfOf: {user: "alice@example.com", groups: ["release"]}`, "cannot approve it"},
		{"alice for someone else, without approve-on-behalf", alice, `, onBehalfOf: {user: "carol@example.com", groups: ["release"]}`, "approve-on-behalf"},
	} {
		if _, code, msg := ask(c.token, fmt.Sprintf(approve, c.input)); code != "FORBIDDEN" || !strings.Contains(msg, c.why) {
			t.Errorf("%s: %s %q, want FORBIDDEN saying %q", c.who, code, msg, c.why)
		}
	}
	if out := read(); !got.Application.SyncApproval.Held || len(got.Application.SyncApproval.Operation.Approvals) != 0 {
		t.Errorf("after the refused approvals: %s", out)
	}
	if _, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the held sync's ConfigMap: %v, want NotFound", err)
	}

	if _, code, msg := ask(bot, fmt.Sprintf(approve, `, onBehalfOf: {user: "carol@example.com", groups: ["release"]}`)); code != "" {
		t.Fatalf("the bot for carol of release: %s %s", code, msg)
	}
	poll(t, "the approved sync to run to Synced", func() (bool, string) {
		out := read()
		st := got.Application.Status.OperationState
		return st != nil && st.Phase == "Succeeded" && got.Application.Status.Sync.Status == "Synced", out
	})
	if op := got.Application.SyncApproval.Operation; op == nil || len(op.Approvals) != 1 || op.Approvals[0].User != "carol@example.com" || op.Approvals[0].Via != "chatops" {
		t.Errorf("the approval recorded: %+v", op)
	}
	var cm *corev1.ConfigMap
	if cm, err = cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "settings", metav1.GetOptions{}); err != nil || cm.Data["mode"] != "prod" {
		t.Errorf("the approved sync's ConfigMap: %v %v", cm, err)
	}
}
