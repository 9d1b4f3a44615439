//go:build integration

package resolvers_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/audit"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// A refused createApplication names an app of someone else and a project
// name far past any bound: it writes nothing, its entry's project is
// clipped, and its one Event regards graphcd's settings ConfigMap (not
// the app, whose readers would see it), fits the Event API's 1 KiB note
// and carries no client address. An accepted app's repoURL credentials
// never reach its patch.
func TestAuditRefusedAndHostileInput(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	setPolicy(t, ns, `
p, role:viewer, applications, get, */*, allow
g, viewer, role:viewer
g, boss, role:admin
`)
	tt := tokenTable{"boss-token": {Subject: "boss"}, "viewer-token": {Subject: "viewer"}}
	log := &audit.Log{Store: audit.NewMemory(0), Events: audit.NewEventWriter(cluster.Client, ns, "test")}
	api := auditAPI(t, ns, tt, log, nil)

	const create = `mutation($m: String!, $upsert: Boolean!) { createApplication(input: {manifest: $m, upsert: $upsert}) { name } }`
	if _, errs := ask(t, api, "boss-token", create, map[string]any{"m": manifest(ns, "victim", "argoproj.io/v1alpha1", ""), "upsert": false}); len(errs) > 0 {
		t.Fatalf("create victim: %+v", errs)
	}
	long := strings.Repeat("p", 3000)
	hostile := strings.Replace(manifest(ns, "victim", "argoproj.io/v1alpha1", ""), "project: default", "project: "+long, 1)
	if _, errs := ask(t, api, "viewer-token", create, map[string]any{"m": hostile, "upsert": true}); codeOf(errs) != "FORBIDDEN" {
		t.Fatalf("hostile create: %+v, want FORBIDDEN", errs)
	}
	const token = "s3cr3t-tok"
	withCreds := strings.Replace(manifest(ns, "creds", "argoproj.io/v1alpha1", ""), "https://git.example.com/apps.git", "https://user:"+token+"@git.example.com/apps.git", 1)
	if _, errs := ask(t, api, "boss-token", create, map[string]any{"m": withCreds, "upsert": false}); len(errs) > 0 {
		t.Fatalf("create creds: %+v", errs)
	}

	// Nothing was written.
	var victim v1alpha1.Application
	if err := kube.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "victim"}, &victim); err != nil {
		t.Fatal(err)
	}
	if victim.Spec.Project != "default" {
		t.Errorf("the refused create moved victim to project %.20s...", victim.Spec.Project)
	}

	logged := auditLogOf(t, api, "boss-token", nil)
	if len(logged) != 3 {
		t.Fatalf("the log holds %d entries, want 3: %+v", len(logged), logged)
	}
	refused, creds := logged[1], logged[0]
	if refused.Outcome != "FAILURE" || refused.Object.Name != "victim" || len(refused.Object.Project) > 256 || !strings.HasPrefix(refused.Object.Project, "ppp") {
		t.Errorf("refused entry: %+v", refused)
	}
	if refused.ClientAddress == nil || *refused.ClientAddress != "127.0.0.1" {
		t.Errorf("refused entry's client: %v, want 127.0.0.1 (kept in the store)", refused.ClientAddress)
	}
	if creds.Patch == nil || strings.Contains(*creds.Patch, token) || !strings.Contains(*creds.Patch, "git.example.com/apps.git") {
		t.Errorf("creds patch: %v", creds.Patch)
	}

	list, err := cluster.Client.EventsV1().Events(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range list.Items {
		if ev.Regarding.Kind == "Application" && ev.Regarding.Name == "victim" && ev.Type != "Normal" {
			t.Errorf("a refused mutation's Event regards the victim app: %q", ev.Note)
		}
		if strings.Contains(ev.Note, token) {
			t.Errorf("an Event holds the repoURL's token: %q", ev.Note)
		}
		if ev.Annotations[audit.EventIDAnnotation] != refused.ID {
			continue
		}
		n++
		if ev.Regarding.Kind != "ConfigMap" || ev.Regarding.Name != wellknown.SettingsConfigMap || ev.Regarding.Namespace != ns {
			t.Errorf("the refusal's Event regards %+v, want graphcd's settings ConfigMap", ev.Regarding)
		}
		if len(ev.Note) > 1024 || !strings.Contains(ev.Note, "viewer createApplication") || !strings.Contains(ev.Note, "(project ppp") || !strings.HasSuffix(ev.Note, ": FORBIDDEN") {
			t.Errorf("the refusal's Event note (%d bytes): %.200q", len(ev.Note), ev.Note)
		}
		if strings.Contains(ev.Note, "127.0.0.1") {
			t.Errorf("the refusal's Event carries the client address: %q", ev.Note)
		}
	}
	if n != 1 {
		t.Errorf("the refusal has %d Events, want 1", n)
	}
}
