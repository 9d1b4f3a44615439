package notifications

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/argoproj/notifications-engine/pkg/services"
	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// app reads an Application from YAML, as the controller hands it over.
func app(t *testing.T, doc string) map[string]any {
	t.Helper()
	var out map[string]any
	if err := yaml.Unmarshal([]byte(doc), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

const failedApp = `
apiVersion: graphcd.io/v1alpha1
kind: Application
metadata:
  name: shop
  labels: {team: payments}
spec:
  project: default
  source: {repoURL: "git@github.com:example/shop.git"}
status:
  sync: {status: OutOfSync, revision: abc123}
  health: {status: Healthy}
  operationState:
    phase: Failed
    message: "one or more objects failed to apply"
`

// A configuration carried over from Argo CD: a service with a secret
// reference, a template per service, a trigger of its own next to the
// catalog's, default triggers and a global subscription by label.
const argoConfig = `
context: |
  region: eu-west-1
service.webhook.deploys: |
  url: SERVER
  headers:
  - name: Authorization
    value: Bearer $deploys-token
service.slack: |
  token: $slack-token
template.failed-text: |
  message: "{{.app.metadata.name}} failed in {{.context.region}} ({{.serviceType}} to {{.recipient}})"
  webhook:
    deploys:
      method: POST
      path: /hooks/{{.app.metadata.name}}
      body: '{"app": "{{.app.metadata.name}}", "repo": "{{call .repo.RepoURLToHTTPS .app.spec.source.repoURL}}"}'
trigger.on-failed-in-prod: |
  - when: app.status.operationState.phase in ['Error', 'Failed'] and app.metadata.labels.team == 'payments'
    send: [failed-text]
defaultTriggers: |
  - on-sync-failed
subscriptions: |
  - recipients: [slack:payments-alerts]
    selector: team=payments
    triggers: [on-failed-in-prod]
`

func parseConfig(t *testing.T, server string) *Config {
	t.Helper()
	var data map[string]string
	if err := yaml.Unmarshal([]byte(argoConfig), &data); err != nil {
		t.Fatal(err)
	}
	data["service.webhook.deploys"] = strings.Replace(data["service.webhook.deploys"], "SERVER", server, 1)
	c, err := Parse(data, map[string][]byte{"deploys-token": []byte("s3cr3t"), "slack-token": []byte("xoxb-1")})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTriggers(t *testing.T) {
	c := parseConfig(t, "http://127.0.0.1:1")
	if got := c.TriggerNames(); !strings.Contains(strings.Join(got, ","), "on-created,on-deleted,on-deployed,on-failed-in-prod,on-health-degraded") {
		t.Errorf("triggers %v: want the catalog's and the ConfigMap's", got)
	}
	failed := app(t, failedApp)
	for _, tc := range []struct {
		trigger string
		want    bool
	}{
		{"on-sync-failed", true},
		{"on-failed-in-prod", true},
		{"on-sync-succeeded", false},
		{"on-health-degraded", false},
		{"on-deployed", false},
	} {
		r := c.Trigger(tc.trigger).Run(failed)
		if len(r) != 1 || r[0].Triggered != tc.want || r[0].Error != "" {
			t.Errorf("%s: %+v, want triggered %v", tc.trigger, r, tc.want)
		}
	}
	// oncePer gives the value a notification is sent once for.
	deployed := app(t, strings.Replace(failedApp, "phase: Failed", "phase: Succeeded", 1))
	if r := c.Trigger("on-deployed").Run(deployed); !r[0].Triggered || r[0].OncePer != "abc123" || r[0].Templates[0] != "app-deployed" {
		t.Errorf("on-deployed: %+v, want triggered once per abc123", r)
	}
	// A field the app lacks: the condition does not hold, and says why.
	fresh := app(t, "metadata: {name: fresh}\nstatus: {}\n")
	if r := c.Trigger("on-sync-failed").Run(fresh); r[0].Triggered || r[0].Error == "" {
		t.Errorf("on-sync-failed of an app never synced: %+v, want false with an error", r)
	}
}

func TestSubscriptions(t *testing.T) {
	c := parseConfig(t, "http://127.0.0.1:1")
	subs, err := c.Subscriptions(map[string]string{
		"notifications.argoproj.io/subscribe.on-sync-succeeded.slack": "deploys; releases",
		"notifications.graphcd.io/subscribe.on-deployed.deploys":      "",
		"notifications.argoproj.io/subscribe.slack":                   "oncall",
		"notifications.argoproj.io/subscriptions":                     "- trigger: [on-created]\n  destinations: [{service: slack, recipients: [new-apps]}]\n",
		"example.com/subscribe.on-created.slack":                      "ignored: another prefix",
	}, map[string]string{"team": "payments"}, map[string]string{
		"notifications.argoproj.io/subscribe.on-health-degraded.slack": "platform",
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range subs {
		got = append(got, s.Trigger+" "+s.Destination.Service+":"+s.Destination.Recipient)
	}
	want := []string{
		"on-created slack:new-apps",
		"on-deployed deploys:",
		"on-failed-in-prod slack:payments-alerts",
		"on-health-degraded slack:platform",
		"on-sync-failed slack:oncall",
		"on-sync-succeeded slack:deploys",
		"on-sync-succeeded slack:releases",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("subscriptions (-got +want):\n%s", diff)
	}
	if _, err := c.Subscriptions(map[string]string{"notifications.argoproj.io/subscriptions": "{not a list"}, nil, nil); err == nil {
		t.Error("a subscriptions annotation that is not YAML: no error")
	}
}

// Render fills a template for one destination, and the webhook service
// sends the rendered request to its server with the secret it references.
func TestRenderAndSend(t *testing.T) {
	type request struct{ method, path, auth, body string }
	got := make(chan request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- request{r.Method, r.URL.Path, r.Header.Get("Authorization"), string(b)}
	}))
	defer srv.Close()
	c := parseConfig(t, srv.URL)
	failed := app(t, failedApp)
	dest := services.Destination{Service: "deploys"}
	n, err := c.Render(failed, dest, "failed-text")
	if err != nil {
		t.Fatal(err)
	}
	if n.Message != "shop failed in eu-west-1 (webhook to )" {
		t.Errorf("message %q", n.Message)
	}
	sender, err := c.Sender("deploys")
	if err != nil {
		t.Fatal(err)
	}
	if err := sender.Send(*n, dest); err != nil {
		t.Fatal(err)
	}
	want := request{"POST", "/hooks/shop", "Bearer s3cr3t", `{"app": "shop", "repo": "https://github.com/example/shop"}`}
	if r := <-got; r != want {
		t.Errorf("request %+v, want %+v", r, want)
	}
	if _, err := c.Sender("pagerduty"); err == nil {
		t.Error("a service that is not configured: no error")
	}
	if _, err := c.Render(failed, dest, "no-such-template"); err == nil {
		t.Error("an unknown template: no error")
	}
}

// Mistakes are reported when the configuration is read, naming the key.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		data map[string]string
		want string
	}{
		{"bad expression", map[string]string{"trigger.x": "- when: app.status ==\n  send: [app-created]"}, "trigger.x[0] when"},
		{"unknown template", map[string]string{"trigger.x": "- when: 'true'\n  send: [nope]"}, `trigger.x: template "nope" is not defined`},
		{"no template", map[string]string{"trigger.x": "- when: 'true'"}, "trigger.x[0]: send lists no template"},
		{"bad template", map[string]string{"template.t": "message: '{{.app'"}, "t"},
		{"bad context", map[string]string{"context": "[1, 2"}, "context"},
		{"bad service key", map[string]string{"service.a.b.c": "{}"}, "invalid service key"},
	} {
		_, err := Parse(tc.data, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one with %q", tc.name, err, tc.want)
		}
	}
}

func TestRepoHelpers(t *testing.T) {
	for in, want := range map[string]string{
		"git@github.com:example/shop.git":        "https://github.com/example/shop",
		"ssh://git@gitlab.com/group/sub/app.git": "https://gitlab.com/group/sub/app",
		"https://user:pw@git.example.com:8443/a": "https://git.example.com:8443/a",
	} {
		if got := repoURLToHTTPS(in); got != want {
			t.Errorf("RepoURLToHTTPS(%q) = %q, want %q", in, got, want)
		}
	}
	if got := fullNameByRepoURL("git@github.com:example/shop.git"); got != "example/shop" {
		t.Errorf("FullNameByRepoURL = %q", got)
	}
}

func TestRedact(t *testing.T) {
	c := parseConfig(t, "http://127.0.0.1:1")
	if got := c.Redact(`Post "https://hooks.example.com/?token=s3cr3t": refused; auth xoxb-1`); got != `Post "https://hooks.example.com/?token=***": refused; auth ***` {
		t.Errorf("redacted %q", got)
	}
}

func TestWarnings(t *testing.T) {
	c, err := Parse(map[string]string{"service.slack": "token: $slack-token\nsigningSecret: $signing"}, map[string][]byte{"slack-token": []byte("xoxb-1")})
	if err != nil {
		t.Fatal(err)
	}
	if w := c.Warnings(); len(w) != 1 || w[0] != "service.slack: $signing is not a key of the notifications Secret" {
		t.Errorf("warnings %q", w)
	}
}
