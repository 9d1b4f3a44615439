package model

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// KindApplicationSet is the kind of an ApplicationSet's global ID.
const KindApplicationSet = "ApplicationSet"

// ApplicationSet is an ApplicationSet as the graph shows it. The embedded
// object is shared with the cache it came from: never modify it.
type ApplicationSet struct {
	*v1alpha1.ApplicationSet
}

// ID returns the global ID.
func (s ApplicationSet) ID() string {
	return NodeID(KindApplicationSet, types.NamespacedName{Namespace: s.Namespace, Name: s.Name})
}

// UID returns the Kubernetes UID.
func (s ApplicationSet) UID() string { return string(s.ApplicationSet.UID) }

// Labels returns the labels, sorted by key.
func (s ApplicationSet) Labels() []KeyValue { return KeyValues(s.ApplicationSet.Labels) }

// Annotations returns the annotations, sorted by key.
func (s ApplicationSet) Annotations() []KeyValue { return KeyValues(s.ApplicationSet.Annotations) }

// CreatedAt returns the creation time.
func (s ApplicationSet) CreatedAt() metav1.Time { return s.CreationTimestamp }

// Deleting reports whether the ApplicationSet is being deleted.
func (s ApplicationSet) Deleting() bool { return s.DeletionTimestamp != nil }

// Project returns the project of the set's template.
func (s ApplicationSet) Project() string { return s.ProjectName() }

// ApplicationSetConnection and ApplicationSetEdge are the schema's page
// of ApplicationSets, by namespace and name.
type (
	ApplicationSetConnection = Connection[ApplicationSet]
	ApplicationSetEdge       = Edge[ApplicationSet]
)

// GeneratedApplication is an Application an ApplicationSet renders,
// never written.
type GeneratedApplication struct {
	*v1alpha1.Application
}

// Labels returns the labels, sorted by key.
func (a GeneratedApplication) Labels() []KeyValue { return KeyValues(a.Application.Labels) }

// Annotations returns the annotations, sorted by key.
func (a GeneratedApplication) Annotations() []KeyValue {
	return KeyValues(a.Application.Annotations)
}

// Project returns the project, "default" when the spec names none.
func (a GeneratedApplication) Project() string { return a.ProjectName() }
