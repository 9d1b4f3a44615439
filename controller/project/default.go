package project

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// DefaultProjectName is the project applications belong to when they name
// none, and the one graphcd creates when no project exists.
const DefaultProjectName = "default"

// DefaultProject returns the project graphcd creates when none exists, as
// Argo CD does: any repository, any cluster and namespace, every kind. Set
// its namespace (graphcd's own) before creating it.
func DefaultProject() *v1alpha1.AppProject {
	return &v1alpha1.AppProject{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "AppProject"},
		ObjectMeta: metav1.ObjectMeta{Name: DefaultProjectName},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:              []string{"*"},
			Destinations:             []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			ClusterResourceWhitelist: []metav1.GroupKind{{Group: "*", Kind: "*"}},
		},
	}
}
