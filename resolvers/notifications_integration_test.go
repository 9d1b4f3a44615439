//go:build integration

package resolvers_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/notifications"
)

// Application.notificationDeliveries reads what the controller recorded
// in the app's state annotation, newest first, a page at a time.
func TestNotificationDeliveries(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	state := `{
  "on-sync-failed/[0].a//slack/deploys": {"trigger": "on-sync-failed", "condition": "[0].a", "service": "slack", "recipient": "deploys",
    "phase": "sent", "attempts": 1, "time": "2026-12-06T10:00:00Z"},
  "on-deployed/[0].b/abc/hook/": {"trigger": "on-deployed", "condition": "[0].b", "once": true, "service": "hook",
    "phase": "dead", "attempts": 5, "time": "2026-12-06T11:00:00Z", "error": "webhook POST hooks.example.com answered 500: ***"}
}`
	for name, annotation := range map[string]string{"notified": state, "garbled": "{not json"} {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{notifications.StateAnnotation: annotation}},
			Spec: v1alpha1.ApplicationSpec{
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: name},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: name},
			},
		}
		if err := kube.Create(t.Context(), app); err != nil {
			t.Fatal(err)
		}
	}
	waitCount(t, ns, 2)
	const q = `query($ns: String, $n: String!, $after: String) { application(name: $n, namespace: $ns) {
  notificationDeliveries(first: 1, after: $after) { totalCount pageInfo { hasNextPage endCursor }
    nodes { trigger service recipient outcome attempts error time } } } }`
	type page struct {
		Application struct {
			NotificationDeliveries struct {
				TotalCount int
				PageInfo   struct {
					HasNextPage bool
					EndCursor   string
				}
				Nodes []struct {
					Trigger, Service, Recipient, Outcome, Error, Time string
					Attempts                                          int
				}
			}
		}
	}
	var first, second page
	data(t, q, map[string]any{"ns": ns, "n": "notified"}, &first)
	d := first.Application.NotificationDeliveries
	if d.TotalCount != 2 || !d.PageInfo.HasNextPage || len(d.Nodes) != 1 {
		t.Fatalf("first page %+v", d)
	}
	if n := d.Nodes[0]; n.Trigger != "on-deployed" || n.Outcome != "DEAD" || n.Attempts != 5 || n.Recipient != "" || n.Error == "" || n.Time != "2026-12-06T11:00:00Z" {
		t.Errorf("newest delivery %+v, want the dead letter", n)
	}
	data(t, q, map[string]any{"ns": ns, "n": "notified", "after": d.PageInfo.EndCursor}, &second)
	d2 := second.Application.NotificationDeliveries
	if len(d2.Nodes) != 1 || d2.PageInfo.HasNextPage || d2.Nodes[0].Outcome != "SENT" || d2.Nodes[0].Recipient != "deploys" {
		t.Errorf("second page %+v", d2)
	}
	var garbled page
	data(t, q, map[string]any{"ns": ns, "n": "garbled"}, &garbled)
	if g := garbled.Application.NotificationDeliveries; g.TotalCount != 0 || len(g.Nodes) != 0 {
		t.Errorf("an unreadable annotation: %+v, want none", g)
	}
}
