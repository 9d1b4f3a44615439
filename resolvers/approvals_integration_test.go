//go:build integration

package resolvers_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/approval"
)

// holdSync writes onto the app at key a sync alice requested, held as the
// controller holds it under a policy of two approvals from group release.
func holdSync(t *testing.T, key types.NamespacedName) string {
	t.Helper()
	var app v1alpha1.Application
	if err := kube.Get(t.Context(), key, &app); err != nil {
		t.Fatal(err)
	}
	op := v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}}
	app.Operation = &op
	if err := kube.Update(t.Context(), &app); err != nil {
		t.Fatal(err)
	}
	st := &v1alpha1.OperationState{Operation: op, Phase: v1alpha1.OperationRunning, StartedAt: metav1.Now()}
	st.Approval = approval.Hold(&app, st, approval.Terms{Approvals: 2, Groups: []string{"release"}, Expiry: time.Hour})
	app.Status.OperationState = st
	if err := kube.Status().Update(t.Context(), &app); err != nil {
		t.Fatal(err)
	}
	return st.Approval.ID
}

// Approving a held sync through GraphQL: the approve right is needed,
// approve-on-behalf too for a bot's onBehalfOf; an approver outside the
// policy's groups and the requester are refused with FORBIDDEN; carol of
// release, and dave of release through the bot, are recorded for the held
// operation; an edit of the app cannot forge an approval; a sync not held
// is a CONFLICT.
func TestApproveSync(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	project := "approve-" + ns
	setPolicy(t, ns, fmt.Sprintf(`
p, role:approver, applications, get, %[1]s/*, allow
p, role:approver, applications, approve, %[1]s/*, allow
p, role:approver, applications, update, %[1]s/*, allow
p, role:bot, applications, approve-on-behalf, %[1]s/*, allow
g, alice, role:approver
g, bob, role:approver
g, carol, role:approver
g, eve, role:approver
g, chatops, role:approver
g, chatops, role:bot
p, viewer, applications, get, %[1]s/*, allow
`, project))
	proj := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: project},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			SyncApproval: &v1alpha1.SyncApproval{Approvals: 2, Groups: []string{"release"}},
		},
	}
	if err := kube.Create(t.Context(), proj); err != nil {
		t.Fatal(err)
	}
	api := authAPI(t, ns, tokenTable{
		"alice":   {Subject: "alice", Groups: []string{"release"}},
		"bob":     {Subject: "bob", Groups: []string{"ops"}},
		"carol":   {Subject: "carol", Groups: []string{"release"}},
		"eve":     {Subject: "eve", Groups: []string{"release"}},
		"chatops": {Subject: "chatops"},
		"viewer":  {Subject: "viewer", Groups: []string{"release"}},
	}, nil)
	createApps(t, ns, appSpec{name: "held", project: project}, appSpec{name: "idle", project: project})
	waitCount(t, ns, 2)
	key := types.NamespacedName{Namespace: ns, Name: "held"}
	id := holdSync(t, key)

	const approve = `mutation($n: String!, $ns: String, $on: ApproverInput) {
  approveSync(input: {application: {name: $n, namespace: $ns}, onBehalfOf: $on}) { name } }`
	approveAs := func(token, app string, on map[string]any) []gqlError {
		t.Helper()
		vars := map[string]any{"n": app, "ns": ns}
		if on != nil {
			vars["on"] = on
		}
		_, errs := ask(t, api, token, approve, vars)
		return errs
	}
	for _, c := range []struct {
		who, token string
		on         map[string]any
		want       string
	}{
		{"viewer without approve", "viewer", nil, "FORBIDDEN"},
		{"bob outside release", "bob", nil, "FORBIDDEN"},
		{"alice, who requested the sync", "alice", nil, "FORBIDDEN"},
		{"eve on behalf of dave without approve-on-behalf", "eve", map[string]any{"user": "dave", "groups": []string{"release"}}, "FORBIDDEN"},
		{"the bot on behalf of bob of ops", "chatops", map[string]any{"user": "bob", "groups": []string{"ops"}}, "FORBIDDEN"},
		{"the bot on behalf of alice", "chatops", map[string]any{"user": "alice", "groups": []string{"release"}}, "FORBIDDEN"},
	} {
		if errs := approveAs(c.token, "held", c.on); codeOf(errs) != c.want {
			t.Errorf("%s: %+v, want %s", c.who, errs, c.want)
		}
	}

	if errs := approveAs("carol", "held", nil); len(errs) > 0 {
		t.Fatalf("carol of release: %+v", errs)
	}
	if errs := approveAs("carol", "held", nil); len(errs) > 0 {
		t.Errorf("carol approving again: %+v, want no error", errs)
	}
	if errs := approveAs("chatops", "held", map[string]any{"user": "dave", "groups": []string{"release"}}); len(errs) > 0 {
		t.Fatalf("the bot on behalf of dave of release: %+v", errs)
	}

	// An edit that writes the annotation keeps the approvals as they are.
	const patch = `mutation($n: String!, $ns: String, $p: String!) {
  patchApplication(input: {application: {name: $n, namespace: $ns}, patch: $p}) { name } }`
	forged := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, v1alpha1.SyncApprovalsAnnotation,
		approval.Encode([]v1alpha1.SyncApprovalRecord{{User: "mallory", Groups: []string{"release"}, At: metav1.Now(), Operation: id}}))
	if _, errs := ask(t, api, "carol", patch, map[string]any{"n": "held", "ns": ns, "p": forged}); len(errs) > 0 {
		t.Fatalf("patch: %+v", errs)
	}

	// A policy out of bounds is refused with what is wrong.
	bad := `{"spec":{"syncApproval":{"expiry":"1000h"}}}`
	if _, errs := ask(t, api, "carol", patch, map[string]any{"n": "idle", "ns": ns, "p": bad}); codeOf(errs) != "BAD_USER_INPUT" ||
		!strings.Contains(errs[0].Message, "spec.syncApproval.expiry") {
		t.Errorf("a patch with expiry 1000h: %+v, want BAD_USER_INPUT naming spec.syncApproval.expiry", errs)
	}

	const status = `query($n: String!, $ns: String) { application(name: $n, namespace: $ns) { syncApproval {
  policy { approvals groups expiry } policySource held
  operation { id initiatedBy approvalsNeeded groups approvals { user via groups } approvedAt } } } }`
	raw, errs := ask(t, api, "viewer", status, map[string]any{"n": "held", "ns": ns})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var got struct {
		Application struct{ SyncApproval json.RawMessage }
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"policy":{"approvals":2,"groups":["release"],"expiry":"24h0m0s"},"policySource":"PROJECT","held":true,`+
		`"operation":{"id":%q,"initiatedBy":"alice","approvalsNeeded":2,"groups":["release"],"approvals":[`+
		`{"user":"carol","via":"","groups":["release"]},{"user":"dave","via":"chatops","groups":["release"]}],"approvedAt":null}}`, id)
	if string(got.Application.SyncApproval) != want {
		t.Errorf("syncApproval\n got %s\nwant %s", got.Application.SyncApproval, want)
	}
	var app v1alpha1.Application
	if err := kube.Get(t.Context(), key, &app); err != nil {
		t.Fatal(err)
	}
	records, err := approval.Parse(app.Annotations[v1alpha1.SyncApprovalsAnnotation])
	if err != nil || len(records) != 2 || records[0].User != "carol" || records[1].User != "dave" || records[1].Via != "chatops" {
		t.Errorf("recorded approvals %+v (%v), want carol's and dave's via chatops", records, err)
	}

	if errs := approveAs("carol", "idle", nil); codeOf(errs) != "CONFLICT" {
		t.Errorf("approving an app with no held sync: %+v, want CONFLICT", errs)
	}
}
