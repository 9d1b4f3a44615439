package audit

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// EventIDAnnotation on an Event names the audit entry it records.
const EventIDAnnotation = "graphcd.io/audit-id"

// ReportingController is the reporting controller of audit Events.
const ReportingController = "graphcd.io/api-server"

// Reasons of audit Events, as Argo CD names its API's events.
const (
	ReasonCreated        = "ResourceCreated"
	ReasonUpdated        = "ResourceUpdated"
	ReasonDeleted        = "ResourceDeleted"
	ReasonOperation      = "OperationStarted"
	ReasonMutationFailed = "MutationFailed"
)

// maxNote bounds an Event's note (the API allows 1 KiB).
const maxNote = 1000

// EventWriter writes one Kubernetes Event (events.k8s.io/v1) per entry,
// regarding the entry's object in its namespace, or graphcd's settings
// ConfigMap in graphcd's namespace for entries whose object is not one of
// graphcd's (see event). Events carry who, what and the outcome, never
// the patch.
type EventWriter struct {
	client    kubernetes.Interface
	namespace string
	instance  string
}

// NewEventWriter returns a writer through client; namespace is
// graphcd's, instance names this replica (its Pod's name, say).
func NewEventWriter(client kubernetes.Interface, namespace, instance string) *EventWriter {
	if instance == "" {
		instance = "graphcd-server"
	}
	return &EventWriter{client: client, namespace: namespace, instance: instance}
}

// Write writes the Event of e.
func (w *EventWriter) Write(ctx context.Context, e *Entry) error {
	ev := w.event(e)
	_, err := w.client.EventsV1().Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create event in %s: %w", ev.Namespace, err)
	}
	return nil
}

// event builds the Event of e.
func (w *EventWriter) event(e *Entry) *eventsv1.Event {
	ns, regarding := w.regarding(e)
	reason, typ := reasonOf(e)
	// The client's address stays in the store, which only readers of
	// the audit trail see; Events are read by anyone who may read the
	// object.
	note := fmt.Sprintf("%s %s %s", e.User, e.Field, describe(e.Object))
	if e.Object.Project != "" {
		note += " (project " + e.Object.Project + ")"
	}
	if e.Outcome == Failure {
		note += ": " + e.ErrorCode
	}
	t := e.Time
	if t.IsZero() {
		t = time.Now()
	}
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:        eventName(regarding.Name, time.Now()),
			Namespace:   ns,
			Annotations: map[string]string{EventIDAnnotation: e.ID},
		},
		EventTime:           metav1.NewMicroTime(t),
		ReportingController: ReportingController,
		ReportingInstance:   w.instance,
		Action:              e.Field,
		Reason:              reason,
		Type:                typ,
		Regarding:           regarding,
		Note:                cut(note, maxNote),
	}
}

// regarding picks the object an Event of e regards, and its namespace.
// The objects graphcd writes in the management cluster carry the Events
// of their successful mutations: its own kinds, and the repository and
// cluster Secrets it keeps. The rest regard graphcd's settings ConfigMap,
// which stands for graphcd itself in its namespace: a refused or failed
// mutation (whose object the client named, and which must neither reach
// the Events of an object the client may not change nor crowd out its
// real ones), a live resource of a destination cluster (a Secret there
// included), an account, a repository or cluster by URL.
func (w *EventWriter) regarding(e *Entry) (string, corev1.ObjectReference) {
	o := e.Object
	switch {
	case e.Outcome == Failure, o.Name == "", o.Live:
	case o.Group == v1alpha1.GroupVersion.Group && o.Namespace != "":
		return o.Namespace, corev1.ObjectReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, UID: types.UID(o.UID)}
	case o.Group == "" && o.Kind == "Secret" && o.Namespace != "":
		return o.Namespace, corev1.ObjectReference{APIVersion: "v1", Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, UID: types.UID(o.UID)}
	}
	return w.namespace, corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: w.namespace, Name: wellknown.SettingsConfigMap}
}

func describe(o Object) string {
	name := o.Name
	if o.Namespace != "" {
		name = o.Namespace + "/" + name
	}
	if o.Kind == "" {
		return name
	}
	return strings.TrimSpace(o.Kind + " " + name)
}

// reasonOf picks the Event's reason and type from the mutation's name.
func reasonOf(e *Entry) (reason, typ string) {
	f := e.Field
	switch {
	case e.Outcome == Failure:
		return ReasonMutationFailed, corev1.EventTypeWarning
	case strings.HasPrefix(f, "create"), strings.HasPrefix(f, "add"):
		return ReasonCreated, corev1.EventTypeNormal
	case strings.HasPrefix(f, "delete"), strings.HasPrefix(f, "remove"):
		return ReasonDeleted, corev1.EventTypeNormal
	case strings.HasPrefix(f, "sync"), strings.HasPrefix(f, "rollback"):
		return ReasonOperation, corev1.EventTypeNormal
	}
	return ReasonUpdated, corev1.EventTypeNormal
}

// eventName is a unique Event name from the regarded object's name, as
// client-go's recorders make them.
func eventName(object string, t time.Time) string {
	suffix := fmt.Sprintf(".%x", t.UnixNano())
	max := validation.DNS1123SubdomainMaxLength - len(suffix)
	if len(object) > max {
		object = object[:max]
	}
	if len(validation.IsDNS1123Subdomain(object)) > 0 {
		object = "graphcd-audit"
	}
	return object + suffix
}
