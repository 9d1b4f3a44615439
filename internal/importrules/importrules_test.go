package importrules

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/graphcd/graphcd/"

// A pattern names a package ("controller") or a package and everything
// below it ("controller/..."). Patterns without a dot in their first
// element are graphcd's; others ("helm.sh/...") are outside modules.
type pattern string

func (p pattern) path() string {
	s := strings.TrimSuffix(string(p), "/...")
	if first, _, _ := strings.Cut(s, "/"); !strings.Contains(first, ".") {
		return module + s
	}
	return s
}

func (p pattern) matches(pkg string) bool {
	base := p.path()
	if strings.HasSuffix(string(p), "/...") {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == base
}

func anyMatch(ps []pattern, pkg string) bool {
	for _, p := range ps {
		if p.matches(pkg) {
			return true
		}
	}
	return false
}

func stdlib(pkg string) bool {
	first, _, _ := strings.Cut(pkg, "/")
	return !strings.Contains(first, ".")
}

// rule constrains the packages that match pkgs.
type rule struct {
	pkgs pattern
	// imports, when set, lists all a package may import directly besides
	// the standard library.
	imports []pattern
	// graphcd, when set, lists all of graphcd a package may depend on,
	// directly or not (itself aside).
	graphcd []pattern
	// never lists what a package may not depend on, directly or not.
	never []pattern
	why   string
}

var rules = []rule{
	{pkgs: "api/...", imports: []pattern{"k8s.io/apimachinery/..."},
		why: "every graphcd package and outside programs import the API types"},
	{pkgs: "internal/appstate", imports: []pattern{"k8s.io/apimachinery/...", "github.com/redis/go-redis/...", "api/v1alpha1", "internal/keysign"},
		why: "the state the controller writes and the API reads leaks neither side's internals"},
	{pkgs: "internal/keysign", graphcd: []pattern{},
		why: "signing what graphcd keeps in Redis is a leaf its stores share"},
	{pkgs: "internal/wellknown", imports: []pattern{},
		why: "the shared names are a leaf every layer may import"},
	{pkgs: "internal/repourl", imports: []pattern{},
		why: "a repository URL's identity is a leaf every layer compares with"},
	{pkgs: "internal/secretcodec", graphcd: []pattern{"internal/wellknown"},
		why: "the one codec of repository and cluster Secrets is a leaf their readers and writers share"},
	{pkgs: "internal/settings", never: []pattern{"controller/...", "resolvers/...", "graph/...", "reposerver/..."},
		why: "every layer reads the settings; the controller turns them into the engines' options"},
	{pkgs: "internal/clusters", never: []pattern{"controller/...", "resolvers/...", "graph/...", "reposerver/..."},
		why: "the controller and the API both read the cluster Secrets"},
	{pkgs: "apiserver/catalog", never: []pattern{"controller/...", "resolvers/..."},
		why: "the API's reads know neither the reconciler nor the resolvers"},
	{pkgs: "controller/engineopts", graphcd: []pattern{"api/v1alpha1", "controller/actions", "controller/diff", "controller/health", "internal/settings"},
		why: "the engines' options from the settings: above the engines and the settings, below their users"},
	{pkgs: "internal/migration", never: []pattern{"controller/...", "resolvers/...", "graph/...", "reposerver/...", "apiserver/..."},
		why: "converting Argo CD's objects is data in, data out: the command passes graphcd's names in"},
	{pkgs: "internal/approval", graphcd: []pattern{"api/v1alpha1"},
		why: "the controller holds syncs and the API records approvals by the same rules, which know neither"},
	{pkgs: "internal/eventbus", graphcd: []pattern{},
		why: "the event bus sits between the controller and the resolvers and knows neither"},
	{pkgs: "controller/diff", graphcd: []pattern{},
		why: "the diff engine is a leaf"},
	{pkgs: "controller/health", graphcd: []pattern{"api/v1alpha1"},
		why: "the health engine is a leaf"},
	{pkgs: "controller/actions", graphcd: []pattern{"api/v1alpha1", "controller/health"},
		why: "the actions engine runs on the health engine's Lua and serves the API as well as the CLI, so it knows no sync engine or reconciler"},
	{pkgs: "controller/appset/scm", graphcd: []pattern{"api/v1alpha1", "controller/appset/names"},
		why: "the forge clients ask forges and know nothing of the controller that runs them"},
	{pkgs: "controller/appset/names", graphcd: []pattern{},
		why: "the names generators give are a leaf"},
	{pkgs: "controller/sync", graphcd: []pattern{"api/v1alpha1", "controller/health"},
		why: "the sync engine plans and applies, and knows no reconciler, API or repository"},
	{pkgs: "apiserver/notifycfg", graphcd: []pattern{"api/v1alpha1", "controller/notifications", "internal/kubewatch"},
		why: "the API's notifications configuration is the notifications package's, followed through the shared watch, and knows nothing of the notifier that delivers"},
	{pkgs: "graph/...", never: []pattern{"resolvers/...", "apiserver/...", "controller/...", "reposerver/..."},
		why: "the generated executor and the GraphQL models never import the resolvers or the API wing that serves them"},
	{pkgs: "apiserver/...", never: []pattern{"controller", "controller/sync", "controller/cache", "reposerver/inproc", "helm.sh/...", "sigs.k8s.io/kustomize/..."},
		why: "the API wing writes intent and reads state; it never runs the reconciler or links the renderers"},
	{pkgs: "reposerver/...", never: []pattern{"graph/...", "resolvers/...", "controller/...", "auth/...", "apiserver/...", "github.com/99designs/gqlgen/..."},
		why: "the repository server knows nothing of GraphQL, controllers or sessions"},
	{pkgs: "reposerver", never: []pattern{"reposerver/inproc", "reposerver/render/...", "helm.sh/...", "sigs.k8s.io/kustomize/..."},
		why: "the contract carries no implementation"},
	{pkgs: "reposerver/remote", never: []pattern{"reposerver/inproc", "helm.sh/...", "sigs.k8s.io/kustomize/..."},
		why: "the gRPC client and server link the contract, not the renderers"},
	{pkgs: "controller/...", never: []pattern{"resolvers/...", "graph/...", "auth/...", "apiserver/...", "github.com/99designs/gqlgen/...", "reposerver/inproc", "helm.sh/...", "sigs.k8s.io/kustomize/..."},
		why: "the controller renders through the contract and knows nothing of the API"},
	{pkgs: "resolvers/...", never: []pattern{"controller", "controller/sync", "controller/cache", "apiserver", "reposerver/inproc", "helm.sh/...", "sigs.k8s.io/kustomize/..."},
		why: "resolvers authorize, call a service and map; they never reach into the reconciler or link the renderers"},
	{pkgs: "internal/...", never: []pattern{"apiserver/...", "resolvers/...", "graph/..."},
		why: "the shared internals serve the API wing and never reach back into it"},
	{pkgs: "auth/...", never: []pattern{"resolvers/...", "graph/...", "controller/...", "reposerver/...", "apiserver/..."},
		why: "sessions, accounts and RBAC serve the API without knowing it"},
	{pkgs: "cmd/graphcd/internal/cli", graphcd: []pattern{"client", "cmd/graphcd/internal/command", "auth/oidc", "internal/wellknown"},
		never: []pattern{"k8s.io/client-go/...", "sigs.k8s.io/controller-runtime/...", "helm.sh/...", "sigs.k8s.io/kustomize/..."},
		why:   "the user CLI talks to the API through the typed client only"},
	{pkgs: "cmd/graphcd/internal/chatops", imports: []pattern{"github.com/gorilla/websocket", "sigs.k8s.io/yaml"},
		why: "the chat bot is a client of the API over HTTP and the websocket, like any program outside graphcd"},
	{pkgs: "cmd/graphcd/internal/admin", never: []pattern{"controller", "resolvers/...", "graph/...", "apiserver/...", "github.com/99designs/gqlgen/..."},
		why: "the operators' tools run the engines offline, without the reconciler or the API"},
}

// packages lists every package of the module with its direct imports and
// all its dependencies.
func packages(t *testing.T) map[string][2][]string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-f",
		"{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][2][]string{}
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		parts := strings.Split(strings.TrimSpace(line), "|")
		if len(parts) != 3 {
			t.Fatalf("go list printed %q", line)
		}
		pkgs[parts[0]] = [2][]string{strings.Fields(parts[1]), strings.Fields(parts[2])}
	}
	return pkgs
}

// violations lists what pkg, with its direct imports and all its
// dependencies, does against r.
func violations(r rule, pkg string, imports, deps []string) []string {
	var bad []string
	if r.imports != nil {
		for _, imp := range imports {
			if !stdlib(imp) && !anyMatch(r.imports, imp) {
				bad = append(bad, pkg+" imports "+imp+": "+r.why)
			}
		}
	}
	for _, dep := range deps {
		if r.pkgs.matches(dep) {
			continue // itself, or a package the same rule covers
		}
		if (r.graphcd != nil && strings.HasPrefix(dep, module) && !anyMatch(r.graphcd, dep)) || anyMatch(r.never, dep) {
			bad = append(bad, pkg+" depends on "+dep+": "+r.why)
		}
	}
	return bad
}

func TestImportRules(t *testing.T) {
	pkgs := packages(t)
	for _, r := range rules {
		matched := 0
		for pkg, deps := range pkgs {
			if !r.pkgs.matches(pkg) {
				continue
			}
			matched++
			for _, v := range violations(r, pkg, deps[0], deps[1]) {
				t.Error(v)
			}
		}
		if matched == 0 {
			t.Errorf("rule %q matches no package: update the table", r.pkgs)
		}
	}
}

// Each kind of constraint refuses a made-up dependency and lets an allowed
// one through.
func TestViolations(t *testing.T) {
	for _, tc := range []struct {
		r              rule
		pkg            string
		imports, deps  []string
		wantViolations int
	}{
		{rule{pkgs: "api/...", imports: []pattern{"k8s.io/apimachinery/..."}}, module + "api/v1alpha1",
			[]string{"fmt", "k8s.io/apimachinery/pkg/runtime", module + "controller"}, nil, 1},
		{rule{pkgs: "controller/diff", graphcd: []pattern{}}, module + "controller/diff",
			nil, []string{"fmt", "k8s.io/apimachinery/pkg/runtime", module + "api/v1alpha1"}, 1},
		{rule{pkgs: "controller/sync", graphcd: []pattern{"api/v1alpha1"}}, module + "controller/sync",
			nil, []string{module + "api/v1alpha1", module + "controller/sync"}, 0},
		{rule{pkgs: "controller/...", never: []pattern{"helm.sh/...", "resolvers/..."}}, module + "controller/sync",
			nil, []string{"helm.sh/helm/v3/pkg/chart", module + "resolvers", module + "controller/health"}, 2},
	} {
		if got := violations(tc.r, tc.pkg, tc.imports, tc.deps); len(got) != tc.wantViolations {
			t.Errorf("rule %q on %s: %d violations %q, want %d", tc.r.pkgs, tc.pkg, len(got), got, tc.wantViolations)
		}
	}
}
