package audit

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Reasons of the Events of terminal sessions.
const (
	ReasonTerminalStarted = "TerminalStarted"
	ReasonTerminalEnded   = "TerminalEnded"
)

// TerminalSessionAnnotation on a terminal's Events names its session, so
// that its start and its end pair up.
const TerminalSessionAnnotation = "graphcd.io/terminal-session"

// TerminalSession is a shell that a user runs in a container from the
// console, as its Events record it.
type TerminalSession struct {
	// ID names the session.
	ID string
	// User is who opened it.
	User string
	// AppNamespace, App and Project name the application whose pod it is.
	AppNamespace, App, Project string
	// Namespace, Pod and Container name the container; Shell is what runs.
	Namespace, Pod, Container, Shell string
	// Started is when the session opened.
	Started time.Time
}

// TerminalStarted writes the Event of s opening, regarding its
// application: whoever may read the app's Events sees who ran a shell
// in its pods.
func (w *EventWriter) TerminalStarted(ctx context.Context, s TerminalSession) error {
	note := fmt.Sprintf("%s opened a terminal in container %s of pod %s/%s (shell %s)", s.User, s.Container, s.Namespace, s.Pod, s.Shell)
	return w.writeTerminal(ctx, s, ReasonTerminalStarted, s.Started, note)
}

// TerminalEnded writes the Event of s closing at end, and why.
func (w *EventWriter) TerminalEnded(ctx context.Context, s TerminalSession, end time.Time, why string) error {
	note := fmt.Sprintf("%s's terminal in container %s of pod %s/%s (shell %s) ended after %s: %s",
		s.User, s.Container, s.Namespace, s.Pod, s.Shell, end.Sub(s.Started).Round(time.Second), why)
	return w.writeTerminal(ctx, s, ReasonTerminalEnded, end, note)
}

func (w *EventWriter) writeTerminal(ctx context.Context, s TerminalSession, reason string, at time.Time, note string) error {
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:        eventName(s.App, time.Now()),
			Namespace:   s.AppNamespace,
			Annotations: map[string]string{TerminalSessionAnnotation: s.ID},
		},
		EventTime:           metav1.NewMicroTime(at),
		ReportingController: ReportingController,
		ReportingInstance:   w.instance,
		Action:              "exec",
		Reason:              reason,
		Type:                corev1.EventTypeNormal,
		Regarding: corev1.ObjectReference{
			APIVersion: v1alpha1.GroupVersion.String(), Kind: "Application", Namespace: s.AppNamespace, Name: s.App,
		},
		Note: cut(note, maxNote),
	}
	if _, err := w.client.EventsV1().Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create event in %s: %w", ev.Namespace, err)
	}
	return nil
}
