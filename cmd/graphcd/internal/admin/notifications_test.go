package admin

import (
	"encoding/json"
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
