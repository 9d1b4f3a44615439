package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	appsync "github.com/graphcd/graphcd/controller/sync"
	"github.com/graphcd/graphcd/internal/approval"
)

// Kubernetes Event reasons of held syncs.
const (
	ReasonSyncApprovalRequired = "SyncApprovalRequired"
	ReasonSyncApproved         = "SyncApproved"
)

// MessageApprovalExpired ends a held sync that did not get its approvals
// in time.
const MessageApprovalExpired = "sync approval expired"

// awaitApproval holds the sync in st until it has the approvals the sync
// approval policy of app's project (or of app) asks for; see package
// approval. A sync is held before its first step only, so one that has
// begun, a retry, a terminate and a dry run go on. held is false when
// the sync may take its step from next, which then records who approved
// it; otherwise next and res are the held (or ended, with terminal)
// operation's.
func (r *Reconciler) awaitApproval(ctx context.Context, app *v1alpha1.Application, st *v1alpha1.OperationState, now metav1.Time) (next *v1alpha1.OperationState, res appsync.Result, held, terminal bool) {
	if st.Phase != v1alpha1.OperationRunning || st.Operation.Sync.DryRun {
		return st, res, false, false
	}
	hold := st.Approval
	switch {
	case hold == nil && begun(st):
		return st, res, false, false
	case hold == nil:
		return r.holdSync(ctx, app, st, now)
	case hold.ApprovedAt != nil:
		return st, res, false, false
	case approval.Expired(st, now.Time):
		next, res = endOperation(st, v1alpha1.OperationFailed, MessageApprovalExpired, now)
		return next, res, true, true
	}
	records, err := approval.Parse(app.Annotations[v1alpha1.SyncApprovalsAnnotation])
	if err != nil {
		r.log.Warn("sync approvals", "app", app.Namespace+"/"+app.Name, "err", err)
	}
	given := approval.Counted(st, records)
	next = st.DeepCopy()
	if len(given) < int(hold.Approvals) {
		next.Message = waitingMessage(hold, len(given))
		return next, appsync.Result{RequeueAfter: hold.ExpiresAt.Sub(now.Time)}, true, false
	}
	next.Approval.ApprovedAt, next.Approval.ApprovedBy, next.Message = &now, given, ""
	r.approvalEvent(app, corev1.EventTypeNormal, ReasonSyncApproved, "sync approved by "+approvers(given))
	return next, res, false, false
}

// holdSync starts holding the sync in st when the policy in force asks
// for approvals. A policy that cannot be read or is not valid ends the
// sync in Error: it is never run unapproved.
func (r *Reconciler) holdSync(ctx context.Context, app *v1alpha1.Application, st *v1alpha1.OperationState, now metav1.Time) (next *v1alpha1.OperationState, res appsync.Result, held, terminal bool) {
	proj, err := r.project(ctx, app)
	if err != nil {
		next, res = endOperation(st, v1alpha1.OperationError, fmt.Sprintf("read the sync approval policy: %v", err), now)
		return next, res, true, true
	}
	policy, src := approval.Policy(app, proj)
	if policy == nil {
		return st, res, false, false
	}
	terms, err := approval.TermsOf(policy)
	if err != nil {
		next, res = endOperation(st, v1alpha1.OperationError, fmt.Sprintf("the %s's spec.%v", strings.ToLower(string(src)), err), now)
		return next, res, true, true
	}
	next = st.DeepCopy()
	next.Approval = approval.Hold(app, st, terms)
	next.Message = waitingMessage(next.Approval, 0)
	r.approvalEvent(app, corev1.EventTypeNormal, ReasonSyncApprovalRequired, next.Message)
	return next, appsync.Result{RequeueAfter: next.Approval.ExpiresAt.Sub(now.Time)}, true, false
}

// begun reports whether the operation in st has taken a step.
func begun(st *v1alpha1.OperationState) bool {
	return st.SyncResult != nil || st.RetryCount > 0 || st.FinishedAt != nil
}

// waitingMessage says what a held sync with given approvals waits for.
func waitingMessage(hold *v1alpha1.OperationApproval, given int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "waiting for %d approval", hold.Approvals)
	if hold.Approvals != 1 {
		b.WriteString("s")
	}
	if len(hold.Groups) > 0 {
		fmt.Fprintf(&b, " from groups %v", hold.Groups)
	}
	fmt.Fprintf(&b, " (%d of %d), expires at %s", given, hold.Approvals, hold.ExpiresAt.UTC().Format(time.RFC3339))
	return b.String()
}

// approvers names the approvers of given, each "user" or "user (via
// caller)".
func approvers(given []v1alpha1.SyncApprovalRecord) string {
	names := make([]string, len(given))
	for i, g := range given {
		names[i] = g.User
		if g.Via != "" {
			names[i] += " (via " + g.Via + ")"
		}
	}
	return strings.Join(names, ", ")
}

// maxEventNote bounds the note of an approval Event: ten approvers with
// long names and bots would pass the API server's limit.
const maxEventNote = 1000

// approvalEvent records a Kubernetes Event about app's held sync.
func (r *Reconciler) approvalEvent(app *v1alpha1.Application, kind, reason, note string) {
	if r.opts.Recorder == nil {
		return
	}
	if len(note) > maxEventNote {
		note = strings.ToValidUTF8(note[:maxEventNote], "") + "..."
	}
	r.opts.Recorder.Eventf(app, nil, kind, reason, "Sync", "%s", note)
}
