//go:build integration

package resolvers_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/argoproj/notifications-engine/pkg/services"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/audit"
	"github.com/graphcd/graphcd/apiserver/notifycfg"
	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/controller/notifications"
	"github.com/graphcd/graphcd/internal/kubewatch"
)

// notifyTokens are the callers of the notification tests: one who may
// get the project's apps, one who may also update them, one who may do
// neither.
var notifyTokens = tokenTable{
	"viewer-token":   {Subject: "viewer"},
	"deployer-token": {Subject: "deployer"},
	"nobody-token":   {Subject: "nobody"},
}

// notifyAPI serves the shared fixtures with the RBAC of notifyTokens on
// project, the notifications configuration of ns (followed live, as
// graphcd server does) and an audit trail in memory.
func notifyAPI(t *testing.T, ns, project string) (string, *audit.Memory) {
	t.Helper()
	setPolicy(t, ns, fmt.Sprintf(`
p, role:viewer, applications, get, %[1]s/*, allow
p, role:deployer, applications, get, %[1]s/*, allow
p, role:deployer, applications, update, %[1]s/*, allow
g, viewer, role:viewer
g, deployer, role:deployer
`, project))
	if err := kube.Create(t.Context(), &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: project, Annotations: map[string]string{
			"notifications.argoproj.io/subscribe.on-created.slack": "project-feed",
		}},
	}); err != nil {
		t.Fatal(err)
	}
	a := auth.NewAuthorizer()
	quiet := slog.New(slog.DiscardHandler)
	watch := kubewatch.NewSource(t.Context(), cluster.Client, ns)
	if err := auth.WatchPolicy(t.Context(), watch, a, quiet); err != nil {
		t.Fatal(err)
	}
	if err := auth.WatchProjects(t.Context(), objects, a, quiet); err != nil {
		t.Fatal(err)
	}
	notify := notifycfg.New(quiet)
	if err := notify.Start(t.Context(), watch); err != nil {
		t.Fatal(err)
	}
	mem := audit.NewMemory(100)
	opts, err := apiOptions(events)
	if err != nil {
		t.Fatal(err)
	}
	opts.API.Authz, opts.Authenticator, opts.API.Notifications = a, notifyTokens, notify
	opts.Audit, opts.API.Audit = &audit.Log{Store: mem, Logger: quiet}, mem
	ts, err := serveAPI(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	return ts.URL, mem
}

// createConfigMap creates the ConfigMap name in ns with data.
func createConfigMap(t *testing.T, ns, name string, data map[string]string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createSecret creates the Secret name in ns with data.
func createSecret(t *testing.T, ns, name string, data map[string][]byte) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
	if _, err := cluster.Client.CoreV1().Secrets(ns).Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createAnnotatedApp creates an app of project with annotations and
// labels.
func createAnnotatedApp(t *testing.T, ns, name, project string, annotations, labels map[string]string) {
	t.Helper()
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations, Labels: labels},
		Spec: v1alpha1.ApplicationSpec{
			Project:     project,
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: name},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: name},
		},
	}
	if err := kube.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
}

// webhookRequest is what the test's webhook receiver got.
type webhookRequest struct{ Method, Path, Authorization, Body string }

// webhookReceiver is a stdlib HTTP server standing in for a webhook
// endpoint: it records each request and refuses those under /fail,
// quoting the Authorization header it got (as a careless server might).
func webhookReceiver(t *testing.T) (*httptest.Server, func() []webhookRequest) {
	t.Helper()
	var mu sync.Mutex
	var got []webhookRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, webhookRequest{r.Method, r.URL.Path, r.Header.Get("Authorization"), string(b)})
		mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/fail") {
			http.Error(w, "rejected "+r.Header.Get("Authorization"), http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []webhookRequest {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

const hookToken = "hook-s3cr3t-7f1e9"

// hookConfig is a notifications ConfigMap with a webhook service at url
// that authenticates with the Secret's hook-token, a template for it and
// a trigger that holds for the app called shop.
func hookConfig(url string) map[string]string {
	return map[string]string{
		"service.webhook.hook": "url: " + url + "\nretryMax: -1\nheaders:\n- name: Authorization\n  value: Bearer $hook-token\n",
		"template.app-text": `message: |
  {{.app.metadata.name}} note={{index .app.metadata.annotations "note"}}
webhook:
  hook:
    method: POST
    path: /notify/{{.app.metadata.name}}
    body: |
      {"app": "{{.app.metadata.name}}", "note": "{{index .app.metadata.annotations "note"}}"}
`,
		"template.fail-text": "message: nope\nwebhook:\n  hook:\n    method: POST\n    path: /fail\n    body: '{}'\n",
		"trigger.on-shop":    "- when: app.metadata.name == 'shop'\n  send: [app-text]\n",
	}
}

type testResult struct {
	Service, ServiceType, Recipient, Message, Notification, Error string
	Templates                                                     []string
	Triggered                                                     *bool
	Sent                                                          bool
}

const testNotificationQuery = `mutation($in: TestNotificationInput!) {
  testNotification(input: $in) { service serviceType recipient templates triggered message notification sent error } }`

// testNotify runs testNotification as token and returns the results, the
// raw answer and the error code.
func testNotify(t *testing.T, api, token string, in map[string]any) ([]testResult, string, string) {
	t.Helper()
	raw, errs := ask(t, api, token, testNotificationQuery, map[string]any{"in": in})
	if len(errs) > 0 {
		return nil, fmt.Sprint(errs), codeOf(errs)
	}
	var got struct{ TestNotification []testResult }
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	return got.TestNotification, string(raw), ""
}

// testNotification renders with the API's live configuration (Argo CD's
// ConfigMap until graphcd's exists), sends only when asked and allowed,
// delivers exactly what it rendered, and never shows a Secret's value.
func TestTestNotification(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	project := "notif-" + ns
	api, trail := notifyAPI(t, ns, project)
	srv, received := webhookReceiver(t)
	createAnnotatedApp(t, ns, "shop", project, map[string]string{"note": "plain", "notifications.argoproj.io/subscribe.on-shop.hook": ""}, nil)
	createAnnotatedApp(t, ns, "leaky", project, map[string]string{"note": hookToken}, nil)
	waitCount(t, ns, 2)
	shop := map[string]any{"name": "shop", "namespace": ns}

	// Argo CD's ConfigMap and Secret, made after the API started: it
	// follows them.
	createSecret(t, ns, notifications.ArgoSecretName, map[string][]byte{"hook-token": []byte(hookToken)})
	createConfigMap(t, ns, notifications.ArgoConfigMapName, hookConfig(srv.URL))
	render := map[string]any{"application": shop, "template": "app-text", "recipients": []string{"hook"}}
	var results []testResult
	eventually(t, "the API loads argocd-notifications-cm", func() error {
		var raw, code string
		results, raw, code = testNotify(t, api, "viewer-token", render)
		if code != "" || len(results) != 1 || results[0].ServiceType != "webhook" {
			return fmt.Errorf("%s %s", code, raw)
		}
		return nil
	})

	t.Run("render only sends nothing", func(t *testing.T) {
		r := results[0]
		if r.Service != "hook" || r.Recipient != "" || r.Message != "shop note=plain\n" || r.Sent || r.Error != "" ||
			r.Triggered != nil || !slices.Equal(r.Templates, []string{"app-text"}) {
			t.Errorf("rendered %+v", r)
		}
		var n services.Notification
		if err := json.Unmarshal([]byte(r.Notification), &n); err != nil || n.Webhook["hook"].Path != "/notify/shop" {
			t.Errorf("notification %s (%v)", r.Notification, err)
		}
		if got := received(); len(got) != 0 {
			t.Errorf("render only reached the receiver: %+v", got)
		}
	})

	t.Run("a user with only get cannot send", func(t *testing.T) {
		send := map[string]any{"application": shop, "template": "app-text", "recipients": []string{"hook"}, "send": true}
		if _, raw, code := testNotify(t, api, "viewer-token", send); code != "FORBIDDEN" {
			t.Errorf("viewer sends: %s, want FORBIDDEN", raw)
		}
		if _, raw, code := testNotify(t, api, "nobody-token", render); code != "NOT_FOUND" {
			t.Errorf("nobody renders: %s, want NOT_FOUND", raw)
		}
		if got := received(); len(got) != 0 {
			t.Errorf("a refused send reached the receiver: %+v", got)
		}
	})

	t.Run("send delivers exactly the rendered body", func(t *testing.T) {
		send := map[string]any{"application": shop, "template": "app-text", "recipients": []string{"hook:"}, "send": true}
		res, raw, code := testNotify(t, api, "deployer-token", send)
		if code != "" || len(res) != 1 || !res[0].Sent || res[0].Error != "" {
			t.Fatalf("deployer sends: %s", raw)
		}
		var n services.Notification
		if err := json.Unmarshal([]byte(res[0].Notification), &n); err != nil {
			t.Fatal(err)
		}
		got := received()
		want := webhookRequest{Method: "POST", Path: "/notify/shop", Authorization: "Bearer " + hookToken, Body: n.Webhook["hook"].Body}
		if len(got) != 1 || got[0] != want || !strings.Contains(want.Body, `"note": "plain"`) {
			t.Errorf("the receiver got %+v, want %+v", got, want)
		}
		if strings.Contains(raw, hookToken) {
			t.Error("the answer shows the Secret's value")
		}
		entries, err := trail.List(t.Context(), audit.Query{First: 50, Filter: audit.Filter{Field: "testNotification", User: "deployer"}})
		if err != nil || len(entries.Entries) != 1 || entries.Entries[0].Object.Name != "shop" || entries.Entries[0].Outcome != audit.Success {
			t.Errorf("audit trail of the send: %+v %v", entries.Entries, err)
		}
		eventually(t, "the send's Event", func() error {
			list, err := cluster.Client.EventsV1().Events(ns).List(t.Context(), metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, e := range list.Items {
				if e.Reason == "NotificationTestSent" && e.Regarding.Name == "shop" && strings.Contains(e.Note, "deployer") && strings.Contains(e.Note, "hook:") {
					return nil
				}
			}
			return errNotYet
		})
	})

	t.Run("a Secret value never appears in the answer", func(t *testing.T) {
		leaky := map[string]any{"application": map[string]any{"name": "leaky", "namespace": ns}, "template": "app-text", "recipients": []string{"hook"}}
		res, raw, code := testNotify(t, api, "viewer-token", leaky)
		if code != "" || strings.Contains(raw, hookToken) || len(res) != 1 || res[0].Message != "leaky note=***\n" || !strings.Contains(res[0].Notification, `\"note\": \"***\"`) {
			t.Errorf("a rendered Secret value: %s", raw)
		}
		fail := map[string]any{"application": shop, "template": "fail-text", "recipients": []string{"hook"}, "send": true}
		res, raw, code = testNotify(t, api, "deployer-token", fail)
		if code != "" || strings.Contains(raw, hookToken) || len(res) != 1 || res[0].Sent || !strings.Contains(res[0].Error, "answered 400: rejected Bearer ***") {
			t.Errorf("a send refused by a server quoting the token: %s", raw)
		}
	})

	t.Run("a trigger renders its send list for the app's subscriptions", func(t *testing.T) {
		res, raw, code := testNotify(t, api, "viewer-token", map[string]any{"application": shop, "trigger": "on-shop"})
		if code != "" || len(res) != 1 || res[0].Triggered == nil || !*res[0].Triggered || res[0].Service != "hook" ||
			!slices.Equal(res[0].Templates, []string{"app-text"}) || res[0].Message != "shop note=plain\n" {
			t.Errorf("trigger on-shop: %s", raw)
		}
		res, raw, code = testNotify(t, api, "viewer-token", map[string]any{"application": shop, "trigger": "on-sync-failed", "recipients": []string{"hook"}})
		if code != "" || len(res) != 1 || res[0].Triggered == nil || *res[0].Triggered || !slices.Equal(res[0].Templates, []string{"app-sync-failed"}) {
			t.Errorf("a trigger that does not hold renders its templates anyway: %s", raw)
		}
		for what, in := range map[string]map[string]any{
			"both":             {"application": shop, "trigger": "on-shop", "template": "app-text"},
			"neither":          {"application": shop, "recipients": []string{"hook"}},
			"unknown template": {"application": shop, "template": "nope", "recipients": []string{"hook"}},
			"unknown trigger":  {"application": shop, "trigger": "nope"},
			"no subscription":  {"application": map[string]any{"name": "leaky", "namespace": ns}, "trigger": "on-shop"},
			"empty recipients": {"application": shop, "template": "app-text", "recipients": []string{}},
		} {
			if _, raw, code := testNotify(t, api, "viewer-token", in); code != "BAD_USER_INPUT" {
				t.Errorf("%s: %s, want BAD_USER_INPUT", what, raw)
			}
		}
	})

	t.Run("graphcd's ConfigMap wins over Argo CD's", func(t *testing.T) {
		createConfigMap(t, ns, notifications.ConfigMapName, map[string]string{"template.app-text": "message: graphcd's own\n"})
		eventually(t, "the API loads graphcd-notifications-cm", func() error {
			res, raw, code := testNotify(t, api, "viewer-token", render)
			if code != "" || len(res) != 1 || res[0].ServiceType != "" || res[0].Message != "graphcd's own" {
				return fmt.Errorf("%s %s", code, raw)
			}
			return nil
		})
	})
	if got := received(); len(got) != 2 {
		t.Errorf("the receiver got %d requests, want the two sends", len(got))
	}
}

type subscriptionRow struct {
	Trigger, Service, Source, Annotation string
	Recipients                           []string
	DefaultTriggers, TriggerDefined      bool
}

type notifiedApp struct {
	ResourceVersion string
	Annotations     []struct{ Key, Value string }
	Subs            []subscriptionRow `json:"notificationSubscriptions"`
}

func (a notifiedApp) annotation(key string) (string, bool) {
	for _, kv := range a.Annotations {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

const appSubsFields = `resourceVersion annotations { key value }
  notificationSubscriptions { trigger service recipients source annotation defaultTriggers triggerDefined }`

// subscribeNotification and unsubscribeNotification edit the app's
// annotations in Argo CD's format, refuse what they cannot write, keep
// concurrent edits, honour a resourceVersion, and need update;
// notificationSubscriptions lists where each subscription comes from.
func TestNotificationSubscribeMutations(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	project := "notif-" + ns
	createSecret(t, ns, notifications.SecretName, map[string][]byte{"slack-token": []byte("xoxb-s3cr3t-1")})
	createConfigMap(t, ns, notifications.ConfigMapName, map[string]string{
		"service.slack":        "token: $slack-token\n",
		"service.webhook.hook": "url: http://127.0.0.1:1\n",
		"defaultTriggers":      "- on-sync-failed\n- on-health-degraded\n",
		"subscriptions":        "- recipients: [slack:everyone]\n  selector: team=shop\n  triggers: [on-deployed]\n",
	})
	api, _ := notifyAPI(t, ns, project)
	createAnnotatedApp(t, ns, "web", project, map[string]string{"notifications.graphcd.io/subscribe.on-sync-succeeded.slack": "ops"}, map[string]string{"team": "shop"})
	createAnnotatedApp(t, ns, "api", project, nil, nil)
	waitCount(t, ns, 2)
	ref := func(name string) map[string]any { return map[string]any{"name": name, "namespace": ns} }
	const subscribe = `mutation($in: SubscribeNotificationInput!) { subscribeNotification(input: $in) { ` + appSubsFields + ` } }`
	const unsubscribe = `mutation($in: UnsubscribeNotificationInput!) { unsubscribeNotification(input: $in) { ` + appSubsFields + ` } }`
	run := func(token, q string, in map[string]any) (notifiedApp, string) {
		t.Helper()
		raw, errs := ask(t, api, token, q, map[string]any{"in": in})
		if len(errs) > 0 {
			return notifiedApp{}, codeOf(errs)
		}
		var got map[string]notifiedApp
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		for _, a := range got {
			return a, ""
		}
		return notifiedApp{}, "NO DATA"
	}
	read := func(token, name string) notifiedApp {
		t.Helper()
		raw, errs := ask(t, api, token, `query($n: String!, $ns: String) { application(name: $n, namespace: $ns) { `+appSubsFields+` } }`,
			map[string]any{"n": name, "ns": ns})
		if len(errs) > 0 {
			t.Fatalf("read %s: %+v", name, errs)
		}
		var got struct{ Application notifiedApp }
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		return got.Application
	}
	const ownKey = "notifications.graphcd.io/subscribe.on-sync-failed.slack"

	t.Run("RBAC", func(t *testing.T) {
		in := map[string]any{"application": ref("web"), "trigger": "on-sync-failed", "service": "slack", "recipients": []string{"x"}}
		if _, code := run("viewer-token", subscribe, in); code != "FORBIDDEN" {
			t.Errorf("viewer subscribes: %q, want FORBIDDEN", code)
		}
		if _, code := run("nobody-token", subscribe, in); code != "NOT_FOUND" {
			t.Errorf("nobody subscribes: %q, want NOT_FOUND", code)
		}
		if _, code := run("viewer-token", unsubscribe, map[string]any{"application": ref("web"), "trigger": "on-sync-succeeded", "service": "slack"}); code != "FORBIDDEN" {
			t.Errorf("viewer unsubscribes: %q, want FORBIDDEN", code)
		}
		if _, ok := read("viewer-token", "web").annotation(ownKey); ok {
			t.Error("a refused subscription was written")
		}
	})

	t.Run("subscribe in the app's prefix and format", func(t *testing.T) {
		in := map[string]any{"application": ref("web"), "trigger": "on-sync-failed", "service": "slack", "recipients": []string{"deploys", "oncall"}}
		got, code := run("deployer-token", subscribe, in)
		if v, _ := got.annotation(ownKey); code != "" || v != "deploys;oncall" {
			t.Fatalf("subscribe: %q %+v", code, got.Annotations)
		}
		in["recipients"] = []string{"oncall", "pager"}
		got, _ = run("deployer-token", subscribe, in)
		if v, _ := got.annotation(ownKey); v != "deploys;oncall;pager" {
			t.Errorf("subscribe more: %q", v)
		}
		got, code = run("deployer-token", subscribe, map[string]any{"application": ref("api"), "trigger": "on-deployed", "service": "hook", "recipients": []string{}})
		if v, ok := got.annotation("notifications.argoproj.io/subscribe.on-deployed.hook"); code != "" || !ok || v != "" {
			t.Errorf("a webhook subscription on an app without any: %q %+v", code, got.Annotations)
		}
		got, code = run("deployer-token", subscribe, map[string]any{"application": ref("api"), "service": "slack", "recipients": []string{"alerts"}})
		if v, _ := got.annotation("notifications.argoproj.io/subscribe.slack"); code != "" || v != "alerts" {
			t.Errorf("a subscription to the default triggers: %q %+v", code, got.Annotations)
		}
	})

	t.Run("what cannot be written is refused", func(t *testing.T) {
		for what, in := range map[string]map[string]any{
			"unknown trigger":      {"trigger": "no-such-trigger", "service": "slack", "recipients": []string{"x"}},
			"unknown service":      {"trigger": "on-sync-failed", "service": "nope", "recipients": []string{"x"}},
			"separator":            {"trigger": "on-sync-failed", "service": "slack", "recipients": []string{"a;b"}},
			"line break":           {"trigger": "on-sync-failed", "service": "slack", "recipients": []string{"a\nb"}},
			"trigger with a space": {"trigger": "on sync", "service": "slack", "recipients": []string{"x"}},
			"dotted service":       {"trigger": "on-sync-failed", "service": "sla.ck", "recipients": []string{"x"}},
			"too many":             {"trigger": "on-sync-failed", "service": "slack", "recipients": manyRecipients(51)},
		} {
			in["application"] = ref("web")
			if _, code := run("deployer-token", subscribe, in); code != "BAD_USER_INPUT" {
				t.Errorf("%s: %q, want BAD_USER_INPUT", what, code)
			}
		}
	})

	t.Run("a resourceVersion precondition", func(t *testing.T) {
		before := read("deployer-token", "web")
		// Someone else writes the app meanwhile.
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"example.com/touched":"yes"}}}`))
		if err := kube.Patch(t.Context(), &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, patch); err != nil {
			t.Fatal(err)
		}
		in := map[string]any{"application": ref("web"), "trigger": "on-sync-failed", "service": "slack", "recipients": []string{"late"}, "resourceVersion": before.ResourceVersion}
		if _, code := run("deployer-token", subscribe, in); code != "CONFLICT" {
			t.Errorf("a stale resourceVersion: %q, want CONFLICT", code)
		}
		var now v1alpha1.Application
		if err := kube.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "web"}, &now); err != nil {
			t.Fatal(err)
		}
		if now.Annotations[ownKey] != "deploys;oncall;pager" || now.Annotations["example.com/touched"] != "yes" {
			t.Errorf("after a conflict: %v", now.Annotations)
		}
		in["resourceVersion"] = now.ResourceVersion
		if got, code := run("deployer-token", subscribe, in); code != "" {
			t.Errorf("the current resourceVersion: %q", code)
		} else if v, _ := got.annotation(ownKey); v != "deploys;oncall;pager;late" {
			t.Errorf("the current resourceVersion: %q", v)
		}
	})

	t.Run("concurrent subscriptions are all kept", func(t *testing.T) {
		var wg sync.WaitGroup
		codes := make([]string, 8)
		for i := range codes {
			wg.Go(func() {
				in := map[string]any{"application": ref("api"), "trigger": "on-sync-succeeded", "service": "slack", "recipients": []string{fmt.Sprint("r", i)}}
				_, codes[i] = run("deployer-token", subscribe, in)
			})
		}
		wg.Wait()
		var now v1alpha1.Application
		if err := kube.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: "api"}, &now); err != nil {
			t.Fatal(err)
		}
		// Each write is on the condition of the version it read, and
		// retried from a fresh read a few times: a subscription is kept,
		// or, when the retries run out, answered CONFLICT; never lost.
		got := strings.Split(now.Annotations["notifications.argoproj.io/subscribe.on-sync-succeeded.slack"], ";")
		kept := 0
		for i, code := range codes {
			switch {
			case code == "" && slices.Contains(got, fmt.Sprint("r", i)):
				kept++
			case code == "CONFLICT":
			default:
				t.Errorf("subscription r%d: code %q, recipients %v", i, code, got)
			}
		}
		if kept != len(got) || kept == 0 {
			t.Errorf("concurrent subscriptions: codes %q, recipients %v", codes, got)
		}
	})

	t.Run("notificationSubscriptions lists where each comes from", func(t *testing.T) {
		got := read("viewer-token", "web").Subs
		want := []subscriptionRow{
			{Trigger: "on-sync-failed", Service: "slack", Source: "APPLICATION", Annotation: ownKey, Recipients: []string{"deploys", "late", "oncall", "pager"}, TriggerDefined: true},
			{Trigger: "on-sync-succeeded", Service: "slack", Source: "APPLICATION", Annotation: "notifications.graphcd.io/subscribe.on-sync-succeeded.slack", Recipients: []string{"ops"}, TriggerDefined: true},
			{Trigger: "on-created", Service: "slack", Source: "PROJECT", Annotation: "notifications.argoproj.io/subscribe.on-created.slack", Recipients: []string{"project-feed"}, TriggerDefined: true},
			{Trigger: "on-deployed", Service: "slack", Source: "DEFAULT", Recipients: []string{"everyone"}, TriggerDefined: true},
		}
		if !slices.EqualFunc(got, want, subscriptionRowEqual) {
			t.Errorf("web's subscriptions:\n got %+v\nwant %+v", got, want)
		}
		var defaults []string
		for _, s := range read("viewer-token", "api").Subs {
			if s.DefaultTriggers {
				defaults = append(defaults, s.Trigger+" "+s.Annotation)
			}
		}
		if strings.Join(defaults, ",") != "on-health-degraded notifications.argoproj.io/subscribe.slack,on-sync-failed notifications.argoproj.io/subscribe.slack" {
			t.Errorf("api's subscriptions to the default triggers: %v", defaults)
		}
	})

	t.Run("unsubscribe", func(t *testing.T) {
		got, code := run("deployer-token", unsubscribe, map[string]any{"application": ref("web"), "trigger": "on-sync-failed", "service": "slack", "recipients": []string{"oncall", "late"}})
		if v, _ := got.annotation(ownKey); code != "" || v != "deploys;pager" {
			t.Errorf("unsubscribe two: %q %q", code, v)
		}
		got, code = run("deployer-token", unsubscribe, map[string]any{"application": ref("web"), "trigger": "on-sync-failed", "service": "slack"})
		if _, ok := got.annotation(ownKey); code != "" || ok {
			t.Errorf("unsubscribe all: %q %+v", code, got.Annotations)
		}
		got, code = run("deployer-token", unsubscribe, map[string]any{"application": ref("api"), "service": "slack", "recipients": []string{"alerts"}})
		if _, ok := got.annotation("notifications.argoproj.io/subscribe.slack"); code != "" || ok {
			t.Errorf("the last recipient removes the annotation: %q %+v", code, got.Annotations)
		}
		if _, code := run("deployer-token", unsubscribe, map[string]any{"application": ref("api"), "trigger": "on-created", "service": "slack"}); code != "" {
			t.Errorf("unsubscribe what is not there: %q", code)
		}
		for _, s := range read("viewer-token", "web").Subs {
			if s.Source == "PROJECT" {
				return
			}
		}
		t.Error("the project's subscription went with the app's")
	})
}

func subscriptionRowEqual(a, b subscriptionRow) bool {
	return a.Trigger == b.Trigger && a.Service == b.Service && a.Source == b.Source && a.Annotation == b.Annotation &&
		slices.Equal(a.Recipients, b.Recipients) && a.DefaultTriggers == b.DefaultTriggers && a.TriggerDefined == b.TriggerDefined
}

// The notificationDeliveries subscription streams each delivery whose
// record the controller changes, as it writes the state annotation, and
// none that was there before; a caller who may not see the app gets
// NOT_FOUND.
func TestNotificationDeliveriesSubscription(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	project := "notif-" + ns
	api, _ := notifyAPI(t, ns, project)
	old := notifications.State{"on-created/[0].x//slack/old": {Trigger: "on-created", Condition: "[0].x", Service: "slack", Recipient: "old",
		Phase: notifications.PhaseSent, Attempts: 1, Time: time.Now().Add(-time.Hour).UTC().Truncate(time.Second)}}
	encoded, err := old.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	createAnnotatedApp(t, ns, "shop", project, map[string]string{notifications.StateAnnotation: encoded}, nil)
	waitCount(t, ns, 1)
	key := types.NamespacedName{Namespace: ns, Name: "shop"}

	// write changes the state annotation as the controller does: read,
	// change, write on the condition of the resourceVersion read.
	write := func(change func(notifications.State)) {
		t.Helper()
		var app v1alpha1.Application
		if err := kube.Get(t.Context(), key, &app); err != nil {
			t.Fatal(err)
		}
		st, err := notifications.ParseState(app.Annotations[notifications.StateAnnotation])
		if err != nil {
			t.Fatal(err)
		}
		change(st)
		value, err := st.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": app.ResourceVersion, "annotations": map[string]any{notifications.StateAnnotation: value},
		}})
		if err := kube.Patch(t.Context(), &app, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
	}

	refused := openWS(t, api, 0)
	refused.send(wsMessage{Type: "connection_init", Payload: json.RawMessage(`{"authorization":"Bearer nobody-token"}`)})
	if m := refused.read(); m.Type != "connection_ack" {
		t.Fatalf("after connection_init: %s", m.Type)
	}
	const sub = `subscription($n: String!, $ns: String) { notificationDeliveries(name: $n, namespace: $ns) { key trigger service recipient outcome attempts error time } }`
	refused.subscribe("1", sub, map[string]any{"n": "shop", "ns": ns})
	if m := refused.read(); (m.Type != "error" && m.Type != "next") || !strings.Contains(string(m.Payload), `"code":"NOT_FOUND"`) {
		t.Errorf("nobody subscribes: %s %s, want a NOT_FOUND error", m.Type, m.Payload)
	}

	c := openWS(t, api, 0)
	c.send(wsMessage{Type: "connection_init", Payload: json.RawMessage(`{"authorization":"Bearer viewer-token"}`)})
	if m := c.read(); m.Type != "connection_ack" {
		t.Fatalf("after connection_init: %s", m.Type)
	}
	c.subscribe("1", sub, map[string]any{"n": "shop", "ns": ns})
	type delivery struct {
		Key, Trigger, Service, Recipient, Outcome, Error, Time string
		Attempts                                               int
	}
	got := make(chan delivery, 100)
	go func() {
		defer close(got)
		for {
			var m wsMessage
			_ = c.conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
			if err := c.conn.ReadJSON(&m); err != nil {
				return
			}
			if m.Type != "next" {
				continue
			}
			var p struct {
				Data struct{ NotificationDeliveries delivery }
			}
			if json.Unmarshal(m.Payload, &p) == nil {
				got <- p.Data.NotificationDeliveries
			}
		}
	}()
	next := func() delivery {
		t.Helper()
		select {
		case d, ok := <-got:
			if !ok {
				t.Fatal("the subscription ended")
			}
			return d
		case <-time.After(time.Minute):
			t.Fatal("no delivery event within a minute")
		}
		return delivery{}
	}

	// The subscription starts at some point after the subscribe message:
	// a probe record, changed until its change arrives, marks the start.
	const probe = "probe/[0].p//hook/"
	attempts := 0
	for started := false; !started; {
		attempts++
		write(func(st notifications.State) {
			st[probe] = &notifications.Delivery{Trigger: "probe", Condition: "[0].p", Service: "hook", Phase: notifications.PhaseSent, Attempts: attempts, Time: time.Now().UTC()}
		})
		select {
		case d := <-got:
			if d.Key != probe {
				t.Fatalf("before the probe: %+v", d)
			}
			started = true
			for d.Attempts != attempts {
				d = next()
			}
		case <-time.After(500 * time.Millisecond):
		}
	}

	// A claim, then its outcome, as the notifier writes them.
	occ := notifications.Occurrence{Trigger: "on-deployed", Condition: "[0].abc", Holds: true,
		Destination: services.Destination{Service: "slack", Recipient: "deploys"}}
	occ.Key = notifications.DeliveryKey(occ.Trigger, occ.Condition, "rev1", "slack", "deploys")
	write(func(st notifications.State) {
		plan := notifications.Planner{Now: time.Now(), StaleAfter: time.Minute}.Plan(st, []notifications.Occurrence{occ})
		if len(plan.Claims) != 1 {
			t.Fatalf("plan %+v", plan)
		}
	})
	if d := next(); d.Key != occ.Key || d.Outcome != "PENDING" || d.Attempts != 1 || d.Trigger != "on-deployed" || d.Recipient != "deploys" {
		t.Errorf("the claim: %+v", d)
	}
	write(func(st notifications.State) { st.Sent(occ.Key, time.Now()) })
	if d := next(); d.Key != occ.Key || d.Outcome != "SENT" || d.Attempts != 1 {
		t.Errorf("the outcome: %+v", d)
	}
	// A write that changes no record sends nothing; the next change of
	// another record is the next event.
	if err := kube.Patch(t.Context(), &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}},
		client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"touched":"yes"}}}`))); err != nil {
		t.Fatal(err)
	}
	write(func(st notifications.State) {
		st[probe].Phase, st[probe].Error, st[probe].Time = notifications.PhaseDead, "webhook POST hooks.example.com answered 500: ***", time.Now().UTC()
	})
	if d := next(); d.Key != probe || d.Outcome != "DEAD" || d.Error == "" {
		t.Errorf("after an unrelated write, the failure: %+v", d)
	}
	select {
	case d := <-got:
		t.Errorf("an unexpected event: %+v", d)
	case <-time.After(300 * time.Millisecond):
	}
}

// manyRecipients is n distinct recipients.
func manyRecipients(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint("r", i)
	}
	return out
}
