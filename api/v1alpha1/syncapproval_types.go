package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SyncApproval makes every sync of an application wait until enough
// people approved it (graphcd's own; Argo CD has no such policy). Set on
// an AppProject it holds the syncs of all the project's applications; set
// on an Application it holds that application's syncs when its project
// sets none: a project's policy cannot be weakened from an application.
//
// A held sync shows in status.operationState (phase Running, a message
// naming what it waits for, operationState.approval) until approvals
// recorded through graphcd's API (the approveSync mutation) reach
// approvals, or it ends Failed once expiry has passed. Whoever requested
// the sync cannot approve it. Dry runs are never held.
type SyncApproval struct {
	// Approvals is how many distinct people must approve a sync; 1 when
	// unset.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=1
	// +optional
	Approvals int32 `json:"approvals,omitempty"`
	// Groups are the SSO groups (or groups an on-behalf approval names)
	// an approver must belong to one of; when empty, anybody allowed
	// `applications, approve` on the application may approve.
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:MinLength=1
	// +optional
	Groups []string `json:"groups,omitempty"`
	// Expiry is how long a held sync waits for its approvals, as a Go
	// duration such as "1h" or "30m" (at most 720h); "24h" when unset.
	// Past it the sync ends Failed and its approvals are dropped.
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Expiry string `json:"expiry,omitempty"`
}

// OperationApproval is what a held sync waits for: the terms of the sync
// approval policy when the sync was held, and the approvals that let it
// run once it got them.
type OperationApproval struct {
	// ID names the held operation; an approval counts only for the
	// operation it names, so approvals never carry over to a later sync.
	ID string `json:"id"`
	// Approvals is how many distinct approvers the sync needs.
	Approvals int32 `json:"approvals"`
	// Groups are the groups approvers must belong to one of; anyone
	// allowed to approve when empty.
	// +optional
	Groups []string `json:"groups,omitempty"`
	// ExpiresAt is when the sync stops waiting and fails.
	ExpiresAt metav1.Time `json:"expiresAt"`
	// ApprovedAt is when the sync had its approvals and started to run;
	// unset while it waits.
	// +optional
	ApprovedAt *metav1.Time `json:"approvedAt,omitempty"`
	// ApprovedBy are the approvals that counted.
	// +optional
	ApprovedBy []SyncApprovalRecord `json:"approvedBy,omitempty"`
}

// SyncApprovalRecord is one approval of a held sync.
type SyncApprovalRecord struct {
	// User is who approved: the caller of the API, or the chat user a bot
	// approved on behalf of.
	User string `json:"user"`
	// Via is the API caller that approved on behalf of user (a chat bot's
	// account); empty when user approved directly.
	// +optional
	Via string `json:"via,omitempty"`
	// Groups are the approver's groups when they approved.
	// +optional
	Groups []string `json:"groups,omitempty"`
	// At is when they approved.
	At metav1.Time `json:"at"`
	// Operation is the ID of the operation approved
	// (OperationApproval.ID).
	// +optional
	Operation string `json:"operation,omitempty"`
}
