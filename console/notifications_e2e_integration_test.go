//go:build integration

package console

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/notifications"
)

// hostileError is a delivery's error that would run script if the page
// rendered it as HTML.
const hostileError = `webhook deploy-log: 500 <img src=x onerror="document.title='pwned'"> token ***`

// deliveries is the state the controller would have recorded for 25
// notifications of one app: the newest a dead letter, then one failed
// and due again, one being sent, and 22 sent, a minute apart.
func deliveries(now time.Time) notifications.State {
	st := notifications.State{}
	add := func(i int, trigger, service, recipient string, phase notifications.Phase, attempts int, errText string) {
		key := notifications.DeliveryKey(trigger, "[0].cond", fmt.Sprint(i), service, recipient)
		st[key] = &notifications.Delivery{
			Trigger: trigger, Condition: "[0].cond", Service: service, Recipient: recipient,
			Phase: phase, Attempts: attempts, Time: now.Add(-time.Duration(i) * time.Minute), Error: errText,
		}
	}
	add(0, "on-sync-failed", "deploy-log", "", notifications.PhaseDead, notifications.MaxAttempts, hostileError)
	add(1, "on-health-degraded", "slack", "oncall", notifications.PhaseFailed, 2, "slack: channel_not_found")
	add(2, "on-sync-running", "slack", "deploys", notifications.PhasePending, 1, "")
	for i := 3; i < 25; i++ {
		add(i, "on-deployed", "slack", fmt.Sprintf("team-%02d", i), notifications.PhaseSent, 1, "")
	}
	return st
}

// createNotifiedApp creates app name in ns with the state annotation of
// deliveries, as the controller writes it.
func createNotifiedApp(t *testing.T, kube client.Client, ns, name string, st notifications.State) {
	t.Helper()
	state, err := st.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{notifications.StateAnnotation: state}},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: name, TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: name},
		},
	}
	if err := kube.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
}

// TestAppNotifications drives the application page's Notifications view
// in Chromium against the real server (see web/e2e/app-notifications.mjs):
// the deliveries an Application's state annotation records, newest first,
// with their outcome badges, attempts, relative times and errors shown as
// text, 20 at a time with "Older deliveries" reading the next page by its
// cursor.
func TestAppNotifications(t *testing.T) {
	if skipReason != "" {
		t.Skip("browser test skipped: " + skipReason)
	}
	base, ns := startServer(t, false)
	kube := newKube(t)
	createDefaultProject(t, kube, ns)
	createNotifiedApp(t, kube, ns, "shop", deliveries(time.Now()))
	runScript(t, "e2e/app-notifications.mjs", base, ns)
}
