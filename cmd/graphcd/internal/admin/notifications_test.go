package admin

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

const (
	notificationsConfig = "testdata/notifications/argocd-notifications-cm.yaml"
	notificationsApp    = "testdata/notifications/app.yaml"
)

// trigger run evaluates an Argo CD trigger, unchanged, on an app file.
func TestAdminNotificationsTriggerRun(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "admin", "notifications", "trigger", "run", "on-sync-failed", "-f", notificationsApp, "--config", notificationsConfig)
	if code != command.ExitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var got []struct {
		Triggered bool
		Templates []string
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || len(got) != 1 || !got[0].Triggered || got[0].Templates[0] != "app-sync-failed" {
		t.Errorf("trigger run = %s (%v), want one triggered condition sending app-sync-failed", stdout, err)
	}
	code, stdout, _ = runCLI(t, nil, "admin", "notifications", "trigger", "run", "on-deployed", "-f", notificationsApp)
	if code != command.ExitOK || !strings.Contains(stdout, `"triggered": false`) {
		t.Errorf("the catalog's on-deployed on a failed sync = %d %s, want not triggered", code, stdout)
	}
	if code, _, stderr := runCLI(t, nil, "admin", "notifications", "trigger", "run", "on-nothing", "-f", notificationsApp); code != command.ExitUsage || !strings.Contains(stderr, `trigger "on-nothing" is not defined`) {
		t.Errorf("an unknown trigger = %d %q", code, stderr)
	}
}

// template notify --dry-run renders a template per recipient: the Slack
// parts for Slack, the webhook's request for the webhook.
func TestAdminNotificationsTemplateNotify(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "admin", "notifications", "template", "notify", "app-sync-failed", "-f", notificationsApp,
		"--config", notificationsConfig, "--recipient", "slack:deploys", "--recipient", "deploy-log", "--dry-run")
	if code != command.ExitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var got []struct {
		Service, ServiceType, Recipient string
		Sent                            bool
		Notification                    struct {
			Message string
			Slack   struct{ Attachments string }
			Webhook map[string]struct{ Method, Path, Body string }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || len(got) != 2 {
		t.Fatalf("template notify = %s (%v)", stdout, err)
	}
	slack, hook := got[0], got[1]
	if slack.ServiceType != "slack" || slack.Sent || !strings.HasPrefix(slack.Notification.Message, ":x: Sync of guestbook failed at 2026-12-06T10:00:00Z") ||
		!strings.Contains(slack.Notification.Slack.Attachments, `"value": "https://github.com/example/guestbook"`) {
		t.Errorf("slack: %+v", slack)
	}
	if w := hook.Notification.Webhook["deploy-log"]; hook.ServiceType != "webhook" || w.Path != "/failed" || w.Body != `{"app": "guestbook", "phase": "Failed"}` ||
		strings.HasPrefix(hook.Notification.Message, ":x:") {
		t.Errorf("webhook: %+v", hook)
	}
	if code, _, stderr := runCLI(t, nil, "admin", "notifications", "template", "notify", "app-sync-failed", "-f", notificationsApp, "--dry-run"); code != command.ExitUsage || !strings.Contains(stderr, "--recipient is required") {
		t.Errorf("without --recipient = %d %q", code, stderr)
	}
}

// Without --dry-run, template notify sends, with the credentials of
// --secret (data, base64, and stringData alike); a Secret file that does
// not parse is refused without quoting it.
func TestAdminNotificationsSend(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("X-Token") + " " + r.Header.Get("X-Team") + " " + r.URL.Path
	}))
	defer srv.Close()
	dir := t.TempDir()
	config := filepath.Join(dir, "cm.yaml")
	secret := filepath.Join(dir, "secret.yaml")
	writeFile(t, config, `kind: ConfigMap
data:
  service.webhook.hook: |
    url: `+srv.URL+`
    headers:
    - {name: X-Token, value: $token}
    - {name: X-Team, value: $team}
  template.ping: |
    webhook:
      hook:
        method: POST
        path: /ping/{{.app.metadata.name}}
`)
	writeFile(t, secret, "kind: Secret\ndata:\n  token: "+base64.StdEncoding.EncodeToString([]byte("tok-123"))+"\nstringData:\n  team: payments\n")
	code, stdout, stderr := runCLI(t, nil, "admin", "notifications", "template", "notify", "ping", "-f", notificationsApp, "--config", config, "--secret", secret, "--recipient", "hook")
	if code != command.ExitOK || !strings.Contains(stdout, `"sent": true`) {
		t.Fatalf("exit %d, stdout %s, stderr %q", code, stdout, stderr)
	}
	if r := <-got; r != "tok-123 payments /ping/guestbook" {
		t.Errorf("request %q", r)
	}
	writeFile(t, secret, "kind: Secret\ndata: {token: [hunter2\n")
	code, _, stderr = runCLI(t, nil, "admin", "notifications", "template", "notify", "ping", "-f", notificationsApp, "--config", config, "--secret", secret, "--recipient", "hook")
	if code != command.ExitUsage || strings.Contains(stderr, "hunter2") || !strings.Contains(stderr, "not a Secret manifest") {
		t.Errorf("a broken Secret file = %d %q", code, stderr)
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
