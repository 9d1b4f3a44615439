package catalog

import (
	"context"
	"fmt"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Events reads the Kubernetes Events of Applications.
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
