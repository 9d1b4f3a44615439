package appstate

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// State is what the last comparison of one Application found.
type State struct {
	App types.NamespacedName `json:"app"`
	// Revision is the commit (or chart version) compared.
	Revision string `json:"revision,omitempty"`
	// ReconciledAt is when the comparison that produced this content ran.
	// A Writer does not rewrite a state whose content is unchanged, so on
	// a steady app it is when the content last changed (or was last
	// refreshed), not the latest reconcile; status.reconciledAt is that.
	ReconciledAt time.Time `json:"reconciledAt"`
	// Tree holds the application's live objects and their descendants,
	// parents before children, then the desired objects missing from the
	// cluster (Node.Missing), sorted by key.
	Tree []Node `json:"tree,omitempty"`
	// Managed holds one entry per desired or tracked live object, sorted
	// by group/kind/namespace/name.
	Managed []ManagedResource `json:"managed,omitempty"`
	// Orphans are the top-level objects of the destination namespace that
	// no application tracks, when the project monitors them (at most
	// MaxOrphans, sorted by key; OrphansCount counts them all).
	Orphans      []Ref `json:"orphans,omitempty"`
	OrphansCount int   `json:"orphansCount,omitempty"`
	// Truncated reports that the state was too large to store whole: the
	// Live, Desired and Diff texts of Managed were dropped.
	Truncated bool `json:"truncated,omitempty"`
}

// MaxOrphans bounds State.Orphans.
const MaxOrphans = 1000

// Ref points at another node of the tree, e.g. an owner.
type Ref struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
}

// Info is one labelled fact shown beside a node, such as a Pod's phase.
type Info struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Node is one object of an application's resource tree: a live one, or
// one Git declares that the cluster lacks (Missing).
type Node struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
	// ParentRefs are the node's owners present in the tree (for an
	// EndpointSlice, also its Service); empty for the app's own objects.
	ParentRefs []Ref `json:"parentRefs,omitempty"`
	// Health is nil for kinds that have no health assessment.
	Health *v1alpha1.HealthStatus `json:"health,omitempty"`
	// Sync is set on the application's own (tracked) objects only.
	Sync v1alpha1.SyncStatusCode `json:"sync,omitempty"`
	// Info holds facts about the object, e.g. for a Pod "Status Reason",
	// "Restart Count" and "Containers" ("1/2" ready).
	Info []Info `json:"info,omitempty"`
	// Images are the container images the object runs or templates.
	Images []string `json:"images,omitempty"`
	// Missing marks a desired object the cluster does not have, shown so
	// that the tree tells what a sync will create, as Argo CD's UI does.
	// Such a node carries its sync status (OutOfSync) and health (Missing)
	// and no UID, owners, details, CreatedAt or ResourceVersion.
	Missing bool `json:"missing,omitempty"`
	// CreatedAt is nil for a missing object. (Gob flattens pointers, so
	// states written when it was a plain time.Time still decode.)
	CreatedAt       *time.Time `json:"createdAt,omitempty"`
	ResourceVersion string     `json:"resourceVersion,omitempty"`
}

// ManagedResource is the comparison of one desired or tracked object.
type ManagedResource struct {
	Group     string                  `json:"group,omitempty"`
	Version   string                  `json:"version,omitempty"`
	Kind      string                  `json:"kind"`
	Namespace string                  `json:"namespace,omitempty"`
	Name      string                  `json:"name"`
	Status    v1alpha1.SyncStatusCode `json:"status,omitempty"`
	Health    *v1alpha1.HealthStatus  `json:"health,omitempty"`
	// Hook marks a live hook object (compared by no one, shown for
	// inspection); RequiresPruning a live object Git no longer declares.
	Hook            bool `json:"hook,omitempty"`
	RequiresPruning bool `json:"requiresPruning,omitempty"`
	// Live and Desired are the objects as YAML ("" when absent), with
	// Secret values masked the way the diff engine masks them.
	Live    string `json:"live,omitempty"`
	Desired string `json:"desired,omitempty"`
	// Diff is the masked unified diff (live -> desired) of the normalized
	// objects; empty when in sync.
	Diff string `json:"diff,omitempty"`
}
