package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SyncStatusCode says whether the cluster matches the desired state.
type SyncStatusCode string

// The sync status codes.
const (
	// SyncStatusCodeUnknown means the comparison could not be made, for
	// example because rendering failed.
	SyncStatusCodeUnknown SyncStatusCode = "Unknown"
	// SyncStatusCodeSynced means the cluster matches the desired state.
	SyncStatusCodeSynced SyncStatusCode = "Synced"
	// SyncStatusCodeOutOfSync means the cluster differs from the desired
	// state; a sync would change it.
	SyncStatusCodeOutOfSync SyncStatusCode = "OutOfSync"
)

// HealthStatusCode is the health of a resource or of a whole application,
// which is its least healthy resource's.
type HealthStatusCode string

// The health status codes, from Argo CD's health assessment.
const (
	// HealthStatusUnknown means health could not be assessed.
	HealthStatusUnknown HealthStatusCode = "Unknown"
	// HealthStatusProgressing means the resource is not healthy yet but may
	// become so, such as a Deployment rolling out.
	HealthStatusProgressing HealthStatusCode = "Progressing"
	// HealthStatusHealthy means the resource works as intended.
	HealthStatusHealthy HealthStatusCode = "Healthy"
	// HealthStatusSuspended means the resource is paused or waiting for an
	// event, such as a suspended CronJob or a paused rollout.
	HealthStatusSuspended HealthStatusCode = "Suspended"
	// HealthStatusDegraded means the resource failed or cannot become
	// healthy without intervention.
	HealthStatusDegraded HealthStatusCode = "Degraded"
	// HealthStatusMissing means the resource is in the desired state but
	// not in the cluster.
	HealthStatusMissing HealthStatusCode = "Missing"
)

// ApplicationConditionType is the type of an application condition. By
// convention a suffix Error marks errors and Warning marks warnings.
type ApplicationConditionType string

// The condition types the controller reports.
const (
	// ApplicationConditionDeletionError means deleting the application or
	// its resources failed.
	ApplicationConditionDeletionError ApplicationConditionType = "DeletionError"
	// ApplicationConditionInvalidSpecError means the spec is invalid, for
	// example its project does not permit its source or destination.
	ApplicationConditionInvalidSpecError ApplicationConditionType = "InvalidSpecError"
	// ApplicationConditionComparisonError means rendering or comparing the
	// desired state failed.
	ApplicationConditionComparisonError ApplicationConditionType = "ComparisonError"
	// ApplicationConditionSyncError means an automated sync could not start.
	ApplicationConditionSyncError ApplicationConditionType = "SyncError"
	// ApplicationConditionUnknownError is an error of no other type.
	ApplicationConditionUnknownError ApplicationConditionType = "UnknownError"
	// ApplicationConditionSharedResourceWarning means a resource is also
	// managed by another application.
	ApplicationConditionSharedResourceWarning ApplicationConditionType = "SharedResourceWarning"
	// ApplicationConditionRepeatedResourceWarning means the sources define
	// the same resource more than once.
	ApplicationConditionRepeatedResourceWarning ApplicationConditionType = "RepeatedResourceWarning"
	// ApplicationConditionExcludedResourceWarning means the sources define a
	// resource that settings exclude from management.
	ApplicationConditionExcludedResourceWarning ApplicationConditionType = "ExcludedResourceWarning"
	// ApplicationConditionOrphanedResourceWarning means the destination
	// namespace has resources no application manages.
	ApplicationConditionOrphanedResourceWarning ApplicationConditionType = "OrphanedResourceWarning"
	// ApplicationConditionImpersonationDisabledWarning means the project
	// names destination service accounts but sync impersonation is off, so
	// syncs ignore them (graphcd's own; Argo CD ignores them silently).
	ApplicationConditionImpersonationDisabledWarning ApplicationConditionType = "ImpersonationDisabledWarning"
	// ApplicationConditionHydrationError means hydrating
	// spec.sourceHydrator's dry source failed (graphcd's own; Argo CD
	// reports it in status.sourceHydrator only).
	ApplicationConditionHydrationError ApplicationConditionType = "HydrationError"
)

// ApplicationStatus is what the controller last observed about an
// application.
type ApplicationStatus struct {
	// Resources are the resources of the desired state and the live
	// resources the application manages, each with its sync and health.
	// +optional
	Resources []ResourceStatus `json:"resources,omitempty"`
	// Sync is the result of the last comparison of desired and live state.
	// +optional
	Sync SyncStatus `json:"sync,omitempty"`
	// Health is the aggregated health of the application's resources.
	// +optional
	Health HealthStatus `json:"health,omitempty"`
	// History records past syncs, oldest first, for display and rollback;
	// spec.revisionHistoryLimit caps its length.
	// +optional
	History []RevisionHistory `json:"history,omitempty"`
	// Conditions are the current errors and warnings.
	// +optional
	Conditions []ApplicationCondition `json:"conditions,omitempty"`
	// ReconciledAt is when the desired state was last compared with the
	// cluster using the latest revision from the source.
	// +optional
	ReconciledAt *metav1.Time `json:"reconciledAt,omitempty"`
	// OperationState is the progress and result of the current or last
	// operation.
	// +optional
	OperationState *OperationState `json:"operationState,omitempty"`
	// ObservedAt is when the status was last updated without fetching the
	// source. Deprecated: kept for compatibility, no longer written.
	// +optional
	ObservedAt *metav1.Time `json:"observedAt,omitempty"`
	// SourceType is the detected type of a single-source application.
	// +optional
	SourceType ApplicationSourceType `json:"sourceType,omitempty"`
	// SourceTypes are the detected types of each of spec.sources.
	// +optional
	SourceTypes []ApplicationSourceType `json:"sourceTypes,omitempty"`
	// Summary lists the external URLs and container images of the
	// application's resources.
	// +optional
	Summary ApplicationSummary `json:"summary,omitempty"`
	// ControllerNamespace is the namespace of the controller managing the
	// application.
	// +optional
	ControllerNamespace string `json:"controllerNamespace,omitempty"`
	// SourceHydrator is the state of spec.sourceHydrator's hydration: the
	// operation in progress or last run, and the last one that succeeded.
	// +optional
	SourceHydrator SourceHydratorStatus `json:"sourceHydrator,omitempty"`
}

// SourceHydratorStatus is what the controller last did to hydrate an
// application's dry source, as Argo CD reports it.
type SourceHydratorStatus struct {
	// LastSuccessfulOperation is the last hydration that committed (or
	// found already committed) the manifests of a dry commit.
	// +optional
	LastSuccessfulOperation *SuccessfulHydrateOperation `json:"lastSuccessfulOperation,omitempty"`
	// CurrentOperation is the hydration in progress or the last one run,
	// successful or not.
	// +optional
	CurrentOperation *HydrateOperation `json:"currentOperation,omitempty"`
}

// HydrateOperationPhase is the phase of a hydration.
// +kubebuilder:validation:Enum=Hydrating;Failed;Hydrated
type HydrateOperationPhase string

// The phases of a hydration.
const (
	// HydrateOperationPhaseHydrating means the dry source is being
	// rendered and committed.
	HydrateOperationPhaseHydrating HydrateOperationPhase = "Hydrating"
	// HydrateOperationPhaseFailed means the hydration failed; it is tried
	// again at the next reconcile.
	HydrateOperationPhaseFailed HydrateOperationPhase = "Failed"
	// HydrateOperationPhaseHydrated means the manifests are committed.
	HydrateOperationPhaseHydrated HydrateOperationPhase = "Hydrated"
)

// HydrateOperation is one hydration: rendering a dry commit and committing
// the manifests.
type HydrateOperation struct {
	// StartedAt is when the hydration started.
	// +optional
	StartedAt metav1.Time `json:"startedAt,omitempty"`
	// FinishedAt is when the hydration ended, successful or not.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// Phase is where the hydration is.
	Phase HydrateOperationPhase `json:"phase"`
	// Message says why a hydration failed.
	// +optional
	Message string `json:"message,omitempty"`
	// DrySHA is the dry source's commit being hydrated.
	// +optional
	DrySHA string `json:"drySHA,omitempty"`
	// HydratedSHA is the commit holding the hydrated manifests.
	// +optional
	HydratedSHA string `json:"hydratedSHA,omitempty"`
	// SourceHydrator is the spec.sourceHydrator the hydration ran for.
	SourceHydrator SourceHydrator `json:"sourceHydrator,omitempty"`
}

// SuccessfulHydrateOperation is a hydration that committed the manifests
// of a dry commit.
type SuccessfulHydrateOperation struct {
	// DrySHA is the dry source's commit that was hydrated.
	// +optional
	DrySHA string `json:"drySHA,omitempty"`
	// HydratedSHA is the commit holding its hydrated manifests.
	// +optional
	HydratedSHA string `json:"hydratedSHA,omitempty"`
	// SourceHydrator is the spec.sourceHydrator the hydration ran for.
	SourceHydrator SourceHydrator `json:"sourceHydrator,omitempty"`
}

// ResourceStatus is the sync and health status of one resource.
type ResourceStatus struct {
	// Group is the API group of the resource.
	// +optional
	Group string `json:"group,omitempty"`
	// Version is the API version of the resource.
	// +optional
	Version string `json:"version,omitempty"`
	// Kind is the kind of the resource.
	// +optional
	Kind string `json:"kind,omitempty"`
	// Namespace is the namespace of the resource; empty if cluster-scoped.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name is the name of the resource.
	// +optional
	Name string `json:"name,omitempty"`
	// Status says whether the live resource matches the desired one.
	// +optional
	Status SyncStatusCode `json:"status,omitempty"`
	// Health is the resource's health, when it can be assessed.
	// +optional
	Health *HealthStatus `json:"health,omitempty"`
	// Hook is true for sync hooks (resources with the
	// argocd.argoproj.io/hook annotation or Helm hook annotations).
	// +optional
	Hook bool `json:"hook,omitempty"`
	// RequiresPruning is true for live resources no longer in the desired
	// state; a sync with pruning deletes them.
	// +optional
	RequiresPruning bool `json:"requiresPruning,omitempty"`
	// SyncWave is the resource's wave: lower waves are applied first.
	// +optional
	SyncWave int64 `json:"syncWave,omitempty"`
	// RequiresDeletionConfirmation is true when the resource may only be
	// deleted after a user confirms it.
	// +optional
	RequiresDeletionConfirmation bool `json:"requiresDeletionConfirmation,omitempty"`
}

// SyncStatus is the result of comparing the desired state with the cluster.
type SyncStatus struct {
	// Status says whether the cluster matches the desired state.
	Status SyncStatusCode `json:"status"`
	// ComparedTo is the spec the comparison used, so a stale result can be
	// told from a current one.
	// +optional
	ComparedTo ComparedTo `json:"comparedTo,omitempty"`
	// Revision is the resolved revision (commit SHA or chart version) of a
	// single-source application that was compared.
	// +optional
	Revision string `json:"revision,omitempty"`
	// Revisions are the resolved revisions of each of spec.sources.
	// +optional
	Revisions []string `json:"revisions,omitempty"`
}

// ComparedTo is the part of the spec a comparison was made with.
type ComparedTo struct {
	// Source is the source compared, for single-source applications.
	// +optional
	Source ApplicationSource `json:"source,omitempty"`
	// Destination is the destination compared.
	Destination ApplicationDestination `json:"destination"`
	// Sources are the sources compared, for multi-source applications.
	// +optional
	Sources []ApplicationSource `json:"sources,omitempty"`
	// IgnoreDifferences are the ignore rules the comparison applied.
	// +optional
	IgnoreDifferences []ResourceIgnoreDifferences `json:"ignoreDifferences,omitempty"`
}

// HealthStatus is the health of an application or resource.
type HealthStatus struct {
	// Status is the health status code.
	// +optional
	Status HealthStatusCode `json:"status,omitempty"`
	// Message explains the status, such as why a resource is degraded.
	// +optional
	Message string `json:"message,omitempty"`
	// LastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// RevisionHistory records one completed sync.
type RevisionHistory struct {
	// Revision is the resolved revision synced, for single-source
	// applications.
	// +optional
	Revision string `json:"revision,omitempty"`
	// DeployedAt is when the sync finished.
	DeployedAt metav1.Time `json:"deployedAt"`
	// ID identifies the entry; it increases with every sync and is what a
	// rollback refers to.
	ID int64 `json:"id"`
	// Source is the source synced, for single-source applications.
	// +optional
	Source ApplicationSource `json:"source,omitempty"`
	// DeployStartedAt is when the sync started.
	// +optional
	DeployStartedAt *metav1.Time `json:"deployStartedAt,omitempty"`
	// Sources are the sources synced, for multi-source applications.
	// +optional
	Sources []ApplicationSource `json:"sources,omitempty"`
	// Revisions are the resolved revisions synced for each of sources.
	// +optional
	Revisions []string `json:"revisions,omitempty"`
	// InitiatedBy is who started the sync.
	// +optional
	InitiatedBy OperationInitiator `json:"initiatedBy,omitempty"`
}

// ApplicationCondition is a current error or warning about an application.
type ApplicationCondition struct {
	// Type is the kind of error or warning.
	Type ApplicationConditionType `json:"type"`
	// Message describes the problem for people.
	Message string `json:"message"`
	// LastTransitionTime is when the condition was first observed.
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ApplicationSummary lists things about an application's resources worth
// showing at a glance.
type ApplicationSummary struct {
	// ExternalURLs are the URLs the application is reachable at, from its
	// Ingresses, Services and link annotations.
	// +optional
	ExternalURLs []string `json:"externalURLs,omitempty"`
	// Images are the container images the application runs.
	// +optional
	Images []string `json:"images,omitempty"`
}
