package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ApplicationSetSpec is the spec of an ApplicationSet, which generates
// Applications from one template and the parameter sets its generators
// produce, field for field as Argo CD's (argoproj.io manifests convert by
// changing the group). `graphcd admin appset generate` reads it; the
// ApplicationSet resource (its CustomResourceDefinition) and its
// controller come with issue 25's later slices.
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
	Strategy *runtime.RawExtension `json:"strategy,omitempty"`
	// PreservedFields are Application fields the set leaves as they are.
	// +optional
	PreservedFields *runtime.RawExtension `json:"preservedFields,omitempty"`
	// IgnoreApplicationDifferences are Application fields the set does
	// not overwrite.
	// +optional
	IgnoreApplicationDifferences []runtime.RawExtension `json:"ignoreApplicationDifferences,omitempty"`
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
	ClusterDecisionResource *runtime.RawExtension `json:"clusterDecisionResource,omitempty"`
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
	Template *ApplicationSetTemplate `json:"template,omitempty"`
}

// MatrixGenerator combines two generators: every parameter set of the
// first with every set of the second, which may use the first's
// parameters.
type MatrixGenerator struct {
	Generators []ApplicationSetNestedGenerator `json:"generators"`
	// +optional
	Template *ApplicationSetTemplate `json:"template,omitempty"`
}

// MergeGenerator merges the parameter sets of later generators into the
// first's, where the values of MergeKeys match.
type MergeGenerator struct {
	Generators []ApplicationSetNestedGenerator `json:"generators"`
	MergeKeys  []string                        `json:"mergeKeys"`
	// +optional
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
	ClusterDecisionResource *runtime.RawExtension `json:"clusterDecisionResource,omitempty"`
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
	ApplicationsSync *string `json:"applicationsSync,omitempty"`
}
