//go:build integration

package resolvers_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/apiserver/audit"
	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/internal/kubewatch"
)

// auditAPI serves the shared fixtures with RBAC from ns, the tokens of
// tt, and the audit trail in log; proxies are its trusted proxies.
func auditAPI(t *testing.T, ns string, tt tokenTable, log *audit.Log, proxies []netip.Prefix) string {
	t.Helper()
	a := auth.NewAuthorizer()
	quiet := slog.New(slog.DiscardHandler)
	if err := auth.WatchPolicy(t.Context(), kubewatch.NewSource(t.Context(), cluster.Client, ns), a, quiet); err != nil {
		t.Fatal(err)
	}
	if err := auth.WatchProjects(t.Context(), objects, a, quiet); err != nil {
		t.Fatal(err)
	}
	opts, err := apiOptions(events)
	if err != nil {
		t.Fatal(err)
	}
	opts.API.Authz, opts.Authenticator = a, tt
	opts.Audit, opts.API.Audit, opts.TrustedProxies = log, log.Store, proxies
	ts, err := serveAPI(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	return ts.URL
}

// auditEntry is an entry as the API shows it.
type auditEntry struct {
	ID, User, Mutation string
	Groups             []string
	ClientAddress      *string
	OperationName      *string
	Object             struct{ Kind, Group, Namespace, Name, Project string }
	Patch              *string
	PatchOmitted       bool
	Outcome            string
	ErrorCode          *string
}

const auditFields = `id user groups clientAddress operationName mutation object { kind group namespace name project } patch patchOmitted outcome errorCode`

// auditLogOf lists the whole audit log the API at base shows token,
// newest first, a page of two at a time (so that paging is used).
func auditLogOf(t *testing.T, base, token string, filter map[string]any) []auditEntry {
	t.Helper()
	var all []auditEntry
	var after *string
	for {
		data, errs := ask(t, base, token, `query($after: String, $f: AuditFilter) {
  auditLog(first: 2, after: $after, filter: $f) { nodes { `+auditFields+` } pageInfo { hasNextPage endCursor } }
}`, map[string]any{"after": after, "f": filter})
		if len(errs) > 0 {
			t.Fatalf("auditLog: %+v", errs)
		}
		var got struct {
			AuditLog struct {
				Nodes    []auditEntry
				PageInfo struct {
					HasNextPage bool
					EndCursor   *string
				}
			}
		}
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		all = append(all, got.AuditLog.Nodes...)
		if !got.AuditLog.PageInfo.HasNextPage {
			return all
		}
		after = got.AuditLog.PageInfo.EndCursor
	}
}

// A session of mutations: each appears once in the audit log, with who,
// from where (X-Forwarded-For only through a trusted proxy), which
// object, a redacted JSON patch and the outcome; each has a Kubernetes
// Event, and the subscription streams them as they are recorded.
func TestAuditTrail(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	proj := "audit-" + ns
	setPolicy(t, ns, `
p, role:viewer, applications, get, */*, allow
g, viewer, role:viewer
g, boss, role:admin
`)
	tt := tokenTable{
		"boss-token":   {Subject: "boss", Groups: []string{"ops"}},
		"viewer-token": {Subject: "viewer"},
	}
	rc := redis.NewClient(&redis.Options{Addr: redisSrv.Addr, Password: redisSrv.Password})
	t.Cleanup(func() { _ = rc.Close() })
	store, err := audit.NewRedis(rc, "graphcd:audit:"+ns, audit.DefaultSize, bytes.Repeat([]byte("k"), audit.MinSecret), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup
	running.Go(func() { _ = store.Run(ctx) })
	t.Cleanup(func() { cancel(); running.Wait() })
	log := &audit.Log{Store: store, Events: audit.NewEventWriter(cluster.Client, ns, "test"), Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))}
	// The API behind a trusted proxy (the test's own address), and one
	// that trusts no proxy.
	proxied := auditAPI(t, ns, tt, log, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")})
	direct := auditAPI(t, ns, tt, log, nil)

	// The subscription, live before the session starts: a probe appended
	// until one arrives.
	ws := openWS(t, proxied, 0)
	ws.send(wsMessage{Type: "connection_init", Payload: json.RawMessage(`{"authorization":"Bearer boss-token"}`)})
	if m := ws.read(); m.Type != "connection_ack" {
		t.Fatalf("after connection_init: %s %s", m.Type, m.Payload)
	}
	ws.subscribe("audit", `subscription { auditEvents { `+auditFields+` } }`, nil)
	awaitLive(t, ws, store, "")

	app := "guestbook"
	const password = "hunter2-secret"
	repoURL := "https://git.example.com/" + ns + ".git"
	type step struct {
		token, xff, op, query string
		vars                  map[string]any
		base                  string
		// want
		field, code, kind, name, project, client string
		patchHas                                 []string
	}
	projectManifest := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: %s}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: "*"}]
`, proj)
	appManifest := strings.Replace(manifest(ns, app, "argoproj.io/v1alpha1", ""), "project: default", "project: "+proj, 1)
	ref := map[string]any{"name": app, "namespace": ns}
	steps := []step{
		{op: "CreateProject", query: `mutation CreateProject($m: String!) { createProject(input: {manifest: $m}) { name } }`,
			vars: map[string]any{"m": projectManifest}, field: "createProject", kind: "AppProject", name: proj, project: proj,
			patchHas: []string{`"op":"add","path":""`, `"sourceRepos":["*"]`}},
		{op: "CreateApp", query: `mutation CreateApp($m: String!) { createApplication(input: {manifest: $m}) { name } }`,
			vars: map[string]any{"m": appManifest}, field: "createApplication", kind: "Application", name: app, project: proj,
			patchHas: []string{`"op":"add","path":""`, `"path":"guestbook"`}},
		{query: `mutation($in: UpdateApplicationSpecInput!) { updateApplicationSpec(input: $in) { name } }`,
			vars: map[string]any{"in": map[string]any{"application": ref, "spec": strings.Replace(
				`{project: PROJ, source: {repoURL: "https://git.example.com/apps.git", path: other, targetRevision: main}, destination: {server: "https://kubernetes.default.svc", namespace: guestbook}}`,
				"PROJ", proj, 1)}},
			field: "updateApplicationSpec", kind: "Application", name: app, project: proj,
			patchHas: []string{`{"op":"replace","path":"/spec/source/path","value":"other"}`}},
		{query: `mutation($in: PatchApplicationInput!) { patchApplication(input: $in) { name } }`,
			vars:  map[string]any{"in": map[string]any{"application": ref, "patch": `{"spec":{"source":{"targetRevision":"v2"}}}`}},
			field: "patchApplication", kind: "Application", name: app, project: proj,
			patchHas: []string{`{"op":"replace","path":"/spec/source/targetRevision","value":"v2"}`}},
		{query: `mutation($in: SyncApplicationInput!) { syncApplication(input: $in) { name } }`,
			vars: map[string]any{"in": map[string]any{"application": ref, "prune": true}}, field: "syncApplication",
			kind: "Application", name: app, project: proj, patchHas: []string{`"op":"add","path":"/operation"`, `"username":"boss"`}},
		// Refused: the viewer may see the app but not sync it; through an
		// API that trusts no proxy, the forged header is ignored.
		{token: "viewer-token", base: direct, xff: "203.0.113.9",
			query: `mutation($in: SyncApplicationInput!) { syncApplication(input: $in) { name } }`,
			vars:  map[string]any{"in": map[string]any{"application": ref}}, field: "syncApplication", code: "FORBIDDEN",
			kind: "applications", name: app, project: proj, client: "127.0.0.1"},
		{query: `mutation($in: RepositoryInput!) { createRepository(input: $in) { url } }`,
			vars:  map[string]any{"in": map[string]any{"url": repoURL, "project": proj, "username": "git", "password": password, "skipTest": true}},
			field: "createRepository", kind: "Secret", project: proj,
			patchHas: []string{`"password":"` + audit.Redacted + `"`, `"url":"` + audit.Redacted + `"`}},
		{query: `mutation($m: String!) { createApplication(input: {manifest: $m}) { name } }`,
			vars: map[string]any{"m": "{{{ not yaml"}, field: "createApplication", code: "BAD_USER_INPUT"},
		{query: `mutation($in: DeleteApplicationInput!) { deleteApplication(input: $in) }`,
			vars: map[string]any{"in": map[string]any{"application": ref, "cascade": false}}, field: "deleteApplication",
			kind: "Application", name: app, project: proj, patchHas: []string{`[{"op":"remove","path":""}]`}},
	}
	for i := range steps {
		s := &steps[i]
		if s.token == "" {
			s.token, s.xff, s.client = "boss-token", "192.0.2.1, 198.51.100.7", "198.51.100.7"
		}
		if s.base == "" {
			s.base = proxied
		}
		_, errs := askFrom(t, s.base, s.token, s.xff, s.query, s.vars)
		if got := codeOf(errs); got != s.code {
			t.Fatalf("step %d (%s): code %q, want %q (%+v)", i, s.field, got, s.code, errs)
		}
	}

	// The subscription streamed every entry, in order.
	var streamed []auditEntry
	for len(streamed) < len(steps) {
		var got struct{ AuditEvents auditEntry }
		ws.next("audit", &got)
		if got.AuditEvents.User != "probe" {
			streamed = append(streamed, got.AuditEvents)
		}
	}

	// The viewer may not read the log.
	if _, errs := ask(t, proxied, "viewer-token", `{ auditLog { nodes { id } } }`, nil); codeOf(errs) != "FORBIDDEN" {
		t.Errorf("viewer reads the audit log: %+v", errs)
	}
	var logged []auditEntry
	for _, e := range auditLogOf(t, proxied, "boss-token", nil) {
		if e.User != "probe" {
			logged = append(logged, e)
		}
	}
	if len(logged) != len(steps) {
		t.Fatalf("the log holds %d entries, want %d: %+v", len(logged), len(steps), logged)
	}
	all, _ := json.Marshal(logged)
	for _, leak := range []string{password, base64.StdEncoding.EncodeToString([]byte(password)), "boss-token"} {
		if bytes.Contains(all, []byte(leak)) {
			t.Errorf("the audit log holds %q: %s", leak, all)
		}
	}
	for i, s := range steps {
		e := logged[len(steps)-1-i] // newest first
		if streamed[i].ID != e.ID {
			t.Errorf("step %d: streamed entry %s, logged %s", i, streamed[i].ID, e.ID)
		}
		wantUser, wantOutcome := "boss", "SUCCESS"
		if s.token == "viewer-token" {
			wantUser = "viewer"
		}
		if s.code != "" {
			wantOutcome = "FAILURE"
		}
		code := ""
		if e.ErrorCode != nil {
			code = *e.ErrorCode
		}
		client := ""
		if e.ClientAddress != nil {
			client = *e.ClientAddress
		}
		if e.User != wantUser || e.Mutation != s.field || e.Outcome != wantOutcome || code != s.code || client != s.client {
			t.Errorf("step %d: entry %+v, want user %s, mutation %s, outcome %s %s, client %s", i, e, wantUser, s.field, wantOutcome, s.code, s.client)
		}
		if e.Object.Kind != s.kind || (s.name != "" && e.Object.Name != s.name) || e.Object.Project != s.project {
			t.Errorf("step %d (%s): object %+v, want %s %s in project %q", i, s.field, e.Object, s.kind, s.name, s.project)
		}
		if s.op != "" && (e.OperationName == nil || *e.OperationName != s.op) {
			t.Errorf("step %d (%s): operation %v, want %s", i, s.field, e.OperationName, s.op)
		}
		patch := ""
		if e.Patch != nil {
			patch = *e.Patch
			var ops []map[string]any
			if err := json.Unmarshal([]byte(patch), &ops); err != nil || len(ops) == 0 {
				t.Errorf("step %d (%s): patch is not a JSON patch: %s", i, s.field, patch)
			}
		}
		if s.code != "" && patch != "" {
			t.Errorf("step %d (%s): a refused mutation has a patch: %s", i, s.field, patch)
		}
		for _, want := range s.patchHas {
			if !strings.Contains(patch, want) {
				t.Errorf("step %d (%s): patch lacks %s:\n%s", i, s.field, want, patch)
			}
		}
	}
	// Filters: by user and outcome.
	if got := auditLogOf(t, proxied, "boss-token", map[string]any{"user": "viewer"}); len(got) != 1 || got[0].Mutation != "syncApplication" {
		t.Errorf("entries of viewer: %+v", got)
	}
	if got := auditLogOf(t, proxied, "boss-token", map[string]any{"outcome": "FAILURE"}); len(got) != 2 {
		t.Errorf("failed entries: %+v", got)
	}

	// One Kubernetes Event per entry: on the object, in graphcd's
	// namespace (here ns) for a refused or a malformed one.
	for _, e := range logged {
		where := e.Object.Namespace
		if e.Outcome == "FAILURE" {
			where = ns
		}
		list, err := cluster.Client.EventsV1().Events(where).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ev := range list.Items {
			if ev.Annotations[audit.EventIDAnnotation] != e.ID {
				continue
			}
			n++
			if !strings.Contains(ev.Note, e.User+" "+e.Mutation) || strings.Contains(ev.Note, password) {
				t.Errorf("event of %s: note %q", e.Mutation, ev.Note)
			}
			if e.Outcome == "SUCCESS" && (ev.Regarding.Name != e.Object.Name || ev.Regarding.Kind != e.Object.Kind) {
				t.Errorf("event of %s regards %+v, want %s %s", e.Mutation, ev.Regarding, e.Object.Kind, e.Object.Name)
			}
		}
		if n != 1 {
			t.Errorf("entry %s (%s): %d events in %s, want 1", e.ID, e.Mutation, n, where)
		}
	}
}

// The log keeps its configured size: the oldest entries are dropped.
func TestAuditLogBounded(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	setPolicy(t, ns, "g, boss, role:admin\n")
	tt := tokenTable{"boss-token": {Subject: "boss"}}
	rc := redis.NewClient(&redis.Options{Addr: redisSrv.Addr, Password: redisSrv.Password})
	t.Cleanup(func() { _ = rc.Close() })
	redisStore, err := audit.NewRedis(rc, "graphcd:audit:"+ns, 3, bytes.Repeat([]byte("k"), audit.MinSecret), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, store := range map[string]audit.Store{"memory": audit.NewMemory(3), "redis": redisStore} {
		api := auditAPI(t, ns, tt, &audit.Log{Store: store}, nil)
		app := "bounded-" + name
		data, errs := ask(t, api, "boss-token", createMutation, map[string]any{"m": manifest(ns, app, "graphcd.io/v1alpha1", ""), "upsert": false})
		if len(errs) > 0 {
			t.Fatalf("%s: create: %+v %s", name, errs, data)
		}
		for i := range 4 {
			_, errs := ask(t, api, "boss-token", `mutation($in: RefreshApplicationInput!) { refreshApplication(input: $in) { name } }`,
				map[string]any{"in": map[string]any{"application": map[string]any{"name": app, "namespace": ns}, "hard": i%2 == 0}})
			if len(errs) > 0 {
				t.Fatalf("%s: refresh %d: %+v", name, i, errs)
			}
		}
		got := auditLogOf(t, api, "boss-token", nil)
		if len(got) != 3 {
			t.Fatalf("%s: the log holds %d entries, want 3: %+v", name, len(got), got)
		}
		for _, e := range got {
			if e.Mutation != "refreshApplication" {
				t.Errorf("%s: kept %s, want only the 3 newest (refreshes)", name, e.Mutation)
			}
		}
	}
}

// awaitLive appends probe entries (of project, "" for none) to store
// until the audit subscription on ws delivers one: the subscription is
// then live, and every entry appended later reaches it.
func awaitLive(t *testing.T, ws *wsClient, store audit.Store, project string) {
	t.Helper()
	probing, stopProbe := context.WithCancel(t.Context())
	defer stopProbe()
	go func() {
		for probing.Err() == nil {
			_ = store.Append(probing, &audit.Entry{Time: time.Now(), User: "probe", Field: "probe", Object: audit.Object{Project: project}, Outcome: audit.Success})
			select {
			case <-probing.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	for {
		var got struct{ AuditEvents auditEntry }
		ws.next("audit", &got)
		if got.AuditEvents.User == "probe" {
			return
		}
	}
}
