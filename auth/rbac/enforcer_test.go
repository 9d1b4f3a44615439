package rbac

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// request is one question to an enforcer and its expected answer.
type request struct {
	sub    string
	groups []string
	res    string
	act    string
	obj    string
	want   bool
}

// newTestEnforcer builds an enforcer from ConfigMap data that must be valid.
func newTestEnforcer(t *testing.T, data map[string]string) *Enforcer {
	t.Helper()
	p, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	e, err := NewEnforcer(p)
	if err != nil {
		t.Fatalf("NewEnforcer: %v", err)
	}
	return e
}

func checkRequests(t *testing.T, e *Enforcer, reqs []request) {
	t.Helper()
	for _, r := range reqs {
		// Twice: the second answer comes from the decision cache.
		for range 2 {
			if got := e.Enforce(r.sub, r.groups, r.res, r.act, r.obj); got != r.want {
				t.Errorf("Enforce(%q, %q, %s, %s, %s) = %v, want %v", r.sub, r.groups, r.res, r.act, r.obj, got, r.want)
				break
			}
		}
	}
}

func TestEnforce(t *testing.T) {
	tests := []struct {
		name string
		data map[string]string
		reqs []request
	}{{
		name: "built-in roles",
		data: map[string]string{"policy.csv": "g, alice, role:readonly\ng, ops, role:admin\n"},
		reqs: []request{
			{sub: "alice", res: "applications", act: "get", obj: "default/guestbook", want: true},
			{sub: "alice", res: "applications", act: "get", obj: "default/team-ns/guestbook", want: true},
			{sub: "alice", res: "logs", act: "get", obj: "default/guestbook", want: true},
			{sub: "alice", res: "clusters", act: "get", obj: "https://kubernetes.default.svc", want: true},
			{sub: "alice", res: "applications", act: "sync", obj: "default/guestbook", want: false},
			{sub: "alice", res: "exec", act: "create", obj: "default/guestbook", want: false},
			{sub: "alice", res: "applications", act: "update/apps/Deployment/demo/web", obj: "default/guestbook", want: false},
			{sub: "ops", res: "applications", act: "sync", obj: "default/guestbook", want: true},
			{sub: "ops", res: "applications", act: "delete/*/Pod/demo/web-1", obj: "default/guestbook", want: true},
			{sub: "ops", res: "applications", act: "action/apps/Deployment/restart", obj: "p/a", want: true},
			{sub: "ops", res: "exec", act: "create", obj: "p/a", want: true},
			{sub: "ops", res: "accounts", act: "update", obj: "bob", want: true},
			{sub: "ops", res: "accounts", act: "create", obj: "bob", want: false},
			{sub: "ops", res: "clusters", act: "get", obj: "in-cluster", want: true},
			{sub: "admin", res: "projects", act: "delete", obj: "default", want: true},
			// Argo CD's admin may do anything to applications, actions
			// graphcd has no name for included.
			{sub: "ops", res: "applications", act: "rollback", obj: "default/guestbook", want: true},
			{sub: "admin", res: "applications", act: "some-future-action", obj: "default/ns/guestbook", want: true},
			{sub: "alice", res: "applications", act: "rollback", obj: "default/guestbook", want: false},
			{sub: "ops", res: "exec", act: "debug", obj: "p/a", want: true},
			{sub: "ops", res: "write-repositories", act: "create", obj: "https://git.example.com/x.git", want: true},
			{sub: "alice", res: "write-repositories", act: "get", obj: "https://git.example.com/x.git", want: true},
			{sub: "ops", res: "clusters", act: "some-future-action", obj: "in-cluster", want: false},
			// A resource nobody knows is refused, not an error.
			{sub: "ops", res: "widgets", act: "get", obj: "x", want: false},
			{sub: "ops", res: "", act: "", obj: "", want: false},
			{sub: "mallory", res: "applications", act: "get", obj: "default/guestbook", want: false},
			{sub: "", res: "applications", act: "get", obj: "default/guestbook", want: false},
		},
	}, {
		name: "a team may sync the apps of one project only",
		data: map[string]string{"policy.csv": `
# team-alpha syncs my-project, nothing else
p, my-org:team-alpha, applications, sync, my-project/*, allow
p, my-org:team-alpha, applications, get, my-project/*, allow
`},
		reqs: []request{
			{sub: "carol", groups: []string{"my-org:team-alpha"}, res: "applications", act: "sync", obj: "my-project/web", want: true},
			{sub: "carol", groups: []string{"other", "my-org:team-alpha"}, res: "applications", act: "sync", obj: "my-project/ns/web", want: true},
			{sub: "carol", groups: []string{"my-org:team-alpha"}, res: "applications", act: "sync", obj: "other-project/web", want: false},
			{sub: "carol", groups: []string{"my-org:team-alpha"}, res: "applications", act: "sync", obj: "my-project-2/web", want: false},
			{sub: "carol", groups: []string{"my-org:team-alpha"}, res: "applications", act: "delete", obj: "my-project/web", want: false},
			{sub: "carol", groups: []string{"my-org:team-beta"}, res: "applications", act: "sync", obj: "my-project/web", want: false},
			{sub: "my-org:team-alpha", res: "applications", act: "get", obj: "my-project/web", want: true},
		},
	}, {
		name: "deny wins within a subject's roles",
		data: map[string]string{"policy.csv": `
p, role:dev, applications, *, */*, allow
p, role:dev, applications, delete, default/prod-app, deny
p, role:dev, applications, sync, prod/*, deny
g, dev-team, role:dev
g, dave, role:dev
p, dave, applications, sync, prod/hotfix, allow
`},
		reqs: []request{
			{sub: "erin", groups: []string{"dev-team"}, res: "applications", act: "delete", obj: "default/other-app", want: true},
			{sub: "erin", groups: []string{"dev-team"}, res: "applications", act: "delete", obj: "default/prod-app", want: false},
			{sub: "erin", groups: []string{"dev-team"}, res: "applications", act: "sync", obj: "prod/web", want: false},
			{sub: "dave", res: "applications", act: "sync", obj: "prod/hotfix", want: false},
			{sub: "dave", res: "applications", act: "get", obj: "prod/hotfix", want: true},
		},
	}, {
		name: "glob stars cross slashes",
		data: map[string]string{"policy.csv": `
p, role:viewer, applications, get, */*, allow
p, role:ns, applications, sync, team-*/ns-a/*, allow
p, role:any, applications, get, *, allow
p, role:alt, applications, "{get,sync}", demo/app-?, allow
p, role:cls, clusters, get, https://*.example.com, allow
g, v, role:viewer
g, n, role:ns
g, a, role:any
g, l, role:alt
g, c, role:cls
`},
		reqs: []request{
			{sub: "v", res: "applications", act: "get", obj: "proj/ns/app", want: true},
			{sub: "v", res: "applications", act: "get", obj: "app", want: false},
			{sub: "n", res: "applications", act: "sync", obj: "team-x/ns-a/web", want: true},
			{sub: "n", res: "applications", act: "sync", obj: "team-x/y/ns-a/web", want: true},
			{sub: "n", res: "applications", act: "sync", obj: "team-x/ns-b/web", want: false},
			{sub: "a", res: "applications", act: "get", obj: "p/n/a", want: true},
			{sub: "l", res: "applications", act: "sync", obj: "demo/app-1", want: true},
			{sub: "l", res: "applications", act: "sync", obj: "demo/app-12", want: false},
			{sub: "l", res: "applications", act: "delete", obj: "demo/app-1", want: false},
			{sub: "c", res: "clusters", act: "get", obj: "https://east.example.com", want: true},
			{sub: "c", res: "clusters", act: "get", obj: "https://east.example.com.evil", want: false},
		},
	}, {
		name: "regex mode",
		data: map[string]string{
			"policy.matchMode": "regex",
			"policy.csv": `
p, role:re, applications, (get|sync), ^team-[0-9]+/.*$, allow
p, role:re, applications, get, "prod/app-[a-z]{1,3}", allow
g, r, role:re
`,
		},
		reqs: []request{
			{sub: "r", res: "applications", act: "sync", obj: "team-42/web", want: true},
			{sub: "r", res: "applications", act: "delete", obj: "team-42/web", want: false},
			{sub: "r", res: "applications", act: "sync", obj: "team-x/web", want: false},
			{sub: "r", res: "applications", act: "get", obj: "prod/app-ab", want: true},
			{sub: "r", res: "applications", act: "get", obj: "prod/app-abcd", want: false},
			{sub: "r", res: "applications", act: "get", obj: "xprod/app-ab", want: false},
			// built-in roles still work in regex mode
			{sub: "admin", res: "applications", act: "sync", obj: "x/y", want: true},
			{sub: "admin", res: "applications", act: "update/apps/Deployment/ns/web", obj: "x/ns/y", want: true},
			{sub: "admin", res: "clusters", act: "get", obj: "https://c", want: true},
			{sub: "admin", res: "accounts", act: "create", obj: "bob", want: false},
		},
	}, {
		name: "default role cannot be denied",
		data: map[string]string{
			"policy.default": "role:readonly",
			"policy.csv":     "p, frank, applications, get, secret/*, deny\n",
		},
		reqs: []request{
			{sub: "anyone", res: "applications", act: "get", obj: "default/web", want: true},
			{sub: "anyone", res: "applications", act: "sync", obj: "default/web", want: false},
			{sub: "frank", res: "applications", act: "get", obj: "secret/web", want: true},
		},
	}, {
		name: "fine-grained update and delete",
		data: map[string]string{"policy.csv": `
p, role:app-owner, applications, update, default/*, allow
p, role:pod-killer, applications, delete/*/Pod/*/*, default/prod-app, allow
p, role:sub-editor, applications, update/*, default/*, allow
p, role:sub-editor, applications, update/apps/Deployment/*, default/locked, deny
g, o, role:app-owner
g, k, role:pod-killer
g, s, role:sub-editor
`},
		reqs: []request{
			{sub: "o", res: "applications", act: "update", obj: "default/web", want: true},
			{sub: "o", res: "applications", act: SubresourceAction("update", "apps", "Deployment", "demo", "web"), obj: "default/web", want: false},
			{sub: "k", res: "applications", act: SubresourceAction("delete", "", "Pod", "demo", "web-1"), obj: "default/prod-app", want: true},
			{sub: "k", res: "applications", act: SubresourceAction("delete", "apps", "Deployment", "demo", "web"), obj: "default/prod-app", want: false},
			{sub: "k", res: "applications", act: "delete", obj: "default/prod-app", want: false},
			{sub: "k", res: "applications", act: SubresourceAction("delete", "", "Pod", "demo", "web-1"), obj: "default/other", want: false},
			{sub: "s", res: "applications", act: SubresourceAction("update", "", "ConfigMap", "demo", "cfg"), obj: "default/web", want: true},
			{sub: "s", res: "applications", act: "update", obj: "default/web", want: false},
			{sub: "s", res: "applications", act: SubresourceAction("update", "apps", "Deployment", "demo", "web"), obj: "default/locked", want: false},
			{sub: "s", res: "applications", act: SubresourceAction("update", "", "Service", "demo", "web"), obj: "default/locked", want: true},
		},
	}, {
		name: "policy.<name>.csv keys add to policy.csv",
		data: map[string]string{
			"policy.csv":      "g, gina, role:deployer\n",
			"policy.b.csv":    "p, role:deployer, applications, sync, */*, allow\n",
			"policy.a.csv":    "p, role:deployer, applications, sync, prod/*, deny\n",
			"policy.whatever": "p, gina, clusters, delete, *, allow\n", // not a .csv key: ignored
		},
		reqs: []request{
			{sub: "gina", res: "applications", act: "sync", obj: "dev/web", want: true},
			{sub: "gina", res: "applications", act: "sync", obj: "prod/web", want: false},
			{sub: "gina", res: "clusters", act: "delete", obj: "c", want: false},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRequests(t, newTestEnforcer(t, tt.data), tt.reqs)
		})
	}
}

// Groups come from the claims named by scopes.
func TestGroupsFromSSOToken(t *testing.T) {
	e := newTestEnforcer(t, map[string]string{
		"scopes":     "[groups, email]",
		"policy.csv": "g, my-org:team-beta, role:admin\ng, ann@example.com, role:readonly\n",
	})
	claims := map[string]any{
		"sub":    "CiQ0NTY",
		"email":  "ann@example.com",
		"groups": []any{"my-org:everyone", "my-org:team-beta", 42},
	}
	groups := GroupsFromClaims(claims, e.Scopes())
	if diff := cmp.Diff(groups, []string{"my-org:everyone", "my-org:team-beta", "ann@example.com"}); diff != "" {
		t.Errorf("groups (-got +want):\n%s", diff)
	}
	if !e.Enforce("CiQ0NTY", groups, ResourceClusters, ActionDelete, "c") {
		t.Error("a member of my-org:team-beta should be an admin")
	}
	if e.Enforce("CiQ0NTY", GroupsFromClaims(map[string]any{"email": "ann@example.com"}, e.Scopes()), ResourceClusters, ActionDelete, "c") {
		t.Error("ann alone is only a reader")
	}
	if got := GroupsFromClaims(map[string]any{"groups": "single"}, []string{"groups"}); !cmp.Equal(got, []string{"single"}) {
		t.Errorf("a string claim: got %q", got)
	}
}

func TestProjectRoles(t *testing.T) {
	e := newTestEnforcer(t, map[string]string{"policy.csv": "p, role:x, applications, get, other/*, allow\n"})
	roles := []v1alpha1.ProjectRole{{
		Name: "deployer",
		Policies: []string{
			"p, proj:my-project:deployer, applications, sync, my-project/*, allow",
			"p, proj:my-project:deployer, applications, get, my-project/*, allow",
			"p, proj:my-project:deployer, applications, sync, my-project/frozen, deny",
			"p, proj:my-project:deployer, projects, get, my-project, allow",
			// each of these is refused: another project, another subject, a global resource
			"p, proj:my-project:deployer, applications, sync, other-project/*, allow",
			"p, proj:my-project:deployer, applications, sync, *, allow",
			"p, proj:my-project:deployer, applications, sync, my-project*, allow",
			"p, proj:other:deployer, applications, sync, my-project/*, allow",
			"p, proj:my-project:deployer, clusters, get, *, allow",
			"p, proj:my-project:deployer, applications, sync, my-project/a/b/c, allow",
		},
		Groups: []string{"my-org:deployers"},
	}}
	err := e.SetProjectRoles("my-project", roles)
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Lines) != 6 {
		t.Fatalf("SetProjectRoles error = %v, want 6 invalid lines", err)
	}
	for i, l := range ve.Lines {
		if l.Key != "project my-project role deployer" || l.Line != i+5 {
			t.Errorf("error %d names %s, want line %d of the role", i, l.Source, i+5)
		}
	}
	sub := ProjectRoleSubject("my-project", "deployer")
	checkRequests(t, e, []request{
		{sub: sub, res: "applications", act: "sync", obj: "my-project/web", want: true},
		{sub: sub, res: "applications", act: "sync", obj: "my-project/ns/web", want: true},
		{sub: sub, res: "applications", act: "sync", obj: "my-project/frozen", want: false},
		{sub: sub, res: "applications", act: "sync", obj: "other-project/web", want: false},
		{sub: sub, res: "clusters", act: "get", obj: "c", want: false},
		{sub: sub, res: "projects", act: "get", obj: "my-project", want: true},
		{sub: "hank", groups: []string{"my-org:deployers"}, res: "applications", act: "sync", obj: "my-project/web", want: true},
		{sub: "hank", groups: []string{"my-org:deployers"}, res: "applications", act: "sync", obj: "other/web", want: false},
		{sub: "hank", res: "applications", act: "sync", obj: "my-project/web", want: false},
	})

	// Replacing the roles drops the old ones, cached decisions included.
	if err := e.SetProjectRoles("my-project", []v1alpha1.ProjectRole{{Name: "viewer", Policies: []string{
		"p, proj:my-project:viewer, applications, get, my-project/*, allow",
	}}}); err != nil {
		t.Fatalf("SetProjectRoles: %v", err)
	}
	checkRequests(t, e, []request{
		{sub: sub, res: "applications", act: "sync", obj: "my-project/web", want: false},
		{sub: "hank", groups: []string{"my-org:deployers"}, res: "applications", act: "sync", obj: "my-project/web", want: false},
		{sub: ProjectRoleSubject("my-project", "viewer"), res: "applications", act: "get", obj: "my-project/web", want: true},
	})
	e.RemoveProject("my-project")
	checkRequests(t, e, []request{
		{sub: ProjectRoleSubject("my-project", "viewer"), res: "applications", act: "get", obj: "my-project/web", want: false},
	})
}

// In regex mode a project name's "." is literal, so a role cannot reach
// a project whose name merely matches its own as a regex.
func TestProjectRolesRegexQuotesProject(t *testing.T) {
	e := newTestEnforcer(t, map[string]string{"policy.matchMode": "regex"})
	if err := e.SetProjectRoles("team.a", []v1alpha1.ProjectRole{{Name: "r", Policies: []string{
		"p, proj:team.a:r, applications, get, team.a/.*, allow",
	}}}); err != nil {
		t.Fatal(err)
	}
	sub := ProjectRoleSubject("team.a", "r")
	checkRequests(t, e, []request{
		{sub: sub, res: "applications", act: "get", obj: "team.a/web", want: true},
		{sub: sub, res: "applications", act: "get", obj: "teamXa/web", want: false},
	})
}

// A project role may create, update, delete and get the repositories and
// clusters scoped to its project, whose objects are "<project>/<url>", as
// in Argo CD; never the global ones or another project's, in either match
// mode.
func TestProjectRolesScopedRepositories(t *testing.T) {
	for _, tc := range []struct {
		mode, any, pattern, narrow string
		// invalid are refused; confined is accepted but matches only
		// inside the project.
		invalid  []string
		confined string
	}{
		{mode: "glob", any: "*", pattern: "team/*", narrow: "team/https://git.example.com/team/*",
			invalid: []string{"team*", "*", "other/*", "team/"}, confined: "team/*app"},
		{mode: "regex", any: ".*", pattern: "team/.*", narrow: "team/https://git\\.example\\.com/team/.*",
			invalid: []string{"team/a)|(.*", ".*", "other/.*"}, confined: "team/a|.*"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			e := newTestEnforcer(t, map[string]string{"policy.matchMode": tc.mode})
			policies := []string{
				"p, proj:team:admin, repositories, " + tc.any + ", " + tc.pattern + ", allow",
				"p, proj:team:admin, clusters, get, " + tc.pattern + ", allow",
				"p, proj:team:narrow, repositories, create, " + tc.narrow + ", allow",
			}
			err := e.SetProjectRoles("team", []v1alpha1.ProjectRole{
				{Name: "admin", Policies: policies[:2]},
				{Name: "narrow", Policies: policies[2:3]},
				{Name: "escape", Policies: escapeLines(append(tc.invalid, tc.confined))},
			})
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Lines) != len(tc.invalid) {
				t.Fatalf("SetProjectRoles error = %v, want %d invalid lines", err, len(tc.invalid))
			}
			admin, narrow, escape := ProjectRoleSubject("team", "admin"), ProjectRoleSubject("team", "narrow"), ProjectRoleSubject("team", "escape")
			repo := "https://git.example.com/team/app"
			checkRequests(t, e, []request{
				{sub: admin, res: "repositories", act: "create", obj: ScopedObject("team", repo), want: true},
				{sub: admin, res: "repositories", act: "delete", obj: ScopedObject("team", repo), want: true},
				{sub: admin, res: "clusters", act: "get", obj: ScopedObject("team", "https://k8s.example.com"), want: true},
				{sub: admin, res: "clusters", act: "create", obj: ScopedObject("team", "https://k8s.example.com"), want: false},
				{sub: admin, res: "repositories", act: "create", obj: ScopedObject("", repo), want: false},
				{sub: admin, res: "repositories", act: "create", obj: ScopedObject("other", repo), want: false},
				{sub: admin, res: "repositories", act: "create", obj: ScopedObject("team-b", repo), want: false},
				{sub: narrow, res: "repositories", act: "create", obj: ScopedObject("team", repo), want: true},
				{sub: narrow, res: "repositories", act: "create", obj: ScopedObject("team", "https://github.com/x/y"), want: false},
				{sub: escape, res: "repositories", act: "get", obj: ScopedObject("other", repo), want: false},
				{sub: escape, res: "repositories", act: "get", obj: repo, want: false},
				{sub: escape, res: "repositories", act: "get", obj: ScopedObject("team", repo), want: true},
			})
		})
	}
}

func escapeLines(objs []string) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = "p, proj:team:escape, repositories, get, " + o + ", allow"
	}
	return out
}

func TestParseInvalidLines(t *testing.T) {
	data := map[string]string{
		"policy.csv": `p, alice, applications, get, */*, allow
p, alice, aplications, get, */*, allow
p, alice, applications, get, */*, maybe
p, alice, applications, get
g, bob
x, bob, role:admin
p, alice, applications, fly, */*, allow
p, alice, applications, get, "unterminated, allow
p, alice, applications, get, [abc, allow
p, , applications, get, */*, allow
g, bob, role:readonly
`,
		"policy.extra.csv": "\n\ng, carol, carol\n",
	}
	p, err := Parse(data)
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Parse error = %v, want a *ValidationError", err)
	}
	var got []string
	for _, l := range ve.Lines {
		got = append(got, l.Error())
	}
	want := []string{
		`policy.csv line 2: unknown resource "aplications" (want one of ` + strings.Join(Resources, ", ") + `)`,
		`policy.csv line 3: effect "maybe" is not allow or deny`,
		`policy.csv line 4: a p line has 6 fields (p, subject, resource, action, object, effect), this one has 4`,
		`policy.csv line 5: a g line has 3 fields (g, subject, role), this one has 2`,
		`policy.csv line 6: line type "x" is not p or g`,
		`policy.csv line 7: unknown action "fly" (want get, create, update, delete, sync, override, approve, approve-on-behalf, action/<group>/<kind>/<name>, update/... or delete/...)`,
		`policy.csv line 8: not a CSV line: extraneous or missing " in quoted-field`,
		`policy.csv line 9: pattern "[abc": unclosed [`,
		`policy.csv line 10: subject is empty`,
		`policy.extra.csv line 3: binds a subject to itself`,
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("errors (-got +want):\n%s", diff)
	}
	// The valid lines still load: the policy never falls open or shut as a whole.
	if len(p.Rules) != 1 || len(p.Bindings) != 1 {
		t.Fatalf("valid lines: %d rules, %d bindings; want 1 and 1", len(p.Rules), len(p.Bindings))
	}
	e, err := NewEnforcer(p)
	if err != nil {
		t.Fatal(err)
	}
	checkRequests(t, e, []request{
		{sub: "alice", res: "applications", act: "get", obj: "p/a", want: true},
		{sub: "bob", res: "clusters", act: "get", obj: "c", want: true},
		{sub: "bob", res: "clusters", act: "delete", obj: "c", want: false},
	})
}

func TestParseSettings(t *testing.T) {
	for _, tt := range []struct {
		data    map[string]string
		wantErr string
		mode    MatchMode
		scopes  []string
	}{
		{data: nil, mode: MatchGlob, scopes: []string{"groups"}},
		{data: map[string]string{"policy.matchMode": "regex", "scopes": "[email]"}, mode: MatchRegex, scopes: []string{"email"}},
		{data: map[string]string{"scopes": `["groups", 'email']`}, mode: MatchGlob, scopes: []string{"groups", "email"}},
		{data: map[string]string{"policy.matchMode": "prefix"}, wantErr: `policy.matchMode: "prefix" is not glob or regex`},
		{data: map[string]string{"scopes": "[groups"}, wantErr: `scopes: "[groups": want a list such as [groups, email]`},
		{data: map[string]string{"scopes": "[,]"}, wantErr: `scopes: no claim names`},
	} {
		p, err := Parse(tt.data)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr || p != nil {
				t.Errorf("Parse(%v) = %v, %v; want error %q and no policy", tt.data, p, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%v): %v", tt.data, err)
			continue
		}
		if p.MatchMode != tt.mode || !cmp.Equal(p.Scopes, tt.scopes) {
			t.Errorf("Parse(%v): mode %q scopes %q; want %q %q", tt.data, p.MatchMode, p.Scopes, tt.mode, tt.scopes)
		}
	}
}

func TestGlobToRegexp(t *testing.T) {
	for _, tt := range []struct {
		glob, in string
		want     bool
	}{
		{"a*b", "a/x/b", true},
		{"a?b", "a/b", true},
		{"a?b", "ab", false},
		{"[!a]x", "bx", true},
		{"[!a]x", "ax", false},
		{"[a-c]x", "bx", true},
		{"[a-c]x", "-x", false},
		{"[]x]", "]", false},
		{"{a,b}/*", "b/c", true},
		{"{a,b}/*", "c/c", false},
		{"a.b", "axb", false},
		{`a\*`, "a*", true},
		{`a\*`, "ab", false},
		{"x(y)+", "x(y)+", true},
	} {
		m, err := compilePattern(tt.glob, MatchGlob)
		if err != nil {
			if tt.want {
				t.Errorf("%q: %v", tt.glob, err)
			}
			continue
		}
		if got := m.match(tt.in); got != tt.want {
			t.Errorf("glob %q on %q = %v, want %v", tt.glob, tt.in, got, tt.want)
		}
	}
}

// policyOfSize is a policy of n lines in the shape of a large real one:
// per-team roles with allows, a deny, and group bindings.
func policyOfSize(n int) string {
	var b strings.Builder
	for i := 0; b.Len() == 0 || strings.Count(b.String(), "\n") < n; i++ {
		fmt.Fprintf(&b, "p, role:team-%d, applications, sync, project-%d/*, allow\n", i, i)
		fmt.Fprintf(&b, "p, role:team-%d, applications, get, project-%d/*, allow\n", i, i)
		fmt.Fprintf(&b, "p, role:team-%d, applications, delete, project-%d/prod-*, deny\n", i, i)
		fmt.Fprintf(&b, "g, org:team-%d, role:team-%d\n", i, i)
	}
	return b.String()
}

func BenchmarkEnforce(b *testing.B) {
	p, err := Parse(map[string]string{"policy.csv": policyOfSize(1000), "policy.default": "role:none"})
	if err != nil {
		b.Fatal(err)
	}
	groups := []string{"org:everyone", "org:team-120"}
	b.Run("cached", func(b *testing.B) {
		e, err := NewEnforcer(p)
		if err != nil {
			b.Fatal(err)
		}
		if !e.Enforce("alice", groups, "applications", "sync", "project-120/web") {
			b.Fatal("want allowed")
		}
		b.ReportAllocs()
		for b.Loop() {
			e.Enforce("alice", groups, "applications", "sync", "project-120/web")
		}
	})
	b.Run("uncached", func(b *testing.B) {
		e, err := NewEnforcer(p)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			e.Enforce("alice", groups, "applications", "sync", fmt.Sprintf("project-120/web-%d", i))
		}
	})
	// The admin account inherits the 40-odd built-in rules.
	b.Run("uncached-admin", func(b *testing.B) {
		e, err := NewEnforcer(p)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			e.Enforce("admin", nil, "applications", "sync", fmt.Sprintf("project-120/web-%d", i))
		}
	})
}

// Decisions and project role changes may interleave; run with -race.
func TestEnforceConcurrentWithProjectRoles(t *testing.T) {
	e := newTestEnforcer(t, nil)
	sub := ProjectRoleSubject("p", "r")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			act := []string{"get", "sync"}[i%2]
			if err := e.SetProjectRoles("p", []v1alpha1.ProjectRole{{Name: "r", Policies: []string{
				"p, " + sub + ", applications, " + act + ", p/*, allow",
			}}}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := 0; ; i++ {
		select {
		case <-done:
			// The last version allows sync only; no stale decision survives.
			checkRequests(t, e, []request{
				{sub: sub, res: "applications", act: "sync", obj: "p/a", want: true},
				{sub: sub, res: "applications", act: "get", obj: "p/a", want: false},
			})
			return
		default:
			e.Enforce(sub, nil, "applications", "sync", fmt.Sprintf("p/a%d", i%7))
			e.Enforce(sub, nil, "applications", "sync", "p/a")
		}
	}
}

// A subject's view decides as casbin does over the whole policy.
func TestViewsDecideLikeWholePolicy(t *testing.T) {
	e := newTestEnforcer(t, map[string]string{"policy.csv": policyOfSize(200) + `
g, org:team-3, role:team-4
g, role:team-4, role:readonly
p, org:team-3, applications, get, project-4/secret, deny
`})
	subjects := []string{"admin", "role:admin", "org:team-3", "org:team-4", "role:team-5", "nobody"}
	objects := []string{"project-3/web", "project-4/prod-db", "project-4/secret", "project-5/x/y", "c"}
	for _, sub := range subjects {
		for _, res := range []string{"applications", "clusters"} {
			for _, act := range []string{"get", "sync", "delete", "update/apps/Deployment/ns/web"} {
				for _, obj := range objects {
					want, err := e.casbin.Enforce(sub, res, act, obj)
					if err != nil {
						t.Fatal(err)
					}
					if got, err := e.decide(sub, res, act, obj); err != nil || got != want {
						t.Errorf("decide(%s, %s, %s, %s) = %v, %v; whole policy says %v", sub, res, act, obj, got, err, want)
					}
				}
			}
		}
	}
}

// The short names Argo CD's `admin settings rbac can` accepts resolve to
// graphcd's resources, ApplicationSets' included.
func TestResolveResourceName(t *testing.T) {
	for short, want := range map[string]string{
		"app": ResourceApplications, "appset": ResourceApplicationSets, "appsets": ResourceApplicationSets,
		"applicationset": ResourceApplicationSets, "applicationsets": ResourceApplicationSets, "proj": ResourceProjects,
	} {
		if got := ResolveResourceName(short); got != want {
			t.Errorf("ResolveResourceName(%q) = %q, want %q", short, got, want)
		}
	}
}
