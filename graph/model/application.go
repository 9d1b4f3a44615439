package model

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Application is an Application as the graph shows it. The embedded
// object is shared with the index it came from: never modify it.
type Application struct {
	*v1alpha1.Application
	// Loaders, when set, are the resolvers' dataloaders for the fields of
	// this value alone: a subscription's event has no response-wide ones,
	// and its fields then share one read of what they need. Opaque here.
	Loaders any
}

// ID returns the global ID.
func (a Application) ID() string {
	return NodeID(KindApplication, types.NamespacedName{Namespace: a.Namespace, Name: a.Name})
}

// UID returns the Kubernetes UID.
func (a Application) UID() string { return string(a.Application.UID) }

// Labels returns the labels, sorted by key.
func (a Application) Labels() []KeyValue { return KeyValues(a.Application.Labels) }

// Annotations returns the annotations, sorted by key.
func (a Application) Annotations() []KeyValue { return KeyValues(a.Application.Annotations) }

// CreatedAt returns the creation time.
func (a Application) CreatedAt() metav1.Time { return a.CreationTimestamp }

// Deleting reports whether the Application is being deleted.
func (a Application) Deleting() bool { return a.DeletionTimestamp != nil }

// Project returns the project, "default" when the spec names none.
func (a Application) Project() string {
	if a.Spec.Project == "" {
		return "default"
	}
	return a.Spec.Project
}

// KeyValue is one entry of a string map.
type KeyValue struct {
	Key   string
	Value string
}

// KeyValues returns m as a list sorted by key, so that answers are stable.
func KeyValues(m map[string]string) []KeyValue {
	out := make([]KeyValue, 0, len(m))
	for k, v := range m {
		out = append(out, KeyValue{Key: k, Value: v})
	}
	slices.SortFunc(out, func(a, b KeyValue) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Status returns the status, with the sync and health status of an app
// not compared yet (empty) shown as Unknown, a value the schema's enums
// have.
func (a Application) Status() *v1alpha1.ApplicationStatus {
	s := a.Application.Status // a shallow copy: the object is shared
	if s.Sync.Status == "" {
		s.Sync.Status = v1alpha1.SyncStatusCodeUnknown
	}
	if s.Health.Status == "" {
		s.Health.Status = v1alpha1.HealthStatusUnknown
	}
	return &s
}
