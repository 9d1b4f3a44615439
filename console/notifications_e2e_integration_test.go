//go:build integration

package console

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
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
// deliveries, as the controller writes it, and the other annotations
// given.
func createNotifiedApp(t *testing.T, kube client.Client, ns, name string, st notifications.State, annotations map[string]string) {
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
	maps.Copy(app.Annotations, annotations)
	if err := kube.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
}

// recordDeliveries changes the state annotation of app as the
// controller would: change edits the recorded state.
func recordDeliveries(ctx context.Context, kube client.Client, ns, name string, change func(notifications.State)) error {
	var app v1alpha1.Application
	if err := kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &app); err != nil {
		return err
	}
	st, err := notifications.ParseState(app.Annotations[notifications.StateAnnotation])
	if err != nil {
		return err
	}
	change(st)
	state, err := st.Encode(nil)
	if err != nil {
		return err
	}
	patch := client.MergeFrom(app.DeepCopy())
	app.Annotations[notifications.StateAnnotation] = state
	return kube.Patch(ctx, &app, patch)
}

// Subscription annotations of the test, in Argo CD's form.
const (
	subscribeDegraded = notifications.ArgoAnnotationPrefix + "/subscribe.on-health-degraded.slack"
	subscribeDeployed = notifications.ArgoAnnotationPrefix + "/subscribe.on-deployed.slack"
	subscribeReleases = notifications.ArgoAnnotationPrefix + "/subscribe.on-sync-succeeded.slack"
)

// TestAppNotifications drives the application page's Notifications view
// in Chromium against the real server (see web/e2e/app-notifications.mjs):
// the deliveries an Application's state annotation records, newest first,
// with their outcome badges, attempts, relative times and errors shown as
// text, 20 at a time with "Older deliveries" reading the next page by its
// cursor; a delivery recorded and one changed while the page is open
// showing without a reload; the app's, its project's and the ConfigMap's
// subscriptions, the last two read-only; a subscription added with the
// form and one removed with its button, which this test then reads from
// the Application; and another app the user may not update, whose
// subscribe form and Unsubscribe button are disabled with the reason.
func TestAppNotifications(t *testing.T) {
	if skipReason != "" {
		t.Skip("browser test skipped: " + skipReason)
	}
	base, ns := startServer(t, false, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "graphcd-rbac-cm"},
		Data:       map[string]string{"policy.csv": "p, admin, applications, update, default/frozen, deny\n"},
	}, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "graphcd-notifications-cm"},
		Data: map[string]string{
			"service.slack": "token: $slack-token\n",
			"subscriptions": "- recipients: [slack:platform]\n  triggers: [on-sync-failed]\n",
		},
	})
	kube := newKube(t)
	createDefaultProject(t, kube, ns)
	var project v1alpha1.AppProject
	if err := kube.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "default"}, &project); err != nil {
		t.Fatal(err)
	}
	project.Annotations = map[string]string{subscribeReleases: "releases"}
	if err := kube.Update(t.Context(), &project); err != nil {
		t.Fatal(err)
	}
	createNotifiedApp(t, kube, ns, "shop", deliveries(time.Now()), map[string]string{subscribeDegraded: "oncall"})
	createNotifiedApp(t, kube, ns, "frozen", notifications.State{}, map[string]string{subscribeDegraded: "oncall"})

	signals := t.TempDir()
	t.Setenv("SIGNALS", signals)
	recorded := make(chan error, 1)
	go func() {
		recorded <- func() error {
			if err := waitForFile(t.Context(), filepath.Join(signals, "watching")); err != nil {
				return err
			}
			ctx := context.WithoutCancel(t.Context())
			err := recordDeliveries(ctx, kube, ns, "shop", func(st notifications.State) {
				now := time.Now()
				key := notifications.DeliveryKey("on-deployed", "[0].cond", "v2", "slack", "live")
				st[key] = &notifications.Delivery{
					Trigger: "on-deployed", Condition: "[0].cond", Service: "slack", Recipient: "live",
					Phase: notifications.PhaseSent, Attempts: 1, Time: now,
				}
				for _, d := range st {
					if d.Phase == notifications.PhaseFailed {
						d.Phase, d.Attempts, d.Error, d.Time = notifications.PhaseSent, 3, "", now.Add(-time.Second)
					}
				}
			})
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(signals, "recorded"), nil, 0o600)
		}()
	}()
	runScript(t, "e2e/app-notifications.mjs", base, ns)
	if err := <-recorded; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("record deliveries: %v", err)
	}

	for name, want := range map[string]map[string]string{
		// Subscribed to on-deployed, unsubscribed from on-health-degraded.
		"shop":   {subscribeDeployed: "deploys;ops"},
		"frozen": {subscribeDegraded: "oncall"},
	} {
		var app v1alpha1.Application
		if err := kube.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &app); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for k, v := range app.Annotations {
			if strings.HasPrefix(k, notifications.ArgoAnnotationPrefix+"/") || strings.HasPrefix(k, notifications.AnnotationPrefix+"/") {
				got[k] = v
			}
		}
		if d := cmp.Diff(got, want); d != "" {
			t.Errorf("subscription annotations of %s (-got +want):\n%s", name, d)
		}
	}
}
