package model

import (
	"time"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// ResourceTree is an application's resource tree as the controller last
// saw it. Its slices are shared with the answer they came from: never
// modify them.
type ResourceTree struct {
	Nodes        []ResourceNode
	Revision     string
	ReconciledAt time.Time
	Truncated    bool
	// OrphanedNodes are the orphaned resources (without uid), at most
	// appstate.MaxOrphans; OrphanedCount counts them all.
	OrphanedNodes []ResourceRef
	OrphanedCount int32
}

// ResourceNode is one object of a resource tree, or a resource Git
// declares that the cluster does not have (Missing).
type ResourceNode struct {
	Group, Version, Kind, Namespace, Name, UID string
	ParentRefs                                 []ResourceRef
	Health                                     *v1alpha1.HealthStatus
	// Sync is nil for children, which Git does not declare.
	Sync            *v1alpha1.SyncStatusCode
	Info            []ResourceInfo
	Images          []string
	Missing         bool
	CreatedAt       *time.Time
	ResourceVersion string
}

// ResourceRef names an owner of a tree's object.
type ResourceRef struct {
	Group, Kind, Namespace, Name, UID string
}

// ResourceInfo is a fact about an object, such as a Pod's phase.
type ResourceInfo struct {
	Name, Value string
}

// ManagedResource is a resource Git declares or the application tracks,
// with its live and desired YAML and their diff.
type ManagedResource struct {
	Group, Version, Kind, Namespace, Name string
	Status                                v1alpha1.SyncStatusCode
	Health                                *v1alpha1.HealthStatus
	Hook, RequiresPruning                 bool
	Live, Desired, Diff                   string
}

// ApplicationEvent is what happened to an application, or, when Lagged, a
// marker that events were dropped (every other field is then nil). Its
// pointers point into the one event every subscriber shares: never
// modify what they point to.
type ApplicationEvent struct {
	Lagged                                                        bool
	Type                                                          *ApplicationEventType
	Time                                                          *time.Time
	Name, Namespace, SyncStatus, Health, Revision, OperationPhase *string
	Message                                                       *string
}
