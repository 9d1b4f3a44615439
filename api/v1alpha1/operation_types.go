package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OperationPhase is the phase of an operation, or of a hook within a sync.
type OperationPhase string

// The operation phases.
const (
	// OperationRunning means the operation is in progress.
	OperationRunning OperationPhase = "Running"
	// OperationTerminating means the operation is being stopped on request.
	OperationTerminating OperationPhase = "Terminating"
	// OperationFailed means the operation ran and failed, such as a failed
	// apply or a failed hook.
	OperationFailed OperationPhase = "Failed"
	// OperationError means the operation could not run, such as when the
	// manifests could not be rendered.
	OperationError OperationPhase = "Error"
	// OperationSucceeded means the operation completed successfully.
	OperationSucceeded OperationPhase = "Succeeded"
)

// SyncPhase is a phase of a sync; resources and hooks run in phase order
// PreSync, Sync, PostSync, with SyncFail only after a failure.
type SyncPhase string

// The sync phases.
const (
	// SyncPhasePreSync runs before the manifests are applied.
	SyncPhasePreSync SyncPhase = "PreSync"
	// SyncPhaseSync applies the manifests.
	SyncPhaseSync SyncPhase = "Sync"
	// SyncPhasePostSync runs after all resources are applied and healthy.
	SyncPhasePostSync SyncPhase = "PostSync"
	// SyncPhaseSyncFail runs when the sync failed.
	SyncPhaseSyncFail SyncPhase = "SyncFail"
)

// HookType is the kind of a sync hook, from the argocd.argoproj.io/hook
// annotation (or the equivalent Helm hook annotation).
type HookType string

// The hook types.
const (
	// HookTypePreSync runs before the manifests are applied.
	HookTypePreSync HookType = "PreSync"
	// HookTypeSync runs with the manifests, after PreSync hooks.
	HookTypeSync HookType = "Sync"
	// HookTypePostSync runs after a successful sync.
	HookTypePostSync HookType = "PostSync"
	// HookTypeSkip marks a resource the sync must not apply.
	HookTypeSkip HookType = "Skip"
	// HookTypeSyncFail runs when the sync failed.
	HookTypeSyncFail HookType = "SyncFail"
	// HookTypePostDelete runs after the application was deleted.
	HookTypePostDelete HookType = "PostDelete"
)

// ResultCode is the outcome of syncing one resource.
type ResultCode string

// The result codes.
const (
	// ResultCodeSynced means the resource was applied.
	ResultCodeSynced ResultCode = "Synced"
	// ResultCodeSyncFailed means applying the resource failed.
	ResultCodeSyncFailed ResultCode = "SyncFailed"
	// ResultCodePruned means the resource was deleted.
	ResultCodePruned ResultCode = "Pruned"
	// ResultCodePruneSkipped means the resource should be deleted but
	// pruning was not enabled.
	ResultCodePruneSkipped ResultCode = "PruneSkipped"
)

// Operation is a request for the controller to do something once, such as
// a sync. It is set at the top level of an Application, beside spec and
// status.
type Operation struct {
	// Sync requests a sync and holds its parameters.
	// +optional
	Sync *SyncOperation `json:"sync,omitempty"`
	// InitiatedBy is who requested the operation.
	// +optional
	InitiatedBy OperationInitiator `json:"initiatedBy,omitempty"`
	// Info is free-form information about the operation, such as the
	// reason for it.
	// +optional
	Info []Info `json:"info,omitempty"`
	// Retry controls whether and how the operation is retried if it fails.
	// +optional
	Retry RetryStrategy `json:"retry,omitempty"`
}

// OperationInitiator identifies who started an operation.
type OperationInitiator struct {
	// Username is the user who started the operation.
	// +optional
	Username string `json:"username,omitempty"`
	// Automated is true when the controller started the operation itself,
	// as an automated sync.
	// +optional
	Automated bool `json:"automated,omitempty"`
}

// SyncOperation holds the parameters of a sync.
type SyncOperation struct {
	// Revision is the revision to sync a single-source application to; the
	// spec's targetRevision when empty.
	// +optional
	Revision string `json:"revision,omitempty"`
	// Prune deletes resources no longer in the desired state.
	// +optional
	Prune bool `json:"prune,omitempty"`
	// DryRun validates the sync with the API server without changing
	// anything.
	// +optional
	DryRun bool `json:"dryRun,omitempty"`
	// SyncStrategy chooses how resources are applied.
	// +optional
	SyncStrategy *SyncStrategy `json:"syncStrategy,omitempty"`
	// Resources limits the sync to these resources; all when empty.
	// +optional
	Resources []SyncOperationResource `json:"resources,omitempty"`
	// Source overrides spec.source for this sync; rollbacks use it.
	// +optional
	Source *ApplicationSource `json:"source,omitempty"`
	// Manifests overrides the source with these manifests, for developing
	// locally.
	// +optional
	Manifests []string `json:"manifests,omitempty"`
	// SyncOptions are options for this sync only, in the same form as
	// spec.syncPolicy.syncOptions.
	// +optional
	SyncOptions []string `json:"syncOptions,omitempty"`
	// Sources overrides spec.sources for this sync; rollbacks use it.
	// +optional
	Sources []ApplicationSource `json:"sources,omitempty"`
	// Revisions are the revisions to sync each of spec.sources to.
	// +optional
	Revisions []string `json:"revisions,omitempty"`
	// SelfHealAttemptsCount counts the self-heal syncs attempted in a row,
	// so self-healing backs off.
	// +optional
	SelfHealAttemptsCount int64 `json:"autoHealAttemptsCount,omitempty"`
}

// SyncStrategy chooses how a sync applies resources. Hook is the default.
type SyncStrategy struct {
	// Apply applies every resource with `kubectl apply` semantics and
	// ignores hook annotations.
	// +optional
	Apply *SyncStrategyApply `json:"apply,omitempty"`
	// Hook runs hooks and applies resources in phases and waves.
	// +optional
	Hook *SyncStrategyHook `json:"hook,omitempty"`
}

// SyncStrategyApply holds options of the apply strategy.
type SyncStrategyApply struct {
	// Force deletes and recreates resources that cannot be patched, like
	// `kubectl apply --force`.
	// +optional
	Force bool `json:"force,omitempty"`
}

// SyncStrategyHook holds options of the hook strategy.
type SyncStrategyHook struct {
	// Force deletes and recreates resources that cannot be patched, like
	// `kubectl apply --force`.
	// +optional
	Force bool `json:"force,omitempty"`
}

// SyncOperationResource names a resource to include in a partial sync.
type SyncOperationResource struct {
	// Group is the API group of the resource.
	// +optional
	Group string `json:"group,omitempty"`
	// Kind is the kind of the resource.
	Kind string `json:"kind"`
	// Name is the name of the resource.
	Name string `json:"name"`
	// Namespace is the namespace of the resource.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// OperationState is the progress and outcome of an operation.
type OperationState struct {
	// Operation is the operation as requested.
	Operation Operation `json:"operation"`
	// Phase is where the operation is.
	Phase OperationPhase `json:"phase"`
	// Message says what happened, typically why the operation failed.
	// +optional
	Message string `json:"message,omitempty"`
	// SyncResult is the outcome of a sync operation.
	// +optional
	SyncResult *SyncOperationResult `json:"syncResult,omitempty"`
	// StartedAt is when the operation started.
	StartedAt metav1.Time `json:"startedAt"`
	// FinishedAt is when the operation completed.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// RetryCount is the number of retries made so far.
	// +optional
	RetryCount int64 `json:"retryCount,omitempty"`
	// Approval is set on a sync the sync approval policy holds: what it
	// waits for, and once it has them, who approved it.
	// +optional
	Approval *OperationApproval `json:"approval,omitempty"`
}

// SyncOperationResult is the outcome of a sync.
type SyncOperationResult struct {
	// Resources are the outcome for each resource and hook.
	// +optional
	Resources []ResourceResult `json:"resources,omitempty"`
	// Revision is the revision a single-source application was synced to.
	Revision string `json:"revision"`
	// Source is the source synced, for single-source applications;
	// automated sync compares it to avoid syncing the same thing twice.
	// +optional
	Source ApplicationSource `json:"source,omitempty"`
	// Sources are the sources synced, for multi-source applications.
	// +optional
	Sources []ApplicationSource `json:"sources,omitempty"`
	// Revisions are the revisions each of sources was synced to.
	// +optional
	Revisions []string `json:"revisions,omitempty"`
	// ManagedNamespaceMetadata is the namespace metadata the sync applied.
	// +optional
	ManagedNamespaceMetadata *ManagedNamespaceMetadata `json:"managedNamespaceMetadata,omitempty"`
}

// ResourceResult is the outcome of syncing one resource or running one
// hook.
type ResourceResult struct {
	// Group is the API group of the resource.
	Group string `json:"group"`
	// Version is the API version of the resource.
	Version string `json:"version"`
	// Kind is the kind of the resource.
	Kind string `json:"kind"`
	// Namespace is the namespace of the resource; empty if cluster-scoped.
	Namespace string `json:"namespace"`
	// Name is the name of the resource.
	Name string `json:"name"`
	// Status is the outcome; empty while the resource has not been applied
	// or pruned yet, and for hooks.
	// +optional
	Status ResultCode `json:"status,omitempty"`
	// Message explains the outcome, such as an apply error.
	// +optional
	Message string `json:"message,omitempty"`
	// HookType is the hook's type; empty for resources that are not hooks.
	// +optional
	HookType HookType `json:"hookType,omitempty"`
	// HookPhase is the phase of the hook, or of the resource's own
	// operation.
	// +optional
	HookPhase OperationPhase `json:"hookPhase,omitempty"`
	// SyncPhase is the sync phase the result was recorded in.
	// +optional
	SyncPhase SyncPhase `json:"syncPhase,omitempty"`
	// SyncWave is the wave, within SyncPhase, the resource or hook ran in.
	// A sync resumed after a controller restart reads it to know which
	// waves are done.
	// +optional
	SyncWave int64 `json:"syncWave,omitempty"`
}
