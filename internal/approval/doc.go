// Package approval holds the rules of sync approvals, which the
// controller (it holds syncs) and the API (it records approvals) both
// apply, so the two never disagree: the policy in force for an
// application, the terms a held sync waits on, and which recorded
// approvals count.
//
// A project (or an application whose project sets none) asks for
// approvals with spec.syncApproval:
//
//	spec:
//	  syncApproval:
//	    approvals: 2          # distinct approvers, 1 when unset
//	    groups: [release]     # approvers must be in one; anyone when empty
//	    expiry: 4h            # how long a held sync waits, 24h when unset
//
// The controller holds a sync before its first step: it records Hold's
// terms in status.operationState.approval and runs the sync once Counted
// finds enough approvals in the application's
// v1alpha1.SyncApprovalsAnnotation, where the API put them with Add.
package approval
