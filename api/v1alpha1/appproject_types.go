package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AppProject groups applications and limits what they may do: which
// repositories they may deploy from, which clusters and namespaces they
// may deploy to, which kinds of resources they may create, when they may
// sync, and who may act on them through project roles. Its fields match
// Argo CD's AppProject.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=appprojects,singular=appproject,shortName=appproj;appprojs,scope=Namespaced
// +kubebuilder:printcolumn:name="Description",type=string,JSONPath=`.spec.description`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AppProject struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata"`
	// Spec is the project's policy.
	Spec AppProjectSpec `json:"spec"`
	// Status holds state graphcd keeps for the project, such as issued
	// tokens.
	// +optional
	Status AppProjectStatus `json:"status,omitempty"`
}

// AppProjectList is a list of AppProjects, as returned by list calls.
//
// +kubebuilder:object:root=true
type AppProjectList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	metav1.ListMeta `json:"metadata"`
	// Items are the AppProjects in the list.
	Items []AppProject `json:"items"`
}

// AppProjectSpec is the policy of a project. Lists of patterns accept
// globs; "*" matches anything.
type AppProjectSpec struct {
	// SourceRepos are the repository URLs (globs) applications may deploy
	// from; none are allowed when empty. A leading "!" denies a pattern.
	// +optional
	SourceRepos []string `json:"sourceRepos,omitempty"`
	// Destinations are the clusters and namespaces (globs) applications may
	// deploy to; none are allowed when empty.
	// +optional
	Destinations []ApplicationDestination `json:"destinations,omitempty"`
	// Description says what the project is for.
	// +optional
	Description string `json:"description,omitempty"`
	// Roles are project roles: policies bound to SSO groups and to API
	// tokens, so teams and automation can act on the project's
	// applications.
	// +optional
	Roles []ProjectRole `json:"roles,omitempty"`
	// ClusterResourceWhitelist lists the cluster-scoped kinds applications
	// may create; none when empty.
	// +optional
	ClusterResourceWhitelist []metav1.GroupKind `json:"clusterResourceWhitelist,omitempty"`
	// NamespaceResourceBlacklist lists namespaced kinds applications may not
	// create.
	// +optional
	NamespaceResourceBlacklist []metav1.GroupKind `json:"namespaceResourceBlacklist,omitempty"`
	// OrphanedResources turns on reporting of resources in the destination
	// namespaces that no application manages.
	// +optional
	OrphanedResources *OrphanedResourcesMonitorSettings `json:"orphanedResources,omitempty"`
	// SyncWindows restrict when applications of the project may sync.
	// +optional
	SyncWindows []SyncWindow `json:"syncWindows,omitempty"`
	// NamespaceResourceWhitelist lists the namespaced kinds applications may
	// create; all when unset.
	// +optional
	NamespaceResourceWhitelist []metav1.GroupKind `json:"namespaceResourceWhitelist,omitempty"`
	// SignatureKeys are the IDs of GnuPG keys one of which must have signed
	// a Git commit for applications to sync it; no check when empty.
	// +optional
	SignatureKeys []SignatureKey `json:"signatureKeys,omitempty"`
	// ClusterResourceBlacklist lists cluster-scoped kinds applications may
	// not create.
	// +optional
	ClusterResourceBlacklist []metav1.GroupKind `json:"clusterResourceBlacklist,omitempty"`
	// SourceNamespaces are the namespaces (globs), other than graphcd's
	// own, in which Applications of this project may be created.
	// +optional
	SourceNamespaces []string `json:"sourceNamespaces,omitempty"`
	// PermitOnlyProjectScopedClusters restricts destinations to clusters
	// registered for this project.
	// +optional
	PermitOnlyProjectScopedClusters bool `json:"permitOnlyProjectScopedClusters,omitempty"`
	// DestinationServiceAccounts name the service account to impersonate
	// when syncing to each destination, so a sync has only that account's
	// permissions.
	// +optional
	DestinationServiceAccounts []ApplicationDestinationServiceAccount `json:"destinationServiceAccounts,omitempty"`
	// SyncApproval holds every sync of the project's applications until
	// enough people approved it (graphcd's own); see SyncApproval.
	// +optional
	SyncApproval *SyncApproval `json:"syncApproval,omitempty"`
}

// ProjectRole is a named set of policies within a project, bound to SSO
// groups and to JWT tokens issued for the role.
type ProjectRole struct {
	// Name is the role's name, unique within the project; policies refer to
	// it as proj:<project>:<name>.
	Name string `json:"name"`
	// Description says what the role is for.
	// +optional
	Description string `json:"description,omitempty"`
	// Policies are Casbin policy lines in Argo CD's CSV format, such as
	// "p, proj:my-project:deployer, applications, sync, my-project/*, allow".
	// +optional
	Policies []string `json:"policies,omitempty"`
	// JWTTokens records tokens issued for the role. Tokens are recorded in
	// status.jwtTokensByRole; this field is read for compatibility.
	// +optional
	JWTTokens []JWTToken `json:"jwtTokens,omitempty"`
	// Groups are SSO group claims whose members get the role.
	// +optional
	Groups []string `json:"groups,omitempty"`
}

// JWTToken records an API token issued for a project role; only its
// metadata is stored, so it can be listed and revoked.
type JWTToken struct {
	// IssuedAt is when the token was issued, in Unix seconds.
	IssuedAt int64 `json:"iat"`
	// ExpiresAt is when the token expires, in Unix seconds; 0 means never.
	// +optional
	ExpiresAt int64 `json:"exp,omitempty"`
	// ID is the token's ID (its jti claim), used to revoke it.
	// +optional
	ID string `json:"id,omitempty"`
}

// JWTTokens is the list of tokens issued for one role.
type JWTTokens struct {
	// Items are the tokens.
	// +optional
	Items []JWTToken `json:"items,omitempty"`
}

// AppProjectStatus holds state graphcd keeps for a project.
type AppProjectStatus struct {
	// JWTTokensByRole records the tokens issued for each role, by role name.
	// +optional
	JWTTokensByRole map[string]JWTTokens `json:"jwtTokensByRole,omitempty"`
}

// OrphanedResourcesMonitorSettings controls reporting of orphaned
// resources: resources in an application's destination namespace that no
// application manages.
type OrphanedResourcesMonitorSettings struct {
	// Warn adds an OrphanedResourceWarning condition to applications whose
	// namespaces hold orphaned resources.
	// +optional
	Warn *bool `json:"warn,omitempty"`
	// Ignore lists resources never reported as orphaned.
	// +optional
	Ignore []OrphanedResourceKey `json:"ignore,omitempty"`
}

// OrphanedResourceKey selects resources (globs) not to report as orphaned.
type OrphanedResourceKey struct {
	// Group is the API group of the resources.
	// +optional
	Group string `json:"group,omitempty"`
	// Kind is the kind of the resources.
	// +optional
	Kind string `json:"kind,omitempty"`
	// Name is the name of the resources.
	// +optional
	Name string `json:"name,omitempty"`
}

// SyncWindow is a recurring time window that allows or denies syncs of the
// applications, namespaces and clusters it matches.
type SyncWindow struct {
	// Kind is "allow" (syncs only inside the window) or "deny" (no syncs
	// inside the window).
	// +kubebuilder:validation:Enum=allow;deny
	// +optional
	Kind string `json:"kind,omitempty"`
	// Schedule is when the window opens, in cron format, such as
	// "0 22 * * *".
	// +optional
	Schedule string `json:"schedule,omitempty"`
	// Duration is how long the window stays open, as a Go duration such as
	// "1h".
	// +optional
	Duration string `json:"duration,omitempty"`
	// Applications are the application names (globs) the window applies to.
	// +optional
	Applications []string `json:"applications,omitempty"`
	// Namespaces are the destination namespaces (globs) the window applies
	// to.
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`
	// Clusters are the destination cluster names or URLs (globs) the window
	// applies to.
	// +optional
	Clusters []string `json:"clusters,omitempty"`
	// ManualSync allows manual syncs while the window would block syncs.
	// +optional
	ManualSync bool `json:"manualSync,omitempty"`
	// TimeZone is the IANA time zone of schedule, such as "Europe/Berlin";
	// UTC when empty.
	// +optional
	TimeZone string `json:"timeZone,omitempty"`
	// UseAndOperator makes an application match only if it matches all of
	// applications, namespaces and clusters that are set, instead of any.
	// +optional
	UseAndOperator bool `json:"andOperator,omitempty"`
	// Description says why the window exists, such as a change ticket.
	// +optional
	Description string `json:"description,omitempty"`
}

// SignatureKey is a GnuPG key that may sign commits.
type SignatureKey struct {
	// KeyID is the key's ID in hexadecimal, as shown by gpg --list-keys.
	KeyID string `json:"keyID"`
}

// ApplicationDestinationServiceAccount names the service account to
// impersonate when syncing to a destination.
type ApplicationDestinationServiceAccount struct {
	// Server is the URL (glob) of the destination cluster's API server.
	Server string `json:"server"`
	// Namespace is the destination namespace (glob).
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// DefaultServiceAccount is the service account to impersonate, as
	// name or namespace:name.
	DefaultServiceAccount string `json:"defaultServiceAccount"`
}
