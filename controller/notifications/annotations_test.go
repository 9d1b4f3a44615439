package notifications

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Declarations say where each subscription comes from: the app's
// annotations, its project's, or the ConfigMap's, and which ones take
// the default triggers.
func TestDeclarations(t *testing.T) {
	c := parseConfig(t, "http://127.0.0.1:1")
	decls, err := c.Declarations(map[string]string{
		"notifications.argoproj.io/subscribe.on-sync-succeeded.slack": "deploys; releases",
		"notifications.argoproj.io/subscribe.slack":                   "oncall",
		"notifications.graphcd.io/subscribe.on-deployed.deploys":      "",
	}, map[string]string{"team": "payments"}, map[string]string{
		"notifications.argoproj.io/subscribe.on-sync-succeeded.slack": "deploys",
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range decls {
		got = append(got, fmt.Sprintf("%s %s %s %s:%s defaults=%v", d.Origin, d.Annotation, d.Trigger, d.Destination.Service, d.Destination.Recipient, d.Defaults))
	}
	want := []string{
		"project notifications.argoproj.io/subscribe.on-sync-succeeded.slack on-sync-succeeded slack:deploys defaults=false",
		"application notifications.argoproj.io/subscribe.on-sync-succeeded.slack on-sync-succeeded slack:deploys defaults=false",
		"application notifications.argoproj.io/subscribe.on-sync-succeeded.slack on-sync-succeeded slack:releases defaults=false",
		"application notifications.argoproj.io/subscribe.slack on-sync-failed slack:oncall defaults=true",
		"application notifications.graphcd.io/subscribe.on-deployed.deploys on-deployed deploys: defaults=false",
		"configmap  on-failed-in-prod slack:payments-alerts defaults=false",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("declarations (-got +want):\n%s", diff)
	}
	if d := c.DefaultTriggers("slack"); len(d) != 1 || d[0] != "on-sync-failed" {
		t.Errorf("default triggers of slack: %v", d)
	}
}

// Subscribe adds recipients in Argo CD's format, to the graphcd-prefixed
// annotation when the app uses that one; Unsubscribe removes them from
// either, and the annotation once it has none.
func TestSubscribeAndUnsubscribe(t *testing.T) {
	for _, tc := range []struct {
		name             string
		annotations      map[string]string
		trigger, service string
		recipients       []string
		want             *Edit
		wantErr          string
	}{
		{name: "new", trigger: "on-sync-failed", service: "slack", recipients: []string{" deploys ", "ops", "deploys"},
			want: &Edit{Key: "notifications.argoproj.io/subscribe.on-sync-failed.slack", Value: "deploys;ops"}},
		{name: "added to the list", annotations: map[string]string{"notifications.argoproj.io/subscribe.on-sync-failed.slack": "ops; deploys"},
			trigger: "on-sync-failed", service: "slack", recipients: []string{"deploys", "oncall"},
			want: &Edit{Key: "notifications.argoproj.io/subscribe.on-sync-failed.slack", Value: "ops;deploys;oncall"}},
		{name: "already there", annotations: map[string]string{"notifications.argoproj.io/subscribe.on-sync-failed.slack": "ops"},
			trigger: "on-sync-failed", service: "slack", recipients: []string{"ops"}},
		{name: "graphcd's key", annotations: map[string]string{"notifications.graphcd.io/subscribe.on-sync-failed.slack": "ops"},
			trigger: "on-sync-failed", service: "slack", recipients: []string{"dev"},
			want: &Edit{Key: "notifications.graphcd.io/subscribe.on-sync-failed.slack", Value: "ops;dev"}},
		{name: "graphcd's prefix only", annotations: map[string]string{"notifications.graphcd.io/subscribe.on-deployed.hook": ""},
			trigger: "on-sync-failed", service: "slack", recipients: []string{"dev"},
			want: &Edit{Key: "notifications.graphcd.io/subscribe.on-sync-failed.slack", Value: "dev"}},
		{name: "default triggers", service: "slack", recipients: []string{"dev"},
			want: &Edit{Key: "notifications.argoproj.io/subscribe.slack", Value: "dev"}},
		{name: "webhook", trigger: "on-deployed", service: "hook", recipients: []string{},
			want: &Edit{Key: "notifications.argoproj.io/subscribe.on-deployed.hook", Value: ""}},
		{name: "dotted trigger", trigger: "on.sync.failed", service: "slack", recipients: []string{"x"},
			want: &Edit{Key: "notifications.argoproj.io/subscribe.on.sync.failed.slack", Value: "x"}},
		{name: "dotted service", trigger: "on-sync-failed", service: "sla.ck", recipients: []string{"x"}, wantErr: "service"},
		{name: "bad trigger", trigger: "on sync", service: "slack", recipients: []string{"x"}, wantErr: "trigger"},
		{name: "key too long", trigger: strings.Repeat("t", 60), service: "slack", recipients: []string{"x"}, wantErr: "annotation"},
		{name: "separator", trigger: "on-sync-failed", service: "slack", recipients: []string{"a;b"}, wantErr: "';'"},
		{name: "newline", trigger: "on-sync-failed", service: "slack", recipients: []string{"a\nb"}, wantErr: "control"},
		{name: "empty", trigger: "on-sync-failed", service: "slack", recipients: []string{" "}, wantErr: "empty"},
		{name: "long", trigger: "on-sync-failed", service: "slack", recipients: []string{strings.Repeat("r", MaxRecipientBytes+1)}, wantErr: "longer"},
		{name: "too many", trigger: "on-sync-failed", service: "slack", recipients: numbered(MaxRecipients + 1), wantErr: "more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Subscribe(tc.annotations, tc.trigger, tc.service, tc.recipients)
			if tc.wantErr != "" {
				if err == nil || !errors.Is(err, ErrInvalidSubscription) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one about %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("edit (-got +want):\n%s", diff)
			}
		})
	}

	both := map[string]string{
		"notifications.argoproj.io/subscribe.on-sync-failed.slack": "ops;dev",
		"notifications.graphcd.io/subscribe.on-sync-failed.slack":  "dev",
		"notifications.argoproj.io/subscribe.slack":                "ops",
	}
	edits, err := Unsubscribe(both, "on-sync-failed", "slack", []string{"dev"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Edit{
		{Key: "notifications.argoproj.io/subscribe.on-sync-failed.slack", Value: "ops"},
		{Key: "notifications.graphcd.io/subscribe.on-sync-failed.slack", Remove: true},
	}
	if diff := cmp.Diff(edits, want); diff != "" {
		t.Errorf("unsubscribe dev (-got +want):\n%s", diff)
	}
	if edits, _ := Unsubscribe(both, "", "slack", nil); len(edits) != 1 || !edits[0].Remove || edits[0].Key != "notifications.argoproj.io/subscribe.slack" {
		t.Errorf("unsubscribe the default triggers: %+v", edits)
	}
	if edits, _ := Unsubscribe(both, "on-deployed", "slack", nil); len(edits) != 0 {
		t.Errorf("unsubscribe what is not there: %+v", edits)
	}
	if edits, _ := Unsubscribe(both, "on-sync-failed", "slack", []string{"nobody"}); len(edits) != 0 {
		t.Errorf("unsubscribe a recipient that is not there: %+v", edits)
	}
	if _, err := Unsubscribe(both, "on-sync-failed", "slack", []string{"a;b"}); !errors.Is(err, ErrInvalidSubscription) {
		t.Errorf("unsubscribe a malformed recipient: %v", err)
	}
}

// Mask hides a Secret's values without a Config.
func TestMask(t *testing.T) {
	got := Mask(map[string][]byte{"token": []byte("s3cr3t-value"), "short": []byte("1")}, "url https://x/s3cr3t-value?a=1")
	if got != "url https://x/***?a=1" {
		t.Errorf("Mask: %q", got)
	}
}

// numbered is n distinct recipients.
func numbered(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint("r", i)
	}
	return out
}
