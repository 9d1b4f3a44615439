package catalog

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Events reads the Kubernetes Events of Applications and records the
// API's own.
type Events struct{ client kubernetes.Interface }

// NewEvents reads Events through client.
func NewEvents(client kubernetes.Interface) *Events { return &Events{client: client} }

// maxEventsPerList bounds one list of a namespace's application events.
const maxEventsPerList = 5000

// ApplicationEvents returns the Events about Applications in namespace, in
// one list request (the API's dataloader asks once per namespace for a
// whole page of apps).
func (e *Events) ApplicationEvents(ctx context.Context, namespace string) ([]eventsv1.Event, error) {
	list, err := e.client.EventsV1().Events(namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "regarding.kind=Application",
		Limit:         maxEventsPerList,
	})
	if err != nil {
		return nil, fmt.Errorf("list application events in %s: %w", namespace, err)
	}
	return list.Items, nil
}

// reportingController is the reporting controller of the Events the API
// writes about Applications.
const reportingController = "graphcd.io/api-server"

// maxNote bounds an Event's note (the API allows 1 KiB).
const maxNote = 1000

// Record writes a Normal Event about app with reason and note (a
// resource action run, say: who ran what on which object). The Event is
// named after the app and the time, as Kubernetes' recorders name theirs.
func (e *Events) Record(ctx context.Context, app *v1alpha1.Application, reason, note string) error {
	now := time.Now()
	name := app.Name
	suffix := fmt.Sprintf(".%x", now.UnixNano())
	if limit := validation.DNS1123SubdomainMaxLength - len(suffix); len(name) > limit {
		name = strings.TrimRight(name[:limit], ".-")
	}
	if len(note) > maxNote {
		note = note[:maxNote]
	}
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: name + suffix, Namespace: app.Namespace},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: reportingController,
		ReportingInstance:   "graphcd-server",
		Action:              reason,
		Reason:              reason,
		Type:                corev1.EventTypeNormal,
		Regarding: corev1.ObjectReference{
			APIVersion: v1alpha1.GroupVersion.String(), Kind: "Application",
			Namespace: app.Namespace, Name: app.Name, UID: app.UID,
		},
		Note: note,
	}
	if _, err := e.client.EventsV1().Events(app.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("record event on application %s/%s: %w", app.Namespace, app.Name, err)
	}
	return nil
}
