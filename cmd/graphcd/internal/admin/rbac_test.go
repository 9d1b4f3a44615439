package admin

import (
	"strings"
	"testing"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

// admin rbac can answers from an Argo CD argocd-rbac-cm as it is: yes
// exits 0, no exits 1, an error exits 2.
func TestAdminRBACCan(t *testing.T) {
	const cm = "testdata/rbac/argocd-rbac-cm.yaml"
	for _, tt := range []struct {
		name string
		args []string
		code int
	}{
		{"group syncs its project", []string{"alice", "sync", "applications", "payments/api", "--groups", "my-org:everyone,my-org:team-alpha"}, command.ExitOK},
		{"group syncs an app in a namespace", []string{"alice", "sync", "applications", "payments/team-ns/api", "--groups", "my-org:team-alpha"}, command.ExitOK},
		{"without the group", []string{"alice", "sync", "applications", "payments/api"}, command.ExitError},
		{"group cannot sync another project", []string{"alice", "sync", "applications", "shop/api", "--groups", "my-org:team-alpha"}, command.ExitError},
		{"deny wins", []string{"alice", "sync", "applications", "payments/ledger", "--groups", "my-org:team-alpha"}, command.ExitError},
		{"group bound to role:admin", []string{"bob", "delete", "clusters", "https://prod.example.com", "--groups", "my-org:team-beta"}, command.ExitOK},
		{"fine-grained delete from policy.sre.csv", []string{"sre-oncall", "delete//Pod/shop/web-1", "applications", "shop/web"}, command.ExitOK},
		{"fine-grained delete is not update", []string{"sre-oncall", "update//Pod/shop/web-1", "applications", "shop/web"}, command.ExitError},
		{"built-in admin", []string{"admin", "override", "applications", "shop/web"}, command.ExitOK},
		{"no default role", []string{"nobody", "get", "applications", "shop/web"}, command.ExitError},
		{"--default-role", []string{"nobody", "get", "applications", "shop/web", "--default-role", "role:readonly"}, command.ExitOK},
		{"--default-role does not grant writes", []string{"nobody", "sync", "applications", "shop/web", "--default-role", "role:readonly"}, command.ExitError},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"admin", "rbac", "can"}, tt.args...)
			code, stdout, stderr := runCLI(t, nil, append(args, "--rbac-config", cm)...)
			want := map[int]string{command.ExitOK: "yes\n", command.ExitError: "no\n"}[tt.code]
			if code != tt.code || stdout != want || stderr != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and %q", code, stdout, stderr, tt.code, want)
			}
		})
	}
}

func TestAdminRBACCanPolicyFile(t *testing.T) {
	for _, tt := range []struct {
		obj  string
		code int
	}{{"https://dev.example.com", command.ExitOK}, {"https://prod.example.com", command.ExitError}} {
		code, stdout, _ := runCLI(t, nil, "admin", "rbac", "can", "carol", "delete", "clusters", tt.obj, "--policy-file", "testdata/rbac/extra-policy.csv")
		if code != tt.code {
			t.Errorf("%s: exit %d (%q), want %d", tt.obj, code, stdout, tt.code)
		}
	}
}

func TestAdminRBACCanErrors(t *testing.T) {
	for _, tt := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"missing file", []string{"alice", "get", "applications", "p/a", "--rbac-config", "testdata/rbac/missing.yaml"}, "missing.yaml"},
		{"not a ConfigMap", []string{"alice", "get", "applications", "p/a", "--rbac-config", "testdata/health-objects.yaml"}, `kind is "Deployment", want ConfigMap`},
		{"too few arguments", []string{"alice", "get"}, "takes SUBJECT ACTION RESOURCE [OBJECT], got 2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, nil, append([]string{"admin", "rbac", "can"}, tt.args...)...)
			if code != command.ExitUsage || stdout != "" || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, stdout, stderr, tt.stderr)
			}
		})
	}
}

// can answers as Argo CD's does for what Argo CD accepts: its short
// resource names, an object left out, every action of the built-in admin
// on applications (ones graphcd does not define included), and, for a
// resource nobody knows, the policy's answer (no, unless a rule's pattern
// covers it) with a warning.
func TestAdminRBACCanArgoCompatible(t *testing.T) {
	const unknown = `graphcd: warning: unknown resource "widgets" (want one of applications, applicationsets, clusters, repositories, projects, accounts, certificates, gpgkeys, logs, exec, audit); graphcd never asks about it` + "\n"
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"admin rolls back", []string{"role:admin", "rollback", "applications", "shop/web"}, command.ExitOK, ""},
		{"admin does an action graphcd has no name for", []string{"admin", "frobnicate", "applications", "shop/web"}, command.ExitOK, ""},
		{"admin runs a resource action", []string{"admin", "action/apps/Deployment/restart", "applications", "shop/ns/web"}, command.ExitOK, ""},
		{"admin debugs through exec", []string{"role:admin", "debug", "exec", "shop/web"}, command.ExitOK, ""},
		{"admin writes write-repositories", []string{"role:admin", "update", "write-repositories", "https://git.example.com/x.git"}, command.ExitOK, ""},
		{"readonly reads write-repositories", []string{"role:readonly", "get", "write-repositories"}, command.ExitOK, ""},
		{"admin gets no undefined cluster action", []string{"role:admin", "frobnicate", "clusters", "https://c"}, command.ExitError, ""},
		{"admin creates no accounts", []string{"role:admin", "create", "accounts", "bob"}, command.ExitError, ""},
		{"readonly does not roll back", []string{"role:readonly", "rollback", "applications", "shop/web"}, command.ExitError, ""},
		{"short name app", []string{"role:readonly", "get", "app", "shop/web"}, command.ExitOK, ""},
		{"short name application, no object", []string{"role:admin", "sync", "application"}, command.ExitOK, ""},
		{"short name repo, * object", []string{"role:admin", "delete", "repo", "*"}, command.ExitOK, ""},
		{"short name proj", []string{"role:readonly", "delete", "proj", "default"}, command.ExitError, ""},
		{"unknown resource is refused", []string{"role:admin", "get", "widgets", "x"}, command.ExitError, unknown},
		{"unknown resource, answered by the policy", []string{"root", "get", "widgets", "x", "--policy-file", "testdata/rbac/root-policy.csv"}, command.ExitOK, unknown},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, nil, append([]string{"admin", "rbac", "can"}, tt.args...)...)
			want := map[int]string{command.ExitOK: "yes\n", command.ExitError: "no\n"}[tt.code]
			if code != tt.code || stdout != want || stderr != tt.stderr {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q and %q", code, stdout, stderr, tt.code, want, tt.stderr)
			}
		})
	}
}

// Invalid lines are warned about and left out; the rest still decides.
func TestAdminRBACCanWithInvalidLines(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "admin", "rbac", "can", "alice", "get", "applications", "p/a", "--rbac-config", "testdata/rbac/bad-rbac-cm.yaml")
	if code != command.ExitOK || stdout != "yes\n" || strings.Count(stderr, "warning:") != 3 {
		t.Errorf("exit %d, stdout %q, stderr %q; want yes and 3 warnings", code, stdout, stderr)
	}
}

func TestAdminRBACValidate(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "admin", "rbac", "validate", "--rbac-config", "testdata/rbac/bad-rbac-cm.yaml")
	want := `testdata/rbac/bad-rbac-cm.yaml:8: policy.csv line 2: unknown resource "aplications" (want one of applications, applicationsets, clusters, repositories, projects, accounts, certificates, gpgkeys, logs, exec, audit)
testdata/rbac/bad-rbac-cm.yaml:10: policy.csv line 4: effect "perhaps" is not allow or deny
testdata/rbac/bad-rbac-cm.yaml:11: policy.csv line 5: a g line has 3 fields (g, subject, role), this one has 2
`
	if code != command.ExitError || stdout != want || !strings.Contains(stderr, "3 invalid policy line(s)") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant exit 1 and:\n%s", code, stderr, stdout, want)
	}
	if code, stdout, _ := runCLI(t, nil, "admin", "rbac", "validate", "--rbac-config", "testdata/rbac/argocd-rbac-cm.yaml", "--policy-file", "testdata/rbac/extra-policy.csv"); code != command.ExitOK || stdout != "policy is valid\n" {
		t.Errorf("valid policy: exit %d, stdout %q", code, stdout)
	}
	if code, _, stderr := runCLI(t, nil, "admin", "rbac", "validate"); code != command.ExitUsage || !strings.Contains(stderr, "--rbac-config") {
		t.Errorf("no policy: exit %d, stderr %q; want a usage error", code, stderr)
	}
}

// Project roles from AppProject manifests: their tokens' subject and their
// groups get the role's rights in the project, never outside it.
func TestAdminRBACCanProjectRoles(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"proj:payments:deployer", "sync", "applications", "payments/api"}, command.ExitOK},
		{[]string{"proj:payments:deployer", "sync", "applications", "shop/api"}, command.ExitError},
		{[]string{"ci-bot", "sync", "applications", "payments/ns/api", "--groups", "my-org:payments-ci"}, command.ExitOK},
		{[]string{"ci-bot", "delete", "applications", "payments/api", "--groups", "my-org:payments-ci"}, command.ExitError},
	} {
		args := append([]string{"admin", "rbac", "can"}, tt.args...)
		code, stdout, stderr := runCLI(t, nil, append(args, "--projects", "testdata/rbac/appprojects.yaml")...)
		if code != tt.code || !strings.Contains(stderr, "warning: testdata/rbac/appprojects.yaml: project payments role deployer line 3") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d and a warning for line 3", tt.args, code, stdout, stderr, tt.code)
		}
	}
	code, stdout, _ := runCLI(t, nil, "admin", "rbac", "validate", "--projects", "testdata/rbac/appprojects.yaml")
	if want := "testdata/rbac/appprojects.yaml: project payments role deployer line 3: object must be payments/<app>, payments/<namespace>/<app> or payments/*\n"; code != command.ExitError || stdout != want {
		t.Errorf("validate: exit %d, stdout %q; want 1 and %q", code, stdout, want)
	}
}
