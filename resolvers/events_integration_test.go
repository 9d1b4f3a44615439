//go:build integration

package resolvers_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestApplicationEventsBatched asks for the Kubernetes Events of a page
// of 20 apps: the API reads them with one list, not one per app.
func TestApplicationEventsBatched(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	var specs []appSpec
	for i := range 20 {
		specs = append(specs, appSpec{name: fmt.Sprintf("app-%02d", i)})
	}
	createApps(t, ns, specs...)
	waitCount(t, ns, 20)
	now := time.Now()
	for i, e := range []struct {
		app, typ, reason, note string
		at                     time.Time
	}{
		{"app-01", "Normal", "OperationStarted", "sync started", now.Add(-time.Minute)},
		{"app-01", "Normal", "OperationCompleted", "sync succeeded", now},
		{"app-02", "Warning", "SyncError", "cannot apply", now},
	} {
		ev := &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("ev-%d", i)},
			EventTime:  metav1.NewMicroTime(e.at), Type: e.typ, Reason: e.reason, Note: e.note, Action: "Sync",
			ReportingController: "graphcd-controller", ReportingInstance: "test",
			Regarding: corev1.ObjectReference{APIVersion: "graphcd.io/v1alpha1", Kind: "Application", Namespace: ns, Name: e.app},
		}
		if _, err := cluster.Client.EventsV1().Events(ns).Create(t.Context(), ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var got struct {
		Applications struct {
			Nodes []struct {
				Name   string
				Events []struct{ Type, Reason, Note, Time, ReportingController string }
			}
		}
	}
	before := eventLists.Load()
	data(t, `query($ns: [String!]) { applications(first: 20, filter: {namespaces: $ns}) { nodes { name events(first: 5) { type reason note time reportingController } } } }`,
		map[string]any{"ns": []string{ns}}, &got)
	// One list for the page; a second when a loaded machine makes some
	// fields miss the loader's window. Never one per app.
	if n := eventLists.Load() - before; n < 1 || n > 2 {
		t.Errorf("%d event list requests for a page of 20 apps, want 1 (2 at most)", n)
	}
	byApp := map[string][]string{}
	for _, a := range got.Applications.Nodes {
		for _, e := range a.Events {
			byApp[a.Name] = append(byApp[a.Name], e.Type+" "+e.Reason+": "+e.Note)
		}
	}
	want := map[string][]string{
		"app-01": {"Normal OperationCompleted: sync succeeded", "Normal OperationStarted: sync started"},
		"app-02": {"Warning SyncError: cannot apply"},
	}
	if fmt.Sprint(byApp) != fmt.Sprint(want) {
		t.Errorf("events by app = %v, want %v", byApp, want)
	}
}
