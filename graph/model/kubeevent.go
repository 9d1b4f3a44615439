package model

import (
	"cmp"
	"slices"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// KubeEvent is a Kubernetes Event as the graph shows it.
type KubeEvent struct {
	Type                string
	Reason              string
	Note                string
	Time                *metav1.Time
	Count               int
	ReportingController string
}

// KubeEvents converts events, newest first.
func KubeEvents(events []eventsv1.Event) []KubeEvent {
	out := make([]KubeEvent, 0, len(events))
	for i := range events {
		e := &events[i]
		ke := KubeEvent{Type: e.Type, Reason: e.Reason, Note: e.Note, Count: 1, ReportingController: e.ReportingController}
		switch {
		case e.Series != nil:
			t := metav1.NewTime(e.Series.LastObservedTime.Time)
			ke.Time, ke.Count = &t, int(e.Series.Count)
		case !e.EventTime.IsZero():
			t := metav1.NewTime(e.EventTime.Time)
			ke.Time = &t
		case !e.DeprecatedLastTimestamp.IsZero():
			ke.Time, ke.Count = &e.DeprecatedLastTimestamp, max(int(e.DeprecatedCount), 1)
		default:
			ke.Time = &e.CreationTimestamp
		}
		out = append(out, ke)
	}
	slices.SortStableFunc(out, func(a, b KubeEvent) int { return cmp.Compare(b.Time.UnixNano(), a.Time.UnixNano()) })
	return out
}

// LiveResource is one live object of an application: its masked manifest
// and what finds its Events.
type LiveResource struct {
	// Manifest is the object as YAML, Secret values masked; "" when it
	// does not exist.
	Manifest string
	// Destination is the application's, where the object lives.
	Destination v1alpha1.ApplicationDestination
	// Group, Kind, Namespace and Name identify the object.
	Group, Kind, Namespace, Name string
	// Object is the object, Secret values masked (nil when it does not
	// exist); App is its application. The links are built from them.
	Object map[string]any
	App    *v1alpha1.Application
}
