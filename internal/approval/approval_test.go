package approval_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/approval"
)

func TestTermsOf(t *testing.T) {
	for _, c := range []struct {
		name    string
		policy  v1alpha1.SyncApproval
		want    approval.Terms
		wantErr string
	}{
		{"defaults", v1alpha1.SyncApproval{}, approval.Terms{Approvals: 1, Expiry: 24 * time.Hour}, ""},
		{"set", v1alpha1.SyncApproval{Approvals: 2, Groups: []string{"release"}, Expiry: "90m"},
			approval.Terms{Approvals: 2, Groups: []string{"release"}, Expiry: 90 * time.Minute}, ""},
		{"too many approvals", v1alpha1.SyncApproval{Approvals: 11}, approval.Terms{}, "syncApproval.approvals"},
		{"negative approvals", v1alpha1.SyncApproval{Approvals: -1}, approval.Terms{}, "syncApproval.approvals"},
		{"empty group", v1alpha1.SyncApproval{Groups: []string{""}}, approval.Terms{}, "syncApproval.groups[0]"},
		{"long group", v1alpha1.SyncApproval{Groups: []string{strings.Repeat("g", 254)}}, approval.Terms{}, "syncApproval.groups[0]"},
		{"too many groups", v1alpha1.SyncApproval{Groups: strings.Fields(strings.Repeat("g ", 21))}, approval.Terms{}, "syncApproval.groups: 21"},
		{"expiry not a duration", v1alpha1.SyncApproval{Expiry: "tomorrow"}, approval.Terms{}, "syncApproval.expiry"},
		{"expiry too long", v1alpha1.SyncApproval{Expiry: "721h"}, approval.Terms{}, "syncApproval.expiry"},
		{"expiry zero", v1alpha1.SyncApproval{Expiry: "0s"}, approval.Terms{}, "syncApproval.expiry"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := approval.TermsOf(&c.policy)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one naming %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, c.want); diff != "" {
				t.Errorf("terms (-got +want):\n%s", diff)
			}
		})
	}
}

func TestPolicyOfProjectWins(t *testing.T) {
	own := &v1alpha1.SyncApproval{Approvals: 1}
	strict := &v1alpha1.SyncApproval{Approvals: 3}
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{SyncApproval: own}}
	proj := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{SyncApproval: strict}}
	if p, src := approval.Policy(app, proj); p != strict || src != approval.FromProject {
		t.Errorf("with both: %v from %s, want the project's", p, src)
	}
	if p, src := approval.Policy(app, &v1alpha1.AppProject{}); p != own || src != approval.FromApplication {
		t.Errorf("project without one: %v from %s, want the app's", p, src)
	}
	if p, _ := approval.Policy(&v1alpha1.Application{}, nil); p != nil {
		t.Errorf("neither: %v, want none", p)
	}
}

// held is a sync alice requested at start, held for two approvals from
// release for an hour.
func held(start time.Time) (*v1alpha1.Application, *v1alpha1.OperationState) {
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{UID: "uid-1"}}
	st := &v1alpha1.OperationState{
		Operation: v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}},
		Phase:     v1alpha1.OperationRunning, StartedAt: metav1.NewTime(start),
	}
	st.Approval = approval.Hold(app, st, approval.Terms{Approvals: 2, Groups: []string{"release"}, Expiry: time.Hour})
	return app, st
}

func TestCheck(t *testing.T) {
	start := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	_, st := held(start)
	approved := st.DeepCopy()
	approved.Approval.ApprovedAt = &metav1.Time{Time: start}
	for _, c := range []struct {
		name string
		st   *v1alpha1.OperationState
		a    approval.Approver
		at   time.Time
		want error
	}{
		{"in the group", st, approval.Approver{User: "carol", Groups: []string{"dev", "release"}}, start, nil},
		{"through a bot", st, approval.Approver{User: "carol", Via: "bot", Groups: []string{"release"}}, start, nil},
		{"outside the groups", st, approval.Approver{User: "bob", Groups: []string{"ops"}}, start, approval.ErrNotInGroups},
		{"without groups", st, approval.Approver{User: "bob"}, start, approval.ErrNotInGroups},
		{"the requester", st, approval.Approver{User: "alice", Groups: []string{"release"}}, start, approval.ErrSelfApproval},
		{"the requester through a bot", st, approval.Approver{User: "alice", Via: "bot", Groups: []string{"release"}}, start, approval.ErrSelfApproval},
		{"expired", st, approval.Approver{User: "carol", Groups: []string{"release"}}, start.Add(time.Hour), approval.ErrExpired},
		{"nothing held", nil, approval.Approver{User: "carol", Groups: []string{"release"}}, start, approval.ErrNotHeld},
		{"already approved", approved, approval.Approver{User: "carol", Groups: []string{"release"}}, start, approval.ErrNotHeld},
		{"no user", st, approval.Approver{Groups: []string{"release"}}, start, approval.ErrInvalidApprover},
		{"a long user", st, approval.Approver{User: strings.Repeat("u", 254), Groups: []string{"release"}}, start, approval.ErrInvalidApprover},
		{"too many groups", st, approval.Approver{User: "carol", Groups: strings.Fields(strings.Repeat("release ", 51))}, start, approval.ErrInvalidApprover},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := approval.Check(c.st, c.a, c.at); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Errorf("Check = %v, want %v", err, c.want)
			}
		})
	}
}

func TestAddAndCounted(t *testing.T) {
	start := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	_, st := held(start)
	stale := v1alpha1.SyncApprovalRecord{User: "dave", Groups: []string{"release"}, At: metav1.NewTime(start), Operation: "an-earlier-one"}
	carol := approval.Approver{User: "carol", Groups: []string{"release"}}
	records, added, err := approval.Add([]v1alpha1.SyncApprovalRecord{stale}, st, carol, start.Add(time.Minute))
	if err != nil || !added || len(records) != 1 || records[0].User != "carol" || records[0].Operation != st.Approval.ID {
		t.Fatalf("Add = %+v, %v, %v; want carol's approval alone, the stale one dropped", records, added, err)
	}
	again, added, err := approval.Add(records, st, carol, start.Add(2*time.Minute))
	if err != nil || added || len(again) != 1 {
		t.Errorf("approving again = %+v, %v, %v; want the same record, not added", again, added, err)
	}
	if _, _, err := approval.Add(records, st, approval.Approver{User: "bob", Groups: []string{"ops"}}, start); !errors.Is(err, approval.ErrNotInGroups) {
		t.Errorf("bob of ops: %v", err)
	}

	// What the annotation may hold, written around the API: only
	// carol's and erin's count, once each.
	at := metav1.NewTime(start.Add(time.Minute))
	all := slices.Concat(records, []v1alpha1.SyncApprovalRecord{
		{User: "carol", Groups: []string{"release"}, At: at, Operation: st.Approval.ID},
		{User: "bob", Groups: []string{"ops"}, At: at, Operation: st.Approval.ID},
		{User: "alice", Groups: []string{"release"}, At: at, Operation: st.Approval.ID},
		{User: "frank", Groups: []string{"release"}, At: metav1.NewTime(start.Add(2 * time.Hour)), Operation: st.Approval.ID},
		stale,
		{User: "erin", Via: "bot", Groups: []string{"release"}, At: at, Operation: st.Approval.ID},
	})
	parsed, err := approval.Parse(approval.Encode(all))
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, r := range approval.Counted(st, parsed) {
		users = append(users, r.User)
	}
	if diff := cmp.Diff(users, []string{"carol", "erin"}); diff != "" {
		t.Errorf("counted (-got +want):\n%s", diff)
	}
}

func TestOperationIDs(t *testing.T) {
	start := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	app, st := held(start)
	later := st.DeepCopy()
	later.StartedAt = metav1.NewTime(start.Add(time.Second))
	other := st.DeepCopy()
	other.Operation.Sync.Revision = "v2"
	id := approval.OperationID(app, st)
	if id == approval.OperationID(app, later) || id == approval.OperationID(app, other) {
		t.Errorf("operations started later or asking for another revision share the ID %s", id)
	}
}

func TestParseRefuses(t *testing.T) {
	for name, value := range map[string]string{
		"not JSON":  "yes please",
		"an object": `{"user":"carol"}`,
		"too large": `[` + strings.Repeat(" ", approval.MaxAnnotation) + `]`,
	} {
		if _, err := approval.Parse(value); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}
