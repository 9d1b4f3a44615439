package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ApplicationSourceType is the kind of tool that renders a source.
type ApplicationSourceType string

// The source types, as reported in status.sourceType and status.sourceTypes.
const (
	// ApplicationSourceTypeHelm renders a Helm chart.
	ApplicationSourceTypeHelm ApplicationSourceType = "Helm"
	// ApplicationSourceTypeKustomize renders a Kustomize overlay.
	ApplicationSourceTypeKustomize ApplicationSourceType = "Kustomize"
	// ApplicationSourceTypeDirectory reads plain YAML/JSON or evaluates Jsonnet.
	ApplicationSourceTypeDirectory ApplicationSourceType = "Directory"
	// ApplicationSourceTypePlugin runs a config management plugin.
	ApplicationSourceTypePlugin ApplicationSourceType = "Plugin"
)

// ApplicationSourceHelm holds options for rendering a Helm chart, the
// equivalent of `helm template` flags.
type ApplicationSourceHelm struct {
	// ValueFiles are values files, relative to the chart or written as
	// $ref/path to use a file from another source of the application.
	// +optional
	ValueFiles []string `json:"valueFiles,omitempty"`
	// Parameters override single values, like `helm template --set`.
	// +optional
	Parameters []HelmParameter `json:"parameters,omitempty"`
	// ReleaseName is the Helm release name; the application name when empty.
	// +optional
	ReleaseName string `json:"releaseName,omitempty"`
	// Values is an inline values file as a YAML string. valuesObject wins
	// when both are set.
	// +optional
	Values string `json:"values,omitempty"`
	// FileParameters set values from the content of files, like
	// `helm template --set-file`.
	// +optional
	FileParameters []HelmFileParameter `json:"fileParameters,omitempty"`
	// Version is the Helm major version to render with ("v3"); only Helm 3
	// is supported.
	// +optional
	Version string `json:"version,omitempty"`
	// PassCredentials passes repository credentials to all domains the
	// chart's dependencies are fetched from (Helm's --pass-credentials).
	// +optional
	PassCredentials bool `json:"passCredentials,omitempty"`
	// IgnoreMissingValueFiles skips value files that do not exist instead of
	// failing the render.
	// +optional
	IgnoreMissingValueFiles bool `json:"ignoreMissingValueFiles,omitempty"`
	// SkipCrds leaves out the chart's crds/ directory (Helm's --skip-crds).
	// +optional
	SkipCrds bool `json:"skipCrds,omitempty"`
	// ValuesObject is inline values as a YAML object; it wins over values.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	ValuesObject *runtime.RawExtension `json:"valuesObject,omitempty"`
	// Namespace is the namespace the chart is rendered for
	// (.Release.Namespace); the destination namespace when empty.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// KubeVersion is the Kubernetes version the chart is rendered for
	// (.Capabilities.KubeVersion); the destination cluster's when empty.
	// +optional
	KubeVersion string `json:"kubeVersion,omitempty"`
	// APIVersions are the API versions the chart sees as available
	// (.Capabilities.APIVersions), as [group/]version/kind; the destination
	// cluster's when empty.
	// +optional
	APIVersions []string `json:"apiVersions,omitempty"`
	// SkipTests leaves out test hooks (Helm's --skip-tests).
	// +optional
	SkipTests bool `json:"skipTests,omitempty"`
	// SkipSchemaValidation skips validating values against the chart's
	// values.schema.json (Helm's --skip-schema-validation).
	// +optional
	SkipSchemaValidation bool `json:"skipSchemaValidation,omitempty"`
}

// HelmParameter overrides one Helm value, like `--set name=value`.
type HelmParameter struct {
	// Name is the value's path, such as image.tag.
	// +optional
	Name string `json:"name,omitempty"`
	// Value is the value to set.
	// +optional
	Value string `json:"value,omitempty"`
	// ForceString keeps the value a string even if it looks like a number
	// or boolean, like `--set-string`.
	// +optional
	ForceString bool `json:"forceString,omitempty"`
}

// HelmFileParameter sets one Helm value from a file, like `--set-file`.
type HelmFileParameter struct {
	// Name is the value's path.
	// +optional
	Name string `json:"name,omitempty"`
	// Path is the file whose content becomes the value.
	// +optional
	Path string `json:"path,omitempty"`
}

// ApplicationSourceKustomize holds options applied on top of a
// kustomization, the equivalent of `kustomize edit` commands.
type ApplicationSourceKustomize struct {
	// NamePrefix is prepended to the names of all resources.
	// +optional
	NamePrefix string `json:"namePrefix,omitempty"`
	// NameSuffix is appended to the names of all resources.
	// +optional
	NameSuffix string `json:"nameSuffix,omitempty"`
	// Images override container images, each as
	// [old_image_name=]new_image_name[:tag][@digest].
	// +optional
	Images []string `json:"images,omitempty"`
	// CommonLabels are added to all resources (and their selectors unless
	// labelWithoutSelector is set).
	// +optional
	CommonLabels map[string]string `json:"commonLabels,omitempty"`
	// Version selects a configured kustomize version to render with.
	// +optional
	Version string `json:"version,omitempty"`
	// CommonAnnotations are added to all resources.
	// +optional
	CommonAnnotations map[string]string `json:"commonAnnotations,omitempty"`
	// ForceCommonLabels lets commonLabels overwrite labels the resources
	// already have.
	// +optional
	ForceCommonLabels bool `json:"forceCommonLabels,omitempty"`
	// ForceCommonAnnotations lets commonAnnotations overwrite annotations
	// the resources already have.
	// +optional
	ForceCommonAnnotations bool `json:"forceCommonAnnotations,omitempty"`
	// Namespace is set on all namespaced resources.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// CommonAnnotationsEnvsubst substitutes application environment
	// variables (such as ${ARGOCD_APP_NAME}) in commonAnnotations values.
	// +optional
	CommonAnnotationsEnvsubst bool `json:"commonAnnotationsEnvsubst,omitempty"`
	// Replicas override the replica count of Deployments and StatefulSets.
	// +optional
	Replicas []KustomizeReplica `json:"replicas,omitempty"`
	// Patches are added to the kustomization's patches.
	// +optional
	Patches []KustomizePatch `json:"patches,omitempty"`
	// Components are added to the kustomization's components.
	// +optional
	Components []string `json:"components,omitempty"`
	// IgnoreMissingComponents skips components that do not exist instead of
	// failing the render.
	// +optional
	IgnoreMissingComponents bool `json:"ignoreMissingComponents,omitempty"`
	// LabelWithoutSelector adds commonLabels to resources but not to their
	// selectors and templates, so existing selectors keep matching.
	// +optional
	LabelWithoutSelector bool `json:"labelWithoutSelector,omitempty"`
	// KubeVersion is the Kubernetes version passed to Helm charts inflated
	// by kustomize; the destination cluster's when empty.
	// +optional
	KubeVersion string `json:"kubeVersion,omitempty"`
	// APIVersions are the API versions passed to Helm charts inflated by
	// kustomize, as [group/]version/kind; the destination cluster's when
	// empty.
	// +optional
	APIVersions []string `json:"apiVersions,omitempty"`
}

// KustomizeReplica overrides the replica count of one workload.
type KustomizeReplica struct {
	// Name is the name of the Deployment or StatefulSet.
	Name string `json:"name"`
	// Count is the replica count, as a number or a numeric string.
	// +kubebuilder:validation:XIntOrString
	Count intstr.IntOrString `json:"count"`
}

// KustomizePatch is a strategic-merge or JSON 6902 patch, given inline or
// as a file, applied to the resources target selects.
type KustomizePatch struct {
	// Path is a file holding the patch, relative to the kustomization.
	// +optional
	Path string `json:"path,omitempty"`
	// Patch is the patch itself, as YAML or JSON.
	// +optional
	Patch string `json:"patch,omitempty"`
	// Target selects the resources to patch; when empty the patch names
	// its target itself.
	// +optional
	Target *KustomizeSelector `json:"target,omitempty"`
	// Options are kustomize patch options, such as allowNameChange and
	// allowKindChange.
	// +optional
	Options map[string]bool `json:"options,omitempty"`
}

// KustomizeSelector selects resources for a patch, as kustomize's
// selector does.
type KustomizeSelector struct {
	// Group is the API group of the resources.
	// +optional
	Group string `json:"group,omitempty"`
	// Version is the API version of the resources.
	// +optional
	Version string `json:"version,omitempty"`
	// Kind is the kind of the resources.
	// +optional
	Kind string `json:"kind,omitempty"`
	// Name is a name, or a regular expression matching names.
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace is a namespace, or a regular expression matching namespaces.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// AnnotationSelector selects by annotations, in label selector syntax.
	// +optional
	AnnotationSelector string `json:"annotationSelector,omitempty"`
	// LabelSelector selects by labels.
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
}

// ApplicationSourceDirectory holds options for directories of plain
// YAML/JSON manifests or Jsonnet files.
type ApplicationSourceDirectory struct {
	// Recurse reads subdirectories too.
	// +optional
	Recurse bool `json:"recurse,omitempty"`
	// Jsonnet holds options for evaluating .jsonnet files.
	// +optional
	Jsonnet ApplicationSourceJsonnet `json:"jsonnet,omitempty"`
	// Exclude is a glob (or {a,b} list of globs) of paths to leave out.
	// +optional
	Exclude string `json:"exclude,omitempty"`
	// Include is a glob (or {a,b} list of globs) of paths to read; all
	// manifest files when empty.
	// +optional
	Include string `json:"include,omitempty"`
}

// ApplicationSourceJsonnet holds options for evaluating Jsonnet.
type ApplicationSourceJsonnet struct {
	// ExtVars are external variables (std.extVar).
	// +optional
	ExtVars []JsonnetVar `json:"extVars,omitempty"`
	// TLAs are top-level arguments passed to the file's function.
	// +optional
	TLAs []JsonnetVar `json:"tlas,omitempty"`
	// Libs are extra library search directories (jsonnet -J).
	// +optional
	Libs []string `json:"libs,omitempty"`
}

// JsonnetVar is a Jsonnet external variable or top-level argument.
type JsonnetVar struct {
	// Name is the variable's name.
	Name string `json:"name"`
	// Value is the variable's value: a string, or Jsonnet code if code is
	// set.
	Value string `json:"value"`
	// Code makes value Jsonnet code instead of a string.
	// +optional
	Code bool `json:"code,omitempty"`
}

// ApplicationSourcePlugin selects a config management plugin and passes it
// environment variables and parameters.
type ApplicationSourcePlugin struct {
	// Name is the plugin's name; when empty the plugin is chosen by its
	// discovery rules.
	// +optional
	Name string `json:"name,omitempty"`
	// Env are environment variables for the plugin's commands.
	// +optional
	Env []EnvEntry `json:"env,omitempty"`
	// Parameters are passed to the plugin, as ARGOCD_APP_PARAMETERS and
	// PARAM_<NAME> environment variables.
	// +optional
	Parameters []ApplicationSourcePluginParameter `json:"parameters,omitempty"`
}

// EnvEntry is one environment variable.
type EnvEntry struct {
	// Name is the variable's name.
	Name string `json:"name"`
	// Value is the variable's value.
	Value string `json:"value"`
}

// ApplicationSourcePluginParameter is a named plugin parameter holding a
// string, a map or an array.
type ApplicationSourcePluginParameter struct {
	// Name identifies the parameter.
	// +optional
	Name string `json:"name,omitempty"`
	// String is the value of a string parameter.
	// +optional
	String *string `json:"string,omitempty"`
	// Map is the value of a map parameter. An empty map is kept, so a
	// parameter can be set to "no entries".
	// +optional
	Map map[string]string `json:"map,omitzero"`
	// Array is the value of an array parameter. An empty array is kept, so
	// a parameter can be set to "no items".
	// +optional
	Array []string `json:"array,omitzero"`
}
