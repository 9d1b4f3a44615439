package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ApplicationSet generates Applications from one template and the
// parameter sets its generators produce, field for field as Argo CD's
// (argoproj.io manifests convert by changing the group).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=applicationsets,singular=applicationset,shortName=appset;appsets,scope=Namespaced
// +kubebuilder:printcolumn:name="Generated",type=integer,JSONPath=`.status.resourcesCount`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ApplicationSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ApplicationSetSpec `json:"spec"`
	// +optional
	Status ApplicationSetStatus `json:"status,omitempty"`
}

// ApplicationSetList is a list of ApplicationSets.
//
// +kubebuilder:object:root=true
type ApplicationSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ApplicationSet `json:"items"`
}

// ApplicationSetSpec is what an ApplicationSet generates and how.
type ApplicationSetSpec struct {
	// GoTemplate renders the template with Go's text/template and
	// Sprig's functions; otherwise "{{param}}" placeholders are replaced.
	// +optional
	GoTemplate bool `json:"goTemplate,omitempty"`
	// GoTemplateOptions are text/template options, such as
	// "missingkey=error".
	// +optional
	GoTemplateOptions []string `json:"goTemplateOptions,omitempty"`
	// Generators produce the parameter sets; each set renders one
	// Application.
	Generators []ApplicationSetGenerator `json:"generators"`
	// Template is the Application each parameter set fills in.
	Template ApplicationSetTemplate `json:"template"`
	// TemplatePatch is a (templated) YAML or JSON patch applied to each
	// rendered Application, for fields a string template cannot reach.
	// +optional
	TemplatePatch *string `json:"templatePatch,omitempty"`
	// SyncPolicy says which changes to generated Applications the set
	// makes.
	// +optional
	SyncPolicy *ApplicationSetSyncPolicy `json:"syncPolicy,omitempty"`
	// Strategy is the rollout of changes (RollingSync).
	// +optional
	Strategy *ApplicationSetStrategy `json:"strategy,omitempty"`
	// PreservedFields are annotations and labels of the generated
	// Applications the set leaves as they are.
	// +optional
	PreservedFields *ApplicationPreservedFields `json:"preservedFields,omitempty"`
	// IgnoreApplicationDifferences are fields of the generated
	// Applications the set does not overwrite once they exist.
	// +optional
	IgnoreApplicationDifferences []ApplicationSetResourceIgnoreDifferences `json:"ignoreApplicationDifferences,omitempty"`
	// ApplyNestedSelectors applies the selectors of generators nested in
	// a matrix or merge.
	// +optional
	ApplyNestedSelectors bool `json:"applyNestedSelectors,omitempty"`
}

// ApplicationSetTemplate is an Application with placeholders.
type ApplicationSetTemplate struct {
	ApplicationSetTemplateMeta `json:"metadata"`
	Spec                       ApplicationSpec `json:"spec"`
}

// ApplicationSetTemplateMeta is the metadata a template may set.
type ApplicationSetTemplateMeta struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// +optional
	Finalizers []string `json:"finalizers,omitempty"`
}

// ApplicationSetGenerator is one generator; exactly one field is set.
// Generators graphcd does not run yet are kept as they are written, so
// Argo CD manifests load, and refused with a clear error when generating.
type ApplicationSetGenerator struct {
	// +optional
	List *ListGenerator `json:"list,omitempty"`
	// +optional
	Matrix *MatrixGenerator `json:"matrix,omitempty"`
	// +optional
	Merge *MergeGenerator `json:"merge,omitempty"`
	// +optional
	Clusters *ClusterGenerator `json:"clusters,omitempty"`
	// +optional
	Git *GitGenerator `json:"git,omitempty"`
	// +optional
	SCMProvider *runtime.RawExtension `json:"scmProvider,omitempty"`
	// +optional
	ClusterDecisionResource *DuckTypeGenerator `json:"clusterDecisionResource,omitempty"`
	// +optional
	PullRequest *runtime.RawExtension `json:"pullRequest,omitempty"`
	// +optional
	Plugin *runtime.RawExtension `json:"plugin,omitempty"`
	// Selector keeps only the parameter sets whose (string) parameters
	// match, as labels.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// ListGenerator produces one parameter set per element.
type ListGenerator struct {
	// Elements are objects whose fields are the parameters.
	// +optional
	Elements []runtime.RawExtension `json:"elements,omitempty"`
	// ElementsYaml is a (templated) YAML list of elements, for a list
	// nested in a matrix that builds it from another generator's output.
	// +optional
	ElementsYaml string `json:"elementsYaml,omitempty"`
	// Template overrides parts of the set's template for these elements.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Template *ApplicationSetTemplate `json:"template,omitempty"`
}

// MatrixGenerator combines two generators: every parameter set of the
// first with every set of the second, which may use the first's
// parameters.
type MatrixGenerator struct {
	Generators []ApplicationSetNestedGenerator `json:"generators"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Template *ApplicationSetTemplate `json:"template,omitempty"`
}

// MergeGenerator merges the parameter sets of later generators into the
// first's, where the values of MergeKeys match.
type MergeGenerator struct {
	Generators []ApplicationSetNestedGenerator `json:"generators"`
	MergeKeys  []string                        `json:"mergeKeys"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Template *ApplicationSetTemplate `json:"template,omitempty"`
}

// ApplicationSetNestedGenerator is a generator inside a matrix or merge;
// a nested matrix or merge is kept as written (Argo CD's schema stops
// the recursion there) and decoded when generating.
type ApplicationSetNestedGenerator struct {
	// +optional
	List *ListGenerator `json:"list,omitempty"`
	// +optional
	Matrix *runtime.RawExtension `json:"matrix,omitempty"`
	// +optional
	Merge *runtime.RawExtension `json:"merge,omitempty"`
	// +optional
	Clusters *ClusterGenerator `json:"clusters,omitempty"`
	// +optional
	Git *GitGenerator `json:"git,omitempty"`
	// +optional
	SCMProvider *runtime.RawExtension `json:"scmProvider,omitempty"`
	// +optional
	ClusterDecisionResource *DuckTypeGenerator `json:"clusterDecisionResource,omitempty"`
	// +optional
	PullRequest *runtime.RawExtension `json:"pullRequest,omitempty"`
	// +optional
	Plugin *runtime.RawExtension `json:"plugin,omitempty"`
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// ClusterGenerator produces one parameter set per registered cluster
// (cluster Secrets, and the cluster graphcd runs in): name,
// nameNormalized, server, project, metadata.labels, metadata.annotations
// and values.
type ClusterGenerator struct {
	// Selector keeps the clusters whose Secret's labels match; the
	// cluster graphcd runs in has none.
	// +optional
	Selector metav1.LabelSelector `json:"selector,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// Values are more parameters, under values.<key>, each templated
	// with the cluster's parameters.
	// +optional
	Values map[string]string `json:"values,omitempty"`
	// FlatList gives one parameter set whose clusters parameter lists
	// every cluster's.
	// +optional
	FlatList bool `json:"flatList,omitempty"`
}

// DuckTypeGenerator (clusterDecisionResource) produces one parameter set
// per decision that resources of a kind list in their status: the kind,
// the status list and the key naming a cluster come from a ConfigMap in
// graphcd's namespace (apiVersion, kind — the resource's plural name —,
// statusListKey, matchKey); the resources are the set's namespace's of
// that kind named Name or matching LabelSelector. Each decision's fields
// are parameters, with name and server of the cluster its matchKey
// names.
type DuckTypeGenerator struct {
	ConfigMapRef string `json:"configMapRef"`
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	LabelSelector metav1.LabelSelector `json:"labelSelector,omitempty"`
	// +optional
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// +optional
	Values map[string]string `json:"values,omitempty"`
}

// GitGenerator produces parameter sets from a Git repository at a
// revision: one per directory matching Directories, or one per element
// of each JSON or YAML file matching Files.
type GitGenerator struct {
	RepoURL string `json:"repoURL"`
	// Revision is a branch, tag or commit (HEAD when empty).
	// +optional
	Revision string `json:"revision,omitempty"`
	// +optional
	Directories []GitDirectoryGeneratorItem `json:"directories,omitempty"`
	// +optional
	Files []GitFileGeneratorItem `json:"files,omitempty"`
	// PathParamPrefix puts the path parameters under this name.
	// +optional
	PathParamPrefix string `json:"pathParamPrefix,omitempty"`
	// Values are more parameters, under values.<key>, each templated
	// with the set's other parameters.
	// +optional
	Values map[string]string `json:"values,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Template *ApplicationSetTemplate `json:"template,omitempty"`
	// RequeueAfterSeconds is how often the repository is read again.
	// +optional
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
}

// GitDirectoryGeneratorItem is a directory glob ("apps/*"); Exclude
// removes the directories it matches.
type GitDirectoryGeneratorItem struct {
	Path string `json:"path"`
	// +optional
	Exclude bool `json:"exclude,omitempty"`
}

// GitFileGeneratorItem is a file glob ("clusters/**/config.json").
type GitFileGeneratorItem struct {
	Path string `json:"path"`
	// +optional
	Exclude bool `json:"exclude,omitempty"`
}

// ApplicationSetSyncPolicy says what the set may do to the Applications
// it generates.
type ApplicationSetSyncPolicy struct {
	// PreserveResourcesOnDeletion keeps the generated Applications'
	// resources when the set deletes an Application.
	// +optional
	PreserveResourcesOnDeletion bool `json:"preserveResourcesOnDeletion,omitempty"`
	// ApplicationsSync is create-only, create-update, create-delete or
	// sync (the default: all).
	// +optional
	// +kubebuilder:validation:Enum=create-only;create-update;create-delete;sync
	ApplicationsSync *string `json:"applicationsSync,omitempty"`
}

// The values of ApplicationSetSyncPolicy.ApplicationsSync.
const (
	ApplicationsSyncCreateOnly   = "create-only"
	ApplicationsSyncCreateUpdate = "create-update"
	ApplicationsSyncCreateDelete = "create-delete"
	ApplicationsSyncSync         = "sync"
)

// ApplicationSetStrategy is how changes reach the generated
// Applications: all at once (AllAtOnce, the default) or in steps
// (RollingSync).
type ApplicationSetStrategy struct {
	// +optional
	Type string `json:"type,omitempty"`
	// +optional
	RollingSync *ApplicationSetRolloutStrategy `json:"rollingSync,omitempty"`
	// DeletionOrder is AllAtOnce or Reverse (the RollingSync steps
	// backwards) when the set is deleted.
	// +optional
	DeletionOrder string `json:"deletionOrder,omitempty"`
}

// ApplicationSetRolloutStrategy is a RollingSync's steps, in order.
type ApplicationSetRolloutStrategy struct {
	// +optional
	Steps []ApplicationSetRolloutStep `json:"steps,omitempty"`
}

// ApplicationSetRolloutStep selects generated Applications by their
// labels and syncs at most MaxUpdate of them at once (a number or a
// percentage; all when unset).
type ApplicationSetRolloutStep struct {
	// +optional
	MatchExpressions []ApplicationMatchExpression `json:"matchExpressions,omitempty"`
	// +optional
	MaxUpdate *intstr.IntOrString `json:"maxUpdate,omitempty"`
}

// ApplicationMatchExpression is a label selector requirement (In,
// NotIn).
type ApplicationMatchExpression struct {
	// +optional
	Key string `json:"key,omitempty"`
	// +optional
	Operator string `json:"operator,omitempty"`
	// +optional
	Values []string `json:"values,omitempty"`
}

// ApplicationPreservedFields are annotation and label keys whose values
// on a generated Application the set keeps.
type ApplicationPreservedFields struct {
	// +optional
	Annotations []string `json:"annotations,omitempty"`
	// +optional
	Labels []string `json:"labels,omitempty"`
}

// ApplicationSetResourceIgnoreDifferences names fields of the generated
// Applications (all, or the one called Name) the set leaves as they are.
type ApplicationSetResourceIgnoreDifferences struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	JSONPointers []string `json:"jsonPointers,omitempty"`
	// +optional
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
}

// ApplicationSetStatus is what the controller last did with the set.
type ApplicationSetStatus struct {
	// Conditions are ErrorOccurred, ParametersGenerated,
	// ResourcesUpToDate and RolloutProgressing.
	// +optional
	Conditions []ApplicationSetCondition `json:"conditions,omitempty"`
	// ApplicationStatus is each generated Application's progress through
	// a RollingSync.
	// +optional
	ApplicationStatus []ApplicationSetApplicationStatus `json:"applicationStatus,omitempty"`
	// Resources are the generated Applications with their sync and
	// health status.
	// +optional
	Resources []ApplicationSetResourceStatus `json:"resources,omitempty"`
	// ResourcesCount is how many Applications the set owns.
	// +optional
	ResourcesCount int64 `json:"resourcesCount,omitempty"`
	// Generated explains the last generation, element by element (a
	// graphcd field): the Application each produced, the parameters
	// that produced it, and what the controller did and why.
	// +optional
	Generated []ApplicationSetGeneratedApp `json:"generated,omitempty"`
}

// ApplicationSetConditionType is the kind of an ApplicationSet
// condition.
type ApplicationSetConditionType string

// ApplicationSet condition types, as Argo CD's.
const (
	ApplicationSetConditionErrorOccurred       ApplicationSetConditionType = "ErrorOccurred"
	ApplicationSetConditionParametersGenerated ApplicationSetConditionType = "ParametersGenerated"
	ApplicationSetConditionResourcesUpToDate   ApplicationSetConditionType = "ResourcesUpToDate"
	ApplicationSetConditionRolloutProgressing  ApplicationSetConditionType = "RolloutProgressing"
)

// ApplicationSetCondition is one condition of a set.
type ApplicationSetCondition struct {
	Type ApplicationSetConditionType `json:"type"`
	// Status is "True", "False" or "Unknown".
	Status metav1.ConditionStatus `json:"status"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ApplicationSetApplicationStatus is one Application's place in a
// RollingSync.
type ApplicationSetApplicationStatus struct {
	Application string `json:"application"`
	// Status is Waiting, Pending, Progressing or Healthy.
	Status string `json:"status"`
	// Step is the (1-based) step the Application belongs to.
	// +optional
	Step string `json:"step,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
	// +optional
	TargetRevisions []string `json:"targetrevisions,omitempty"`
}

// ApplicationSetResourceStatus is a generated Application's state.
type ApplicationSetResourceStatus struct {
	// +optional
	Group string `json:"group,omitempty"`
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Name string `json:"name,omitempty"`
	// Status is the Application's sync status.
	// +optional
	Status SyncStatusCode `json:"status,omitempty"`
	// +optional
	Health *HealthStatus `json:"health,omitempty"`
}

// ApplicationSetAction is what the controller did with one generated
// element.
type ApplicationSetAction string

// The actions of ApplicationSetGeneratedApp.
const (
	// ApplicationSetCreated: the Application did not exist and was created.
	ApplicationSetCreated ApplicationSetAction = "Created"
	// ApplicationSetUpdated: the Application differed and was updated.
	ApplicationSetUpdated ApplicationSetAction = "Updated"
	// ApplicationSetUnchanged: the Application was as generated.
	ApplicationSetUnchanged ApplicationSetAction = "Unchanged"
	// ApplicationSetSkipped: the Application was not written (the
	// policy forbids it, or another owner has it).
	ApplicationSetSkipped ApplicationSetAction = "Skipped"
	// ApplicationSetFailed: the element generated nothing, or its
	// Application was refused.
	ApplicationSetFailed ApplicationSetAction = "Failed"
	// ApplicationSetDeleted: the Application is no longer generated and
	// was deleted.
	ApplicationSetDeleted ApplicationSetAction = "Deleted"
	// ApplicationSetKept: the Application is no longer generated and the
	// policy keeps it.
	ApplicationSetKept ApplicationSetAction = "Kept"
)

// ApplicationSetGeneratedApp is one element of a generation: the
// Application it produced (none when it failed), the generator and
// parameters behind it, and what was done and why.
type ApplicationSetGeneratedApp struct {
	// +optional
	Name string `json:"name,omitempty"`
	// Generator is the index of the set's generator; -1 for an
	// Application no generator produces any more.
	Generator int `json:"generator"`
	// Params are the parameters as JSON, shortened past 1 KiB and left
	// out when the status would grow too large.
	// +optional
	Params string               `json:"params,omitempty"`
	Action ApplicationSetAction `json:"action"`
	// +optional
	Message string `json:"message,omitempty"`
}
