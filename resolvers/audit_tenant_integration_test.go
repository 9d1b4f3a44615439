//go:build integration

package resolvers_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/apiserver/audit"
)

// projectManifestOf is an AppProject that allows every source and
// destination.
func projectManifestOf(name string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: %s}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: "*"}]
`, name)
}

// A reader granted "audit, get" on one project reads that project's
// entries only, in the log and in the stream: neither another project's
// nor those without a project ("*").
func TestAuditTenantSeesOwnProject(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	mine, theirs := "mine-"+ns, "theirs-"+ns
	setPolicy(t, ns, fmt.Sprintf(`
p, role:team, audit, get, %s, allow
g, team, role:team
g, boss, role:admin
`, mine))
	tt := tokenTable{"boss-token": {Subject: "boss"}, "team-token": {Subject: "team"}}
	store := audit.NewMemory(0)
	api := auditAPI(t, ns, tt, &audit.Log{Store: store}, nil)

	// The team's subscription, live before the session starts: a probe
	// of its project appended until one arrives.
	ws := openWS(t, api, 0)
	ws.send(wsMessage{Type: "connection_init", Payload: json.RawMessage(`{"authorization":"Bearer team-token"}`)})
	if m := ws.read(); m.Type != "connection_ack" {
		t.Fatalf("after connection_init: %s %s", m.Type, m.Payload)
	}
	ws.subscribe("audit", `subscription { auditEvents { `+auditFields+` } }`, nil)
	awaitLive(t, ws, store, mine)

	app := func(name, project string) string {
		return strings.Replace(manifest(ns, name, "argoproj.io/v1alpha1", ""), "project: default", "project: "+project, 1)
	}
	const createProject = `mutation($m: String!) { createProject(input: {manifest: $m}) { name } }`
	const createApp = `mutation($m: String!) { createApplication(input: {manifest: $m}) { name } }`
	// Theirs and project-less entries first, the team's last: the stream
	// is in order, so what reaches the team before its last entry is all
	// it will ever get of them.
	steps := []struct {
		query, manifest, code string
	}{
		{createProject, projectManifestOf(theirs), ""},
		{createApp, app("theirs-app", theirs), ""},
		{createApp, "{{{ not yaml", "BAD_USER_INPUT"}, // no project: "*"
		{createProject, projectManifestOf(mine), ""},
		{createApp, app("mine-app", mine), ""},
	}
	for i, s := range steps {
		if _, errs := ask(t, api, "boss-token", s.query, map[string]any{"m": s.manifest}); codeOf(errs) != s.code {
			t.Fatalf("step %d: code %q, want %q (%+v)", i, codeOf(errs), s.code, errs)
		}
	}

	var streamed []auditEntry
	for {
		var got struct{ AuditEvents auditEntry }
		ws.next("audit", &got)
		if got.AuditEvents.User == "probe" {
			continue
		}
		streamed = append(streamed, got.AuditEvents)
		if got.AuditEvents.Mutation == "createApplication" && got.AuditEvents.Object.Name == "mine-app" {
			break
		}
	}
	var logged []auditEntry
	for _, e := range auditLogOf(t, api, "team-token", nil) {
		if e.User != "probe" {
			logged = append(logged, e)
		}
	}
	for what, got := range map[string][]auditEntry{"auditLog": logged, "auditEvents": streamed} {
		var names []string
		for _, e := range got {
			if e.Object.Project != mine {
				t.Errorf("%s shows the team an entry of project %q: %+v", what, e.Object.Project, e)
			}
			names = append(names, e.Mutation+" "+e.Object.Name)
		}
		want := []string{"createProject " + mine, "createApplication mine-app"}
		if what == "auditLog" { // newest first
			want[0], want[1] = want[1], want[0]
		}
		if strings.Join(names, ", ") != strings.Join(want, ", ") {
			t.Errorf("%s shows the team %q, want %q", what, names, want)
		}
	}
	// The admin sees all five.
	n := 0
	for _, e := range auditLogOf(t, api, "boss-token", nil) {
		if e.User != "probe" {
			n++
		}
	}
	if n != len(steps) {
		t.Errorf("the admin reads %d entries, want %d", n, len(steps))
	}
}
