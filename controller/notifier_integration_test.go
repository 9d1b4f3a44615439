//go:build integration

package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/controller/notifications"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// receiver is a webhook endpoint: it records every request and answers
// 500 to the first failFirst requests of a path.
type receiver struct {
	*httptest.Server
	failFirst int

	mu   sync.Mutex
	got  map[string][]string // path -> "METHOD status body"
	seen map[string]int
}

func newReceiver(t *testing.T, failFirst int) *receiver {
	rc := &receiver{failFirst: failFirst, got: map[string][]string{}, seen: map[string]int{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.seen[r.URL.Path]++
		status := http.StatusOK
		if rc.seen[r.URL.Path] <= rc.failFirst {
			status = http.StatusInternalServerError
		}
		rc.got[r.URL.Path] = append(rc.got[r.URL.Path], r.Method+" "+http.StatusText(status)+" "+string(body))
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// requests are what arrived for path.
func (rc *receiver) requests(path string) []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.got[path]...)
}

// notificationsConfig is a notifications ConfigMap with webhook services
// named after their receivers, and app-sync-failed sending to each.
func notificationsConfig(services map[string]*receiver) map[string]string {
	data := map[string]string{}
	var hooks strings.Builder
	for name, rc := range services {
		// retryMax -1: the webhook service itself does not retry, so that
		// graphcd's retries are what is tested.
		data["service.webhook."+name] = "url: " + rc.URL + "\nretryMax: -1\nheaders:\n- name: X-Token\n  value: $token\n"
		hooks.WriteString("    " + name + ":\n      method: POST\n      path: /failed/{{.app.metadata.name}}\n" +
			`      body: '{"app": "{{.app.metadata.name}}", "phase": "{{.app.status.operationState.phase}}"}'` + "\n")
	}
	data["template.app-sync-failed"] = "message: sync failed\nwebhook:\n" + hooks.String()
	return data
}

// writeNotifications creates or replaces the notifications ConfigMap and
// Secret in namespace, and deletes them when the test ends.
func writeNotifications(t *testing.T, namespace string, data map[string]string) {
	t.Helper()
	ctx := t.Context()
	cms := cluster.Client.CoreV1().ConfigMaps(namespace)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: notifications.ConfigMapName, Namespace: namespace}, Data: data}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: notifications.SecretName, Namespace: namespace},
		StringData: map[string]string{"token": "s3cret-notify-token"}}
	if _, err := cluster.Client.CoreV1().Secrets(namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cms.Delete(context.Background(), notifications.ConfigMapName, metav1.DeleteOptions{})
		_ = cluster.Client.CoreV1().Secrets(namespace).Delete(context.Background(), notifications.SecretName, metav1.DeleteOptions{})
	})
}

// syncFailed reports an operation that ended in Failed or Error.
func syncFailed(s *v1alpha1.ApplicationStatus) bool {
	return s.OperationState != nil && s.OperationState.FinishedAt != nil &&
		(s.OperationState.Phase == v1alpha1.OperationFailed || s.OperationState.Phase == v1alpha1.OperationError)
}

// deliveries reads the app's state annotation.
func deliveries(t *testing.T, key types.NamespacedName) notifications.State {
	t.Helper()
	var app v1alpha1.Application
	if err := apps.Get(t.Context(), key, &app); err != nil {
		t.Fatal(err)
	}
	st, err := notifications.ParseState(app.Annotations[notifications.StateAnnotation])
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// onlyDelivery is the one delivery of st, which must be sent.
func onlyDelivery(t *testing.T, st notifications.State) *notifications.Delivery {
	t.Helper()
	if len(st) != 1 {
		t.Fatalf("%d deliveries recorded, want 1: %+v", len(st), st)
	}
	for _, d := range st {
		return d
	}
	return nil
}

// An app subscribed to on-sync-failed notifies once when its sync fails
// for real: one POST with the rendered body, recorded as sent on the app
// and as a NotificationSent Event; refreshes send nothing more. A
// receiver that answers 500 twice gets the notification on the third
// attempt, and once.
func TestNotificationsDeliverOnce(t *testing.T) {
	ok, flaky := newReceiver(t, 0), newReceiver(t, 2)
	writeNotifications(t, appNamespace, notificationsConfig(map[string]*receiver{"notif-ok": ok, "notif-flaky": flaky}))
	cases := []struct {
		name, service string
		rc            *receiver
		attempts      int
	}{
		{"notify-failed", "notif-ok", ok, 1},
		{"notify-flaky", "notif-flaky", flaky, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			key := types.NamespacedName{Namespace: appNamespace, Name: tc.name}
			path := "/failed/" + tc.name
			newAppWith(t, tc.name, map[string]string{"app/bad.yaml": rejectedConfigMap}, func(a *v1alpha1.Application) {
				a.Annotations = map[string]string{"notifications.argoproj.io/subscribe.on-sync-failed." + tc.service: ""}
			})
			requestSync(t, tc.name, manual(v1alpha1.SyncOperation{}))
			app := waitStatus(t, tc.name, "failed to sync", syncFailed)
			phase := string(app.Status.OperationState.Phase)
			poll(t, "the notification delivered", func(context.Context) (bool, error) {
				for _, r := range tc.rc.requests(path) {
					if strings.HasPrefix(r, "POST OK ") {
						return true, nil
					}
				}
				return false, nil
			})
			poll(t, "the delivery recorded as sent", func(context.Context) (bool, error) {
				st := deliveries(t, key)
				return len(st) == 1 && onlyDelivery(t, st).Phase == notifications.PhaseSent, nil
			})
			d := onlyDelivery(t, deliveries(t, key))
			if d.Trigger != "on-sync-failed" || d.Service != tc.service || d.Attempts != tc.attempts {
				t.Errorf("delivery %+v, want on-sync-failed to %s after %d attempts", d, tc.service, tc.attempts)
			}
			// Refreshes re-evaluate the app; nothing more is sent.
			for range 3 {
				refresh(t, tc.name)
				poll(t, "the refresh served", func(context.Context) (bool, error) {
					return refreshMode(getApp(t, tc.name)) == "", nil
				})
			}
			time.Sleep(2 * time.Second)
			got := tc.rc.requests(path)
			if len(got) != tc.attempts {
				t.Fatalf("%d requests, want %d: %q", len(got), tc.attempts, got)
			}
			want := `POST OK {"app": "` + tc.name + `", "phase": "` + phase + `"}`
			if got[len(got)-1] != want {
				t.Errorf("request %q, want %q", got[len(got)-1], want)
			}
			wantEvent := 1
			if tc.attempts > 1 {
				wantEvent = 2 // and the failures
			}
			notes := notificationEvents(t, appNamespace, tc.name)
			if len(notes) < wantEvent || !strings.HasPrefix(notes[len(notes)-1], "NotificationSent: Notified: trigger on-sync-failed, service "+tc.service) {
				t.Errorf("events %q", notes)
			}
			for _, n := range notes {
				if strings.Contains(n, "s3cret") {
					t.Errorf("an Event shows the Secret: %q", n)
				}
			}
		})
	}
}

// refreshMode is the app's refresh annotation, "" once served.
func refreshMode(app *v1alpha1.Application) string {
	return app.Annotations[v1alpha1.RefreshAnnotation]
}

// notificationEvents are the notification Events of an app, oldest
// first, as "Reason: Note".
func notificationEvents(t *testing.T, namespace, name string) []string {
	t.Helper()
	var out []string
	poll(t, "notification Events", func(ctx context.Context) (bool, error) {
		list, err := cluster.Client.EventsV1().Events(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		out = out[:0]
		for _, e := range list.Items {
			if e.Regarding.Kind == "Application" && e.Regarding.Name == name && strings.HasPrefix(e.Reason, "Notification") {
				out = append(out, e.Reason+": "+e.Note)
			}
		}
		return len(out) > 0, nil
	})
	return out
}

// The state on the app outlives the controller: one that starts after the
// notification was sent sends nothing again.
func TestNotificationsSurviveRestart(t *testing.T) {
	t.Parallel()
	const name = "notify-restart"
	ns := privateNamespace(t)
	rc := newReceiver(t, 0)
	writeNotifications(t, ns, notificationsConfig(map[string]*receiver{"notif-restart": rc}))
	start := func() func() { return runPrivateController(t, ns, 100*time.Millisecond) }
	stop := start()
	dest := cluster.Namespace(t)
	dir, _ := reposervertest.CommitFiles(t, map[string]string{"app/bad.yaml": rejectedConfigMap})
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{
			"notifications.argoproj.io/subscribe.on-sync-failed.notif-restart": ""}},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + dir, Path: "app", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: dest},
		},
		Operation: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}},
	}
	if err := apps.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apps.Delete(context.Background(), app) })
	key := types.NamespacedName{Namespace: ns, Name: name}
	poll(t, "the notification sent and recorded", func(context.Context) (bool, error) {
		st := deliveries(t, key)
		return len(st) == 1 && onlyDelivery(t, st).Phase == notifications.PhaseSent, nil
	})
	stop()
	before := deliveries(t, key)
	stop = start()
	defer stop()
	// The new controller evaluates every app when it loads the
	// configuration; a refresh makes sure it has looked at this one.
	var a v1alpha1.Application
	if err := apps.Get(t.Context(), key, &a); err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"metadata":{"annotations":{"` + v1alpha1.RefreshAnnotation + `":"normal"}}}`)
	if err := apps.Patch(t.Context(), &a, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	poll(t, "the restarted controller served the refresh", func(ctx context.Context) (bool, error) {
		var now v1alpha1.Application
		if err := apps.Get(ctx, key, &now); err != nil {
			return false, err
		}
		return refreshMode(&now) == "", nil
	})
	time.Sleep(2 * time.Second)
	if got := rc.requests("/failed/" + name); len(got) != 1 {
		t.Fatalf("%d requests after the restart, want 1: %q", len(got), got)
	}
	after := deliveries(t, key)
	b, _ := json.Marshal(before)
	c, _ := json.Marshal(after)
	if string(b) != string(c) {
		t.Errorf("the state changed across the restart:\n%s\n%s", b, c)
	}
}

// Replicas of a shard under leader election deliver each notification
// once between them: the standby that takes over sends what is new and
// nothing the leader sent, and a subscription added while no replica
// runs is delivered when one comes back.
func TestNotificationsLeaderChange(t *testing.T) {
	t.Parallel()
	const name = "notify-leader"
	ns := privateNamespace(t)
	receivers := map[string]*receiver{"first": newReceiver(t, 0), "second": newReceiver(t, 0), "third": newReceiver(t, 0)}
	writeNotifications(t, ns, notificationsConfig(receivers))
	replica := func(identity string) func() {
		return runController(t, controller.Config{Namespace: ns, LeaderElection: controller.LeaderElection{
			Enabled: true, Identity: identity, LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond,
		}})
	}
	stops := map[string]func(){"a": replica("a"), "b": replica("b")}
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	leader := func() string {
		var holder string
		poll(t, "a leader", func(ctx context.Context) (bool, error) {
			l, err := cluster.Client.CoordinationV1().Leases(ns).Get(ctx, controller.LeaseName(0), metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			} else if err != nil {
				return false, err
			}
			if l.Spec.HolderIdentity != nil {
				holder = *l.Spec.HolderIdentity
			}
			return stops[holder] != nil, nil
		})
		return holder
	}
	dir, _ := reposervertest.CommitFiles(t, map[string]string{"app/bad.yaml": rejectedConfigMap})
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{
			"notifications.argoproj.io/subscribe.on-sync-failed.first": ""}},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + dir, Path: "app", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: cluster.Namespace(t)},
		},
		Operation: &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "alice"}},
	}
	if err := apps.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apps.Delete(context.Background(), app) })
	key := types.NamespacedName{Namespace: ns, Name: name}
	sent := func(service string) {
		t.Helper()
		poll(t, service+" sent and recorded", func(context.Context) (bool, error) {
			for _, d := range deliveries(t, key) {
				if d.Service == service && d.Phase == notifications.PhaseSent {
					return true, nil
				}
			}
			return false, nil
		})
	}
	subscribe := func(service string) {
		t.Helper()
		patch := []byte(`{"metadata":{"annotations":{"notifications.argoproj.io/subscribe.on-sync-failed.` + service + `":""}}}`)
		if err := apps.Patch(t.Context(), &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
			client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
	}
	sent("first")
	// The leader goes away; the standby takes over and evaluates every
	// app: the sent record keeps it from sending "first" again.
	first := leader()
	stops[first]()
	delete(stops, first)
	second := leader()
	subscribe("second")
	sent("second")
	// No replica runs while a subscription is added; the next one to
	// start delivers it.
	stops[second]()
	delete(stops, second)
	subscribe("third")
	stops["c"] = replica("c")
	sent("third")
	time.Sleep(2 * time.Second)
	for service, rc := range receivers {
		if got := rc.requests("/failed/" + name); len(got) != 1 {
			t.Errorf("%s: %d requests, want 1: %q", service, len(got), got)
		}
		// The sends are counted where they were recorded.
		if n := sentCount(t, service); n != 1 {
			t.Errorf("%s: graphcd_notifications_deliveries_total %v, want 1", service, n)
		}
	}
}

// sentCount is the controllers' count of successful sends to service.
func sentCount(t *testing.T, service string) float64 {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "graphcd_notifications_deliveries_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["notifier"] == service && labels["succeeded"] == "true" {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// Two controllers that both deliver (no leader election, as two
// all-in-one servers without --leader-elect would run) still send each
// notification once: a claim is a write conditional on the version the
// claimer read, so of two claims of one notification, one fails.
func TestNotificationsTwoActiveControllers(t *testing.T) {
	t.Parallel()
	const apps20 = 20
	ns := privateNamespace(t)
	rc := newReceiver(t, 0)
	writeNotifications(t, ns, notificationsConfig(map[string]*receiver{"both": rc}))
	dir, _ := reposervertest.CommitFiles(t, map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"})
	dest := cluster.Namespace(t)
	// Apps whose last sync failed, before any controller runs.
	var names []string
	for i := range apps20 {
		name := fmt.Sprintf("both-%02d", i)
		names = append(names, name)
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{
				"notifications.argoproj.io/subscribe.on-sync-failed.both": ""}},
			Spec: v1alpha1.ApplicationSpec{
				Project:     "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + dir, Path: "app", TargetRevision: "main"},
				Destination: v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: dest},
			},
		}
		if err := apps.Create(t.Context(), app); err != nil {
			t.Fatal(err)
		}
		patch := []byte(`{"status":{"operationState":{"phase":"Failed","message":"one or more objects failed to apply",` +
			`"startedAt":"2026-12-06T07:00:00Z","finishedAt":"2026-12-06T07:00:01Z","operation":{"sync":{}}}}}`)
		if err := apps.Status().Patch(t.Context(), app, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		stop := runController(t, controller.Config{Namespace: ns})
		defer stop()
	}
	poll(t, "every app's notification sent and recorded", func(context.Context) (bool, error) {
		for _, name := range names {
			st := deliveries(t, types.NamespacedName{Namespace: ns, Name: name})
			if len(st) != 1 || onlyDelivery(t, st).Phase != notifications.PhaseSent {
				return false, nil
			}
		}
		return true, nil
	})
	time.Sleep(2 * time.Second)
	for _, name := range names {
		if got := rc.requests("/failed/" + name); len(got) != 1 {
			t.Errorf("%s: %d requests, want 1: %q", name, len(got), got)
		}
	}
}

// privateNamespace is a namespace of the test's own for the apps of a
// controller of its own, with a default project that allows everything.
func privateNamespace(t *testing.T) string {
	t.Helper()
	ns := cluster.Namespace(t)
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}}
	proj.Spec.SourceRepos, proj.Spec.Destinations = []string{"*"}, []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}}
	if err := apps.Create(t.Context(), proj); err != nil {
		t.Fatal(err)
	}
	return ns
}
