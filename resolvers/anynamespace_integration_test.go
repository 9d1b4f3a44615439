//go:build integration

package resolvers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/controller/project"
	"github.com/graphcd/graphcd/internal/kubewatch"
)

// tenantAPI serves the shared index as a server whose namespace is own
// and whose --application-namespaces are patterns would, with RBAC from
// the graphcd-rbac-cm of own and the tokens of authn.
func tenantAPI(t *testing.T, own string, patterns []string, authn tokenTable) string {
	t.Helper()
	served, err := project.CompileAppNamespaces(own, patterns)
	if err != nil {
		t.Fatal(err)
	}
	a := auth.NewAuthorizer()
	quiet := slog.New(slog.DiscardHandler)
	if err := auth.WatchPolicy(t.Context(), kubewatch.NewSource(t.Context(), cluster.Client, own), a, quiet); err != nil {
		t.Fatal(err)
	}
	if err := auth.WatchProjects(t.Context(), objects, a, quiet); err != nil {
		t.Fatal(err)
	}
	opts, err := apiOptions(events)
	if err != nil {
		t.Fatal(err)
	}
	opts.API.Namespace, opts.API.AppNamespaces = own, served
	opts.API.Authz, opts.Authenticator = a, authn
	ts, err := serveAPI(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	return ts.URL
}

// namedNamespace creates the namespace name for the test.
func namedNamespace(t *testing.T, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cluster.Client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// TestAppsInAnyNamespace serves the apps of two tenant namespaces beside
// the server's own: they are listed and filtered by namespace and
// authorized per project/namespace/app; an app in a namespace its project
// does not allow, or in a namespace the server does not serve, is
// answered exactly as an app that does not exist.
func TestAppsInAnyNamespace(t *testing.T) {
	t.Parallel()
	own := cluster.Namespace(t)
	teamA, teamB := namedNamespace(t, own+"-team-a"), namedNamespace(t, own+"-team-b")
	other := namedNamespace(t, own+"-other")
	for name, sourceNamespaces := range map[string][]string{"tenants": {own + "-team-*"}, "closed": nil} {
		proj := &v1alpha1.AppProject{
			ObjectMeta: metav1.ObjectMeta{Namespace: own, Name: name},
			Spec: v1alpha1.AppProjectSpec{
				SourceRepos: []string{"*"}, SourceNamespaces: sourceNamespaces,
				Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			},
		}
		if err := kube.Create(t.Context(), proj); err != nil {
			t.Fatal(err)
		}
	}
	setPolicy(t, own, fmt.Sprintf(`
p, alice, applications, *, tenants/%[1]s/*, allow
p, bob, applications, *, *, allow
p, carol, applications, *, closed/%[2]s/*, allow
`, teamA, teamB))
	api := tenantAPI(t, own, []string{own + "-team-*"}, tokenTable{
		"alice": {Subject: "alice"}, "bob": {Subject: "bob"}, "carol": {Subject: "carol"},
	})
	appIn := func(ns, name, proj string) string {
		return strings.Replace(manifest(ns, name, "graphcd.io/v1alpha1", ""), "project: default", "project: "+proj, 1)
	}
	// The apps, written as a tenant with kubectl would (the API refuses
	// some of them, as tested below).
	for _, m := range []string{
		appIn(own, "home", "tenants"), appIn(teamA, "web", "tenants"), appIn(teamB, "web", "tenants"),
		appIn(teamB, "sneaky", "closed"), appIn(other, "web", "tenants"),
	} {
		app := &v1alpha1.Application{}
		if err := yaml.Unmarshal([]byte(m), app); err != nil {
			t.Fatal(err)
		}
		if err := kube.Create(t.Context(), app); err != nil {
			t.Fatal(err)
		}
	}
	all := []string{own, teamA, teamB, other}
	list := func(token string, namespaces []string) []string {
		t.Helper()
		var out []string
		eventually(t, "the index holds the apps", func() error {
			raw, errs := ask(t, api, token, `query($ns: [String!]) { applications(first: 100, filter: {namespaces: $ns}) { nodes { name namespace } } }`,
				map[string]any{"ns": namespaces})
			if len(errs) > 0 {
				return fmt.Errorf("%+v", errs)
			}
			var got struct {
				Applications struct {
					Nodes []struct{ Name, Namespace string }
				}
			}
			if err := json.Unmarshal(raw, &got); err != nil {
				return err
			}
			out = out[:0]
			for _, n := range got.Applications.Nodes {
				out = append(out, n.Namespace+"/"+n.Name)
			}
			if token == "bob" && len(namespaces) == len(all) && len(out) < 3 {
				return errNotYet
			}
			return nil
		})
		return out
	}

	t.Run("listed and filtered per namespace", func(t *testing.T) {
		want := []string{own + "/home", teamA + "/web", teamB + "/web"}
		if got := list("bob", all); !slices.Equal(got, want) {
			t.Errorf("bob's list = %q, want %q (not the refused app, not the unserved namespace)", got, want)
		}
		if got, want := list("bob", []string{teamB}), []string{teamB + "/web"}; !slices.Equal(got, want) {
			t.Errorf("bob's list of %s = %q, want %q", teamB, got, want)
		}
		if got, want := list("alice", all), []string{teamA + "/web"}; !slices.Equal(got, want) {
			t.Errorf("alice's list = %q, want %q", got, want)
		}
	})

	const get = `query($n: String!, $ns: String) { application(name: $n, namespace: $ns) { name namespace } }`
	const sync = `mutation($n: String!, $ns: String) { syncApplication(input: {application: {name: $n, namespace: $ns}}) { name } }`
	t.Run("authorized per project/namespace/app", func(t *testing.T) {
		if raw, errs := ask(t, api, "alice", get, map[string]any{"n": "web", "ns": teamA}); len(errs) > 0 || !strings.Contains(string(raw), teamA) {
			t.Errorf("alice gets %s/web: %s %+v", teamA, raw, errs)
		}
		if raw, _ := ask(t, api, "alice", get, map[string]any{"n": "web", "ns": teamB}); string(raw) != `{"application":null}` {
			t.Errorf("alice gets %s/web: %s, want null", teamB, raw)
		}
		if _, errs := ask(t, api, "alice", sync, map[string]any{"n": "web", "ns": teamB}); codeOf(errs) != "NOT_FOUND" {
			t.Errorf("alice syncs %s/web: %+v, want NOT_FOUND", teamB, errs)
		}
		if _, errs := ask(t, api, "alice", sync, map[string]any{"n": "web", "ns": teamA}); len(errs) > 0 {
			t.Errorf("alice syncs %s/web: %+v", teamA, errs)
		}
	})

	// same reports whether two answers differ in nothing but the names
	// asked for.
	same := func(a []gqlError, nameA string, b []gqlError, nameB string) bool {
		return len(a) == 1 && len(b) == 1 && codeOf(a) == codeOf(b) &&
			strings.ReplaceAll(a[0].Message, nameA, "N") == strings.ReplaceAll(b[0].Message, nameB, "N")
	}
	t.Run("a namespace the project does not allow answers as a missing app", func(t *testing.T) {
		for _, name := range []string{"sneaky", "ghost"} {
			if raw, errs := ask(t, api, "carol", get, map[string]any{"n": name, "ns": teamB}); len(errs) > 0 || string(raw) != `{"application":null}` {
				t.Errorf("carol gets %s/%s: %s %+v, want null", teamB, name, raw, errs)
			}
		}
		_, refused := ask(t, api, "carol", sync, map[string]any{"n": "sneaky", "ns": teamB})
		_, missing := ask(t, api, "carol", sync, map[string]any{"n": "ghost", "ns": teamB})
		if codeOf(refused) != "NOT_FOUND" || !same(refused, "sneaky", missing, "ghost") {
			t.Errorf("carol syncs the refused app: %+v; a missing one: %+v; want the same NOT_FOUND", refused, missing)
		}
		// Creating (or upserting) into it is refused before the name is
		// looked at: the same words whether an app has it or not.
		_, over := ask(t, api, "carol", createMutation, map[string]any{"m": appIn(teamB, "sneaky", "closed"), "upsert": true})
		_, fresh := ask(t, api, "carol", createMutation, map[string]any{"m": appIn(teamB, "ghost", "closed"), "upsert": true})
		if codeOf(over) != "BAD_USER_INPUT" || !strings.Contains(over[0].Message, "is not permitted in project 'closed'") ||
			!same(over, "sneaky", fresh, "ghost") {
			t.Errorf("carol creates over the refused app: %+v; a new one: %+v; want the same BAD_USER_INPUT", over, fresh)
		}
	})

	t.Run("a namespace the server does not serve", func(t *testing.T) {
		if raw, errs := ask(t, api, "bob", get, map[string]any{"n": "web", "ns": other}); len(errs) > 0 || string(raw) != `{"application":null}` {
			t.Errorf("bob gets %s/web: %s %+v, want null", other, raw, errs)
		}
		_, exists := ask(t, api, "bob", sync, map[string]any{"n": "web", "ns": other})
		_, missing := ask(t, api, "bob", sync, map[string]any{"n": "ghost", "ns": other})
		if codeOf(exists) != "NOT_FOUND" || !same(exists, "web", missing, "ghost") {
			t.Errorf("bob syncs an app of %s: %+v; a missing one: %+v; want the same NOT_FOUND", other, exists, missing)
		}
		_, errs := ask(t, api, "bob", createMutation, map[string]any{"m": appIn(other, "new", "tenants"), "upsert": false})
		if codeOf(errs) != "BAD_USER_INPUT" || !strings.Contains(errs[0].Message, "metadata.namespace") {
			t.Errorf("bob creates an app in %s: %+v, want BAD_USER_INPUT", other, errs)
		}
	})

	t.Run("a project a tenant made in their namespace grants nothing", func(t *testing.T) {
		// A tenant who may write AppProjects in their namespace makes one
		// that allows every namespace, and an app that uses it.
		rogue := &v1alpha1.AppProject{
			ObjectMeta: metav1.ObjectMeta{Namespace: teamA, Name: "rogue"},
			Spec: v1alpha1.AppProjectSpec{
				SourceRepos: []string{"*"}, SourceNamespaces: []string{"*"},
				Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			},
		}
		if err := kube.Create(t.Context(), rogue); err != nil {
			t.Fatal(err)
		}
		app := &v1alpha1.Application{}
		if err := yaml.Unmarshal([]byte(appIn(teamA, "takeover", "rogue")), app); err != nil {
			t.Fatal(err)
		}
		if err := kube.Create(t.Context(), app); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the catalog holds the project and the app", func() error {
			p, err := objects.Project(t.Context(), "rogue")
			if err != nil {
				return err
			}
			if p == nil || index.Get(client.ObjectKeyFromObject(app)) == nil {
				return errNotYet
			}
			return nil
		})
		if got := list("bob", all); slices.Contains(got, teamA+"/takeover") {
			t.Errorf("bob's list = %q: it holds the app of the tenant's project", got)
		}
		if raw, errs := ask(t, api, "bob", get, map[string]any{"n": "takeover", "ns": teamA}); len(errs) > 0 || string(raw) != `{"application":null}` {
			t.Errorf("bob gets %s/takeover: %s %+v, want null", teamA, raw, errs)
		}
		_, refused := ask(t, api, "bob", sync, map[string]any{"n": "takeover", "ns": teamA})
		_, missing := ask(t, api, "bob", sync, map[string]any{"n": "ghost", "ns": teamA})
		if codeOf(refused) != "NOT_FOUND" || !same(refused, "takeover", missing, "ghost") {
			t.Errorf("bob syncs the app of the tenant's project: %+v; a missing one: %+v; want the same NOT_FOUND", refused, missing)
		}
		got := &v1alpha1.Application{}
		if err := kube.Get(t.Context(), client.ObjectKeyFromObject(app), got); err != nil {
			t.Fatal(err)
		}
		if got.Operation != nil {
			t.Errorf("the refused sync wrote an operation: %+v", got.Operation)
		}
	})
}
