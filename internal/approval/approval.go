package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Bounds of a policy and of the approvals recorded.
const (
	// DefaultExpiry is how long a held sync waits when the policy does
	// not say.
	DefaultExpiry = 24 * time.Hour
	// MaxExpiry is the longest a held sync may wait.
	MaxExpiry = 720 * time.Hour
	// MaxApprovals is the most approvers a policy may ask for.
	MaxApprovals = 10
	// MaxPolicyGroups bounds a policy's groups.
	MaxPolicyGroups = 20
	// MaxName bounds a user or group name.
	MaxName = 253
	// MaxApproverGroups bounds the groups recorded with an approval.
	MaxApproverGroups = 50
	// MaxRecords bounds the approvals recorded for one held sync.
	MaxRecords = 20
	// MaxAnnotation bounds the annotation the approvals are read from.
	MaxAnnotation = 64 << 10
)

// Source says where the policy in force is set.
type Source string

// The places a policy is set.
const (
	FromProject     Source = "PROJECT"
	FromApplication Source = "APPLICATION"
)

// Policy returns the policy in force for app, whose project is proj (nil
// when it does not exist): the project's when it sets one, else the
// app's own, so that whoever may edit an application cannot weaken its
// project's policy. nil when syncs need no approval.
func Policy(app *v1alpha1.Application, proj *v1alpha1.AppProject) (*v1alpha1.SyncApproval, Source) {
	if proj != nil && proj.Spec.SyncApproval != nil {
		return proj.Spec.SyncApproval, FromProject
	}
	if app.Spec.SyncApproval != nil {
		return app.Spec.SyncApproval, FromApplication
	}
	return nil, ""
}

// Terms are a policy with its defaults filled in.
type Terms struct {
	Approvals int
	Groups    []string
	Expiry    time.Duration
}

// TermsOf checks p and returns its terms; the error says what is wrong,
// naming the field under spec.syncApproval.
func TermsOf(p *v1alpha1.SyncApproval) (Terms, error) {
	t := Terms{Approvals: int(p.Approvals), Groups: p.Groups, Expiry: DefaultExpiry}
	if t.Approvals == 0 {
		t.Approvals = 1
	}
	if t.Approvals < 1 || t.Approvals > MaxApprovals {
		return Terms{}, fmt.Errorf("syncApproval.approvals: %d is not between 1 and %d", p.Approvals, MaxApprovals)
	}
	if len(p.Groups) > MaxPolicyGroups {
		return Terms{}, fmt.Errorf("syncApproval.groups: %d groups, at most %d", len(p.Groups), MaxPolicyGroups)
	}
	for i, g := range p.Groups {
		if g == "" || len(g) > MaxName {
			return Terms{}, fmt.Errorf("syncApproval.groups[%d]: a group is 1 to %d characters", i, MaxName)
		}
	}
	if p.Expiry != "" {
		d, err := time.ParseDuration(p.Expiry)
		if err != nil || d <= 0 || d > MaxExpiry {
			return Terms{}, fmt.Errorf("syncApproval.expiry: %.40q is not a duration such as \"1h\" between 1s and %s", p.Expiry, MaxExpiry)
		}
		t.Expiry = d
	}
	return t, nil
}

// Validate checks p, which may be nil (no policy).
func Validate(p *v1alpha1.SyncApproval) error {
	if p == nil {
		return nil
	}
	_, err := TermsOf(p)
	return err
}

// OperationID names the operation in st of app: the app's UID, when the
// operation started (to the second, as status stores it) and a digest of
// what it asks for, so that an approval never counts for another sync.
func OperationID(app *v1alpha1.Application, st *v1alpha1.OperationState) string {
	op, _ := json.Marshal(st.Operation) // an Operation always marshals
	sum := sha256.Sum256(op)
	return fmt.Sprintf("%s.%d.%s", app.UID, st.StartedAt.Unix(), hex.EncodeToString(sum[:6]))
}

// Hold is what the operation in st of app waits for under t: its ID, t's
// terms, and when it stops waiting (t's expiry after it started).
func Hold(app *v1alpha1.Application, st *v1alpha1.OperationState, t Terms) *v1alpha1.OperationApproval {
	return &v1alpha1.OperationApproval{
		ID: OperationID(app, st), Approvals: int32(t.Approvals), Groups: slices.Clone(t.Groups), //nolint:gosec // at most MaxApprovals
		ExpiresAt: metav1.NewTime(st.StartedAt.Add(t.Expiry)),
	}
}

// Waiting reports whether the operation in st is held and waits for
// approvals (it may have expired: see Expired).
func Waiting(st *v1alpha1.OperationState) bool {
	return st != nil && st.Phase == v1alpha1.OperationRunning && st.Approval != nil && st.Approval.ApprovedAt == nil
}

// Expired reports whether the hold of st has run out at now.
func Expired(st *v1alpha1.OperationState, now time.Time) bool {
	return st.Approval != nil && !now.Before(st.Approval.ExpiresAt.Time)
}

// Reasons an approval is refused.
var (
	// ErrNotHeld: no sync of the application waits for approval.
	ErrNotHeld = errors.New("no sync of the application is waiting for approval")
	// ErrExpired: the held sync waited too long.
	ErrExpired = errors.New("the sync's approval expired")
	// ErrSelfApproval: the approver requested the sync.
	ErrSelfApproval = errors.New("whoever requested a sync cannot approve it")
	// ErrNotInGroups: the approver is in none of the policy's groups.
	ErrNotInGroups = errors.New("the approver is in none of the groups the sync approval policy names")
	// ErrInvalidApprover: the approver's name or groups are out of
	// bounds.
	ErrInvalidApprover = errors.New("invalid approver")
	// ErrTooMany: the held sync has as many approvals recorded as it may.
	ErrTooMany = errors.New("the sync has too many approvals recorded")
)

// Approver is who approves a sync.
type Approver struct {
	// User is the approver.
	User string
	// Via is the API caller that approves on behalf of User; "" when
	// User is the caller.
	Via string
	// Groups are User's groups.
	Groups []string
}

// check checks a's bounds.
func (a Approver) check() error {
	if a.User == "" || len(a.User) > MaxName || len(a.Via) > MaxName {
		return fmt.Errorf("%w: the user is 1 to %d characters", ErrInvalidApprover, MaxName)
	}
	if len(a.Groups) > MaxApproverGroups {
		return fmt.Errorf("%w: %d groups, at most %d", ErrInvalidApprover, len(a.Groups), MaxApproverGroups)
	}
	for _, g := range a.Groups {
		if g == "" || len(g) > MaxName {
			return fmt.Errorf("%w: a group is 1 to %d characters", ErrInvalidApprover, MaxName)
		}
	}
	return nil
}

// Check returns nil when a may approve the sync held in st at now, and
// otherwise one of the errors above, wrapped with the details.
func Check(st *v1alpha1.OperationState, a Approver, now time.Time) error {
	if err := a.check(); err != nil {
		return err
	}
	if !Waiting(st) {
		return ErrNotHeld
	}
	if Expired(st, now) {
		return fmt.Errorf("%w at %s", ErrExpired, st.Approval.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if by := st.Operation.InitiatedBy; !by.Automated && by.Username != "" && by.Username == a.User {
		return fmt.Errorf("%w: %s requested it", ErrSelfApproval, a.User)
	}
	if groups := st.Approval.Groups; len(groups) > 0 && !slices.ContainsFunc(a.Groups, func(g string) bool { return slices.Contains(groups, g) }) {
		return fmt.Errorf("%w: %s is in none of %v", ErrNotInGroups, a.User, groups)
	}
	return nil
}

// approverOf is the approver rec records.
func approverOf(rec v1alpha1.SyncApprovalRecord) Approver {
	return Approver{User: rec.User, Via: rec.Via, Groups: rec.Groups}
}

// Counted returns the approvals among records that count for the sync
// held in st: those naming it, given before it expired by approvers Check
// accepts, one per user (the first).
func Counted(st *v1alpha1.OperationState, records []v1alpha1.SyncApprovalRecord) []v1alpha1.SyncApprovalRecord {
	if st == nil || st.Approval == nil {
		return nil
	}
	var out []v1alpha1.SyncApprovalRecord
	for _, rec := range records {
		if rec.Operation != st.Approval.ID || Check(st, approverOf(rec), rec.At.Time) != nil {
			continue
		}
		if slices.ContainsFunc(out, func(o v1alpha1.SyncApprovalRecord) bool { return o.User == rec.User }) {
			continue
		}
		out = append(out, rec)
	}
	return out
}

// Add returns records with a's approval, at now, of the sync held in st:
// records of other operations are dropped. added is false when a had
// approved already (the records are returned as they are). The error is
// Check's, or ErrTooMany.
func Add(records []v1alpha1.SyncApprovalRecord, st *v1alpha1.OperationState, a Approver, now time.Time) (_ []v1alpha1.SyncApprovalRecord, added bool, _ error) {
	if err := Check(st, a, now); err != nil {
		return nil, false, err
	}
	id := st.Approval.ID
	out := slices.DeleteFunc(slices.Clone(records), func(r v1alpha1.SyncApprovalRecord) bool { return r.Operation != id })
	if slices.ContainsFunc(out, func(r v1alpha1.SyncApprovalRecord) bool { return r.User == a.User }) {
		return out, false, nil
	}
	if len(out) >= MaxRecords {
		return nil, false, ErrTooMany
	}
	rec := v1alpha1.SyncApprovalRecord{User: a.User, Via: a.Via, Groups: slices.Clone(a.Groups), At: metav1.NewTime(now), Operation: id}
	return append(out, rec), true, nil
}

// Parse reads the approvals recorded in the value of
// v1alpha1.SyncApprovalsAnnotation; "" holds none. The value is
// untrusted: an error says why it cannot be read, and nothing of it then
// counts.
func Parse(value string) ([]v1alpha1.SyncApprovalRecord, error) {
	if value == "" {
		return nil, nil
	}
	if len(value) > MaxAnnotation {
		return nil, fmt.Errorf("%s: larger than %d KiB", v1alpha1.SyncApprovalsAnnotation, MaxAnnotation>>10)
	}
	var out []v1alpha1.SyncApprovalRecord
	if err := json.Unmarshal([]byte(value), &out); err != nil {
		return nil, fmt.Errorf("%s: not a JSON list of approvals: %w", v1alpha1.SyncApprovalsAnnotation, err)
	}
	if len(out) > MaxRecords {
		out = out[:MaxRecords]
	}
	return out, nil
}

// Encode is the value of v1alpha1.SyncApprovalsAnnotation that records
// records.
func Encode(records []v1alpha1.SyncApprovalRecord) string {
	b, _ := json.Marshal(records) // strings and times always marshal
	return string(b)
}
