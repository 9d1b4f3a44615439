package gqlmodel

import (
	"cmp"
	"slices"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
