package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Application is a set of Kubernetes manifests, rendered from a Git or Helm
// source, that graphcd keeps deployed to one destination cluster and
// namespace. Its fields match Argo CD's Application.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=applications,singular=application,shortName=app;apps,scope=Namespaced
// +kubebuilder:printcolumn:name="Project",type=string,JSONPath=`.spec.project`
// +kubebuilder:printcolumn:name="Sync",type=string,JSONPath=`.status.sync.status`
// +kubebuilder:printcolumn:name="Health",type=string,JSONPath=`.status.health.status`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.sync.revision`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Application struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata"`
	// Spec is the desired state: what to deploy, where, and how to sync it.
	Spec ApplicationSpec `json:"spec"`
	// Status is what the controller last observed; users never write it.
	// +optional
	Status ApplicationStatus `json:"status,omitempty"`
	// Operation requests an operation, such as a sync, that the controller
	// runs once and then clears; progress is reported in
	// status.operationState. Writing it is how the API and CLI start a sync.
	// +optional
	Operation *Operation `json:"operation,omitempty"`
}

// ApplicationList is a list of Applications, as returned by list calls.
//
// +kubebuilder:object:root=true
type ApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	metav1.ListMeta `json:"metadata"`
	// Items are the Applications in the list.
	Items []Application `json:"items"`
}

// ApplicationSpec is the desired state of an Application: which sources to
// render, which cluster and namespace to deploy to, and the sync policy.
type ApplicationSpec struct {
	// Source is where the application's manifests or Helm chart live. Use
	// either source or sources.
	// +optional
	Source *ApplicationSource `json:"source,omitempty"`
	// Destination is the cluster and namespace the manifests are deployed to.
	Destination ApplicationDestination `json:"destination"`
	// Project is the AppProject this application belongs to; the project
	// decides which repositories, destinations and resource kinds it may
	// use. The empty string means the project "default".
	Project string `json:"project"`
	// SyncPolicy controls when and how syncs run; without it syncs are
	// manual.
	// +optional
	SyncPolicy *SyncPolicy `json:"syncPolicy,omitempty"`
	// IgnoreDifferences lists resources and fields whose differences between
	// Git and the cluster are ignored when computing sync status, such as
	// replicas managed by an autoscaler.
	// +optional
	IgnoreDifferences []ResourceIgnoreDifferences `json:"ignoreDifferences,omitempty"`
	// Info is free-form information (URLs, email addresses, text) shown with
	// the application.
	// +optional
	Info []Info `json:"info,omitempty"`
	// RevisionHistoryLimit caps the number of entries kept in
	// status.history, which is used for display and rollback. Zero keeps
	// none; the default is 10.
	// +kubebuilder:validation:Minimum=0
	// +optional
	RevisionHistoryLimit *int64 `json:"revisionHistoryLimit,omitempty"`
	// Sources makes a multi-source application: each entry is rendered and
	// the results are deployed together. A source with ref set provides
	// files (such as Helm value files) to the others instead of manifests.
	// When set, source is ignored.
	// +optional
	Sources []ApplicationSource `json:"sources,omitempty"`
	// SourceHydrator renders manifests from a "dry" source and commits them
	// to a branch that is then synced. When set, it wins over source and
	// sources: the application syncs syncSource.
	// +optional
	SourceHydrator *SourceHydrator `json:"sourceHydrator,omitempty"`
	// SyncApproval holds every sync of the application until enough
	// people approved it (graphcd's own), when its project sets no
	// policy of its own; see SyncApproval.
	// +optional
	SyncApproval *SyncApproval `json:"syncApproval,omitempty"`
}

// ApplicationSource is one place manifests come from: a path in a Git
// repository (plain YAML, Jsonnet, Kustomize, a Helm chart or a plugin) or a
// chart in a Helm repository. At most one of helm, kustomize, directory and
// plugin should be set; with none, the type is detected from the files.
type ApplicationSource struct {
	// RepoURL is the URL of the Git or Helm repository (for OCI Helm
	// registries, without the oci:// scheme).
	RepoURL string `json:"repoURL"`
	// Path is the directory within a Git repository that holds the
	// manifests; not used for charts from Helm repositories.
	// +optional
	Path string `json:"path,omitempty"`
	// TargetRevision is what to deploy: for Git a commit, tag or branch
	// (HEAD when empty); for Helm repositories a chart version or semver
	// constraint.
	// +optional
	TargetRevision string `json:"targetRevision,omitempty"`
	// Helm holds options for rendering a Helm chart.
	// +optional
	Helm *ApplicationSourceHelm `json:"helm,omitempty"`
	// Kustomize holds options for rendering a Kustomize overlay.
	// +optional
	Kustomize *ApplicationSourceKustomize `json:"kustomize,omitempty"`
	// Directory holds options for plain YAML and Jsonnet directories.
	// +optional
	Directory *ApplicationSourceDirectory `json:"directory,omitempty"`
	// Plugin selects a config management plugin and passes it parameters.
	// +optional
	Plugin *ApplicationSourcePlugin `json:"plugin,omitempty"`
	// Chart is the chart name in a Helm repository; required when repoURL
	// is a Helm repository.
	// +optional
	Chart string `json:"chart,omitempty"`
	// Ref names this source so other sources of a multi-source application
	// can use its files, written as $ref/path (for example in valueFiles).
	// +optional
	Ref string `json:"ref,omitempty"`
	// Name identifies the source in a multi-source application, for display
	// and for addressing it in parameter overrides.
	// +optional
	Name string `json:"name,omitempty"`
}

// ApplicationDestination is a target cluster and namespace. The cluster is
// given by its API server URL (server) or by its registered name (name);
// set one of the two.
type ApplicationDestination struct {
	// Server is the URL of the target cluster's API server, such as
	// https://kubernetes.default.svc for the cluster graphcd runs in.
	// +optional
	Server string `json:"server,omitempty"`
	// Namespace is the namespace given to namespaced resources that do not
	// set metadata.namespace themselves.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name is the registered name of the target cluster, an alternative to
	// server.
	// +optional
	Name string `json:"name,omitempty"`
}

// SourceHydrator describes Argo CD's source hydration: manifests rendered
// from a dry source are committed to syncSource (or first to hydrateTo) and
// synced from there.
type SourceHydrator struct {
	// DrySource is where the unrendered ("don't repeat yourself") sources
	// live.
	DrySource DrySource `json:"drySource"`
	// SyncSource is the branch and path rendered manifests are committed to
	// and synced from.
	SyncSource SyncSource `json:"syncSource"`
	// HydrateTo is an optional staging branch to commit rendered manifests
	// to; something else (such as a pull request) moves them to syncSource.
	// +optional
	HydrateTo *HydrateTo `json:"hydrateTo,omitempty"`
}

// GetSyncSource is the source an application with a source hydrator
// compares and syncs (Argo CD's name): the dry repository at
// syncSource.targetBranch, under syncSource.path.
func (h *SourceHydrator) GetSyncSource() ApplicationSource {
	return ApplicationSource{RepoURL: h.DrySource.RepoURL, TargetRevision: h.SyncSource.TargetBranch, Path: h.SyncSource.Path}
}

// GetDrySource is the source a source hydrator renders.
func (h *SourceHydrator) GetDrySource() ApplicationSource {
	return ApplicationSource{RepoURL: h.DrySource.RepoURL, TargetRevision: h.DrySource.TargetRevision, Path: h.DrySource.Path}
}

// EffectiveSources are the sources an application compares and syncs,
// and whether it is multi-source: sourceHydrator's sync source when set,
// else sources when set (source is then ignored), else source; none when
// the spec has neither.
func (s *ApplicationSpec) EffectiveSources() (list []ApplicationSource, multi bool) {
	switch {
	case s.SourceHydrator != nil:
		return []ApplicationSource{s.SourceHydrator.GetSyncSource()}, false
	case len(s.Sources) > 0:
		return s.Sources, true
	case s.Source != nil:
		return []ApplicationSource{*s.Source}, false
	}
	return nil, false
}

// DrySource is the location of the unrendered sources of a SourceHydrator.
type DrySource struct {
	// RepoURL is the URL of the Git repository holding the sources.
	RepoURL string `json:"repoURL"`
	// TargetRevision is the revision of the sources to render.
	TargetRevision string `json:"targetRevision"`
	// Path is the directory of the sources within the repository.
	Path string `json:"path"`
}

// SyncSource is where a SourceHydrator commits rendered manifests and where
// they are synced from; the repository is the dry source's.
type SyncSource struct {
	// TargetBranch is the branch rendered manifests are committed to.
	TargetBranch string `json:"targetBranch"`
	// Path is the directory rendered manifests are committed to and synced
	// from.
	Path string `json:"path"`
}

// HydrateTo is a staging branch for rendered manifests.
type HydrateTo struct {
	// TargetBranch is the staging branch rendered manifests are committed to.
	TargetBranch string `json:"targetBranch"`
}

// SyncPolicy controls when syncs happen and how they behave.
type SyncPolicy struct {
	// Automated makes the controller sync whenever the desired state in Git
	// differs from the cluster; without it syncs are manual.
	// +optional
	Automated *SyncPolicyAutomated `json:"automated,omitempty"`
	// SyncOptions are options for every sync of the application, such as
	// CreateNamespace=true, ServerSideApply=true or PruneLast=true, in Argo
	// CD's Name=value form.
	// +optional
	SyncOptions []string `json:"syncOptions,omitempty"`
	// Retry controls whether and how failed syncs are retried.
	// +optional
	Retry *RetryStrategy `json:"retry,omitempty"`
	// ManagedNamespaceMetadata sets labels and annotations on the
	// destination namespace when the CreateNamespace=true option creates it.
	// +optional
	ManagedNamespaceMetadata *ManagedNamespaceMetadata `json:"managedNamespaceMetadata,omitempty"`
}

// SyncPolicyAutomated controls automated syncs.
type SyncPolicyAutomated struct {
	// Prune deletes resources that are no longer in the sources during
	// automated syncs (default false: they are only reported).
	// +optional
	Prune bool `json:"prune,omitempty"`
	// SelfHeal syncs again when someone changes a resource in the cluster,
	// not only when Git changes (default false).
	// +optional
	SelfHeal bool `json:"selfHeal,omitempty"`
	// AllowEmpty lets an automated sync leave the application with no
	// resources; without it an empty render is treated as a mistake.
	// +optional
	AllowEmpty bool `json:"allowEmpty,omitempty"`
	// Enabled switches automated sync off when false while keeping its
	// settings; unset means enabled.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// RetryStrategy controls how failed syncs are retried.
type RetryStrategy struct {
	// Limit is the number of retries after a failed sync: 0 means none and
	// a negative number means retry without limit.
	// +optional
	Limit int64 `json:"limit,omitempty"`
	// Backoff controls the wait between retries.
	// +optional
	Backoff *Backoff `json:"backoff,omitempty"`
}

// Backoff is an exponential backoff: the n-th retry waits
// duration * factor^n, at most maxDuration.
type Backoff struct {
	// Duration is the first wait, in seconds ("5") or as a Go duration
	// ("5s", "2m"). The default is 5s.
	// +optional
	Duration string `json:"duration,omitempty"`
	// Factor multiplies the wait after each failed retry. The default is 2.
	// +optional
	Factor *int64 `json:"factor,omitempty"`
	// MaxDuration caps the wait, in the same format as duration. The default
	// is 3m.
	// +optional
	MaxDuration string `json:"maxDuration,omitempty"`
}

// ManagedNamespaceMetadata is metadata for a namespace created by a sync.
type ManagedNamespaceMetadata struct {
	// Labels are set on the namespace.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are set on the namespace.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ResourceIgnoreDifferences selects resources, and fields within them, whose
// differences are ignored when comparing Git with the cluster.
type ResourceIgnoreDifferences struct {
	// Group is the API group of the resources; empty means the core group.
	// +optional
	Group string `json:"group,omitempty"`
	// Kind is the kind of the resources.
	Kind string `json:"kind"`
	// Name restricts the rule to resources with this name.
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace restricts the rule to resources in this namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// JSONPointers are RFC 6901 pointers to ignored fields, such as
	// /spec/replicas.
	// +optional
	JSONPointers []string `json:"jsonPointers,omitempty"`
	// JQPathExpressions are jq path expressions selecting ignored fields,
	// such as .spec.template.spec.containers[] | select(.name == "app").image.
	// +optional
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
	// ManagedFieldsManagers are field managers (as in metadata.managedFields)
	// whose changes win over Git and are not shown as differences.
	// +optional
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// Info is a named piece of information shown with an application, such as
// a link to its runbook.
type Info struct {
	// Name is the title of the item.
	Name string `json:"name"`
	// Value is the content: text, a URL or an email address.
	Value string `json:"value"`
}
