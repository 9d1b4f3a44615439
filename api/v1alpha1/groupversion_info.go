package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of graphcd's custom resources. It differs from
// Argo CD's argoproj.io so both can run in one cluster.
const GroupName = "graphcd.io"

var (
	// GroupVersion identifies this version of the API; clients and
	// informers use it to build requests and decode responses.
	GroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

	// SchemeBuilder collects the functions that register this package's
	// types with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme registers Application, AppProject, ApplicationSet and their lists with a
	// scheme, so typed clients and codecs can encode and decode them.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns the group-qualified resource for a plural resource name
// such as "applications", the form API errors and RBAC rules use.
func Resource(resource string) schema.GroupResource {
	return GroupVersion.WithResource(resource).GroupResource()
}

// addKnownTypes registers the kinds of this group version, and the meta
// types (ListOptions, Status, ...) that every group version serves.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&Application{},
		&ApplicationList{},
		&AppProject{},
		&AppProjectList{},
		&ApplicationSet{},
		&ApplicationSetList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
