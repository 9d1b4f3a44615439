package resolvers

import (
	"context"
	"errors"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/approval"
)

// SyncApprover records approvals of held syncs (appops.Service
// implements it).
type SyncApprover interface {
	// ApproveSync records a's approval of the sync the app at key holds,
	// once mayApprove accepts the app as read for the write; its errors
	// are approval's or mayApprove's.
	ApproveSync(ctx context.Context, key types.NamespacedName, a approval.Approver, mayApprove func(*v1alpha1.Application) error) (*v1alpha1.Application, error)
}

// approveSync records the caller's approval, or with onBehalfOf the
// approval of the person the caller speaks for, of the sync an
// application holds.
func (r *Resolver) approveSync(ctx context.Context, in model.ApproveSyncInput) (*model.Application, error) {
	key := r.refKey(*in.Application)
	if _, err := r.appFor(ctx, rbac.ResourceApplications, rbac.ActionApprove, key); err != nil {
		return nil, err
	}
	w, ok := r.Writer.(SyncApprover)
	if !ok {
		return nil, Errorf(CodeForbidden, "this server is read-only")
	}
	a := approverOf(ctx, in.OnBehalfOf)
	out, err := w.ApproveSync(ctx, key, a, func(cur *v1alpha1.Application) error {
		// Judged again as written: the app may have moved to another
		// project since the index the check above read.
		if err := r.authorize(ctx, rbac.ResourceApplications, rbac.ActionApprove, appTarget(cur)); err != nil {
			return err
		}
		if a.Via != "" {
			return r.authorize(ctx, rbac.ResourceApplications, rbac.ActionApproveOnBehalf, appTarget(cur))
		}
		return nil
	})
	if err != nil {
		return nil, approvalError(err, key)
	}
	return r.written(ctx, out, nil, key)
}

// approverOf is who approves: the caller (named as operations name their
// initiator, with its groups), or the person onBehalf names, via the
// caller.
func approverOf(ctx context.Context, onBehalf *model.ApproverInput) approval.Approver {
	caller := initiator(ctx).Username
	if onBehalf != nil {
		return approval.Approver{User: onBehalf.User, Via: caller, Groups: onBehalf.Groups}
	}
	p, _ := auth.FromContext(ctx)
	return approval.Approver{User: caller, Groups: p.Groups}
}

// approvalError maps the refusal of an approval to a coded error.
func approvalError(err error, key types.NamespacedName) error {
	var code Code
	switch {
	case errors.Is(err, approval.ErrNotInGroups), errors.Is(err, approval.ErrSelfApproval):
		code = CodeForbidden
	case errors.Is(err, approval.ErrNotHeld), errors.Is(err, approval.ErrExpired), errors.Is(err, approval.ErrTooMany):
		code = CodeConflict
	case errors.Is(err, approval.ErrInvalidApprover):
		code = CodeBadUserInput
	default:
		return writeError(err, key)
	}
	return Errorf(code, "approve the sync of %s: %v", key, err)
}

// syncApprovalStatus is the policy app's syncs are under and the sync it
// holds or last held.
func (r *Resolver) syncApprovalStatus(ctx context.Context, app *v1alpha1.Application) (*model.SyncApprovalStatus, error) {
	proj, err := r.findProject(ctx, app)
	if err != nil {
		return nil, &Error{Code: CodeInternal, Message: "could not read the application's project", Err: err}
	}
	out := &model.SyncApprovalStatus{}
	if p, src := approval.Policy(app, proj); p != nil {
		s := model.SyncApprovalSource(src)
		out.Policy, out.PolicySource = p, &s
	}
	st := app.Status.OperationState
	if st == nil || st.Approval == nil {
		return out, nil
	}
	out.Held = approval.Waiting(st)
	hold := st.Approval
	given := hold.ApprovedBy
	if hold.ApprovedAt == nil {
		records, _ := approval.Parse(app.Annotations[v1alpha1.SyncApprovalsAnnotation])
		given = approval.Counted(st, records)
	}
	held := &model.HeldOperation{
		ID: hold.ID, ApprovalsNeeded: hold.Approvals, Groups: slices.Clone(hold.Groups),
		ExpiresAt: hold.ExpiresAt, ApprovedAt: hold.ApprovedAt,
	}
	if by := st.Operation.InitiatedBy; !by.Automated {
		held.InitiatedBy = by.Username
	}
	for i := range given {
		held.Approvals = append(held.Approvals, &given[i])
	}
	out.Operation = held
	return out, nil
}

// policyApprovals is how many approvers p asks for, its default filled in.
func policyApprovals(p *v1alpha1.SyncApproval) int32 {
	return max(p.Approvals, 1)
}

// policyExpiry is how long p holds a sync, its default filled in.
func policyExpiry(p *v1alpha1.SyncApproval) string {
	if p.Expiry == "" {
		return approval.DefaultExpiry.String()
	}
	return p.Expiry
}
