//go:build integration

package resolvers_test

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// TestCrossProjectTakeover is the attack of a tenant on another
// tenant's application: carol, who may do anything to the apps of her
// project only, tries to take over bob's app by writing a manifest of the
// same name into her project.
func TestCrossProjectTakeover(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	teamA, teamB := "team-a-"+ns, "team-b-"+ns
	setPolicy(t, ns, fmt.Sprintf(`
p, carol, applications, *, %[1]s/*, allow
p, carol, applications, *, narrow-%[3]s/*, allow
p, bob, applications, *, %[2]s/*, allow
p, dave, applications, get, %[2]s/*, allow
p, dave, applications, create, %[1]s/*, allow
p, dave, applications, update, %[1]s/*, allow
`, teamA, teamB, ns))
	for _, name := range []string{teamA, teamB} {
		proj := &v1alpha1.AppProject{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.AppProjectSpec{
				SourceRepos:  []string{"*"},
				Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			},
		}
		if err := kube.Create(t.Context(), proj); err != nil {
			t.Fatal(err)
		}
	}
	api := authAPI(t, ns, tokenTable{
		"carol": {Subject: "carol"}, "bob": {Subject: "bob"}, "dave": {Subject: "dave"},
	}, nil)
	appIn := func(name, project, path string) string {
		return strings.NewReplacer("project: default", "project: "+project, "path: guestbook", "path: "+path).
			Replace(manifest(ns, name, "graphcd.io/v1alpha1", ""))
	}
	create := func(token, m string, upsert bool) []gqlError {
		_, errs := ask(t, api, token, createMutation, map[string]any{"m": m, "upsert": upsert})
		return errs
	}
	if errs := create("bob", appIn("shop", teamB, "shop"), false); len(errs) > 0 {
		t.Fatalf("bob creates shop: %+v", errs)
	}
	unchanged := func(t *testing.T) {
		t.Helper()
		app := getApp(t, ns, "shop")
		if app.Spec.Project != teamB || app.Spec.Source.Path != "shop" {
			t.Errorf("bob's app is now in project %q with path %q", app.Spec.Project, app.Spec.Source.Path)
		}
	}

	t.Run("an upsert into the caller's project does not take the app over", func(t *testing.T) {
		errs := create("carol", appIn("shop", teamA, "evil"), true)
		want := fmt.Sprintf("permission denied: applications create %s/%s/shop", teamA, ns)
		if codeOf(errs) != "FORBIDDEN" || errs[0].Message != want {
			t.Errorf("carol's upsert: %+v, want FORBIDDEN %q", errs, want)
		}
		unchanged(t)
		const del = `mutation($ns: String) { deleteApplication(input: {application: {name: "shop", namespace: $ns}, cascade: true}) }`
		if _, errs := ask(t, api, "carol", del, map[string]any{"ns": ns}); codeOf(errs) != "NOT_FOUND" {
			t.Errorf("carol deletes shop: %+v, want NOT_FOUND", errs)
		}
	})

	t.Run("a caller who sees the app needs update where it is now", func(t *testing.T) {
		errs := create("dave", appIn("shop", teamA, "evil"), true)
		want := fmt.Sprintf("permission denied: applications update %s/%s/shop", teamB, ns)
		if codeOf(errs) != "FORBIDDEN" || errs[0].Message != want {
			t.Errorf("dave's upsert: %+v, want FORBIDDEN %q", errs, want)
		}
		unchanged(t)
	})

	t.Run("create answers alike for a hidden app and a forbidden name", func(t *testing.T) {
		hidden := create("carol", appIn("shop", teamA, "evil"), false)
		forbidden := create("carol", appIn("free-name", teamB, "evil"), false)
		if codeOf(hidden) != "FORBIDDEN" || codeOf(forbidden) != "FORBIDDEN" {
			t.Fatalf("create over a hidden app: %+v; create of a free name in a forbidden project: %+v; want FORBIDDEN for both", hidden, forbidden)
		}
		shape := func(msg string) string {
			return strings.NewReplacer(teamA, "P", teamB, "P", "shop", "N", "free-name", "N").Replace(msg)
		}
		if shape(hidden[0].Message) != shape(forbidden[0].Message) {
			t.Errorf("messages differ in more than names: %q and %q", hidden[0].Message, forbidden[0].Message)
		}
		if errs := create("bob", appIn("shop", teamB, "other"), false); codeOf(errs) != "CONFLICT" {
			t.Errorf("bob creates over his own app: %+v, want CONFLICT", errs)
		}
		unchanged(t)
	})

	t.Run("the owner may still upsert", func(t *testing.T) {
		if errs := create("bob", appIn("shop", teamB, "v2"), true); len(errs) > 0 {
			t.Fatalf("bob's upsert: %+v", errs)
		}
		if p := getApp(t, ns, "shop").Spec.Source.Path; p != "v2" {
			t.Errorf("path after bob's upsert = %q, want v2", p)
		}
	})
}

// TestProjectRulesWhenWritten writes specs a project does not permit: the
// API refuses them as Argo CD does, before anything is stored (so nothing
// renders them either).
func TestProjectRulesWhenWritten(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	narrow := "narrow-" + ns
	setPolicy(t, ns, fmt.Sprintf("p, carol, applications, *, %s/*, allow\np, carol, applications, *, no-such-%s/*, allow\n", narrow, ns))
	proj := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: narrow},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:  []string{"https://git.example.com/apps.git"},
			Destinations: []v1alpha1.ApplicationDestination{{Server: "https://kubernetes.default.svc", Namespace: "guestbook"}},
		},
	}
	if err := kube.Create(t.Context(), proj); err != nil {
		t.Fatal(err)
	}
	api := authAPI(t, ns, tokenTable{"carol": {Subject: "carol"}}, nil)
	good := strings.Replace(manifest(ns, "ok", "graphcd.io/v1alpha1", ""), "project: default", "project: "+narrow, 1)
	for _, tt := range []struct{ name, manifest, want string }{
		{"repository", strings.Replace(good, "apps.git", "other.git", 1), "application repo https://git.example.com/other.git is not permitted in project"},
		{"destination", strings.Replace(good, "namespace: guestbook", "namespace: kube-system", 1), "do not match any of the allowed destinations in project"},
		{"project", strings.Replace(good, "project: "+narrow, "project: no-such-"+ns, 1), "application references project no-such-" + ns + " which does not exist"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := ask(t, api, "carol", createMutation, map[string]any{"m": strings.Replace(tt.manifest, "name: ok", "name: bad-"+tt.name, 1), "upsert": true})
			if codeOf(errs) != "BAD_USER_INPUT" || !strings.Contains(errs[0].Message, tt.want) {
				t.Errorf("create: %+v, want BAD_USER_INPUT saying %q", errs, tt.want)
			}
		})
	}
	if _, errs := ask(t, api, "carol", createMutation, map[string]any{"m": good, "upsert": false}); len(errs) > 0 {
		t.Fatalf("a permitted spec: %+v", errs)
	}
	const patch = `mutation($ns: String, $p: String!) { patchApplication(input: {application: {name: "ok", namespace: $ns}, patch: $p}) { name } }`
	_, errs := ask(t, api, "carol", patch, map[string]any{"ns": ns, "p": `{"spec": {"destination": {"namespace": "kube-system"}}}`})
	if codeOf(errs) != "BAD_USER_INPUT" || !strings.Contains(errs[0].Message, "allowed destinations") {
		t.Errorf("patch to a forbidden destination: %+v, want BAD_USER_INPUT", errs)
	}
	if got := getApp(t, ns, "ok").Spec.Destination.Namespace; got != "guestbook" {
		t.Errorf("destination after the refused patch = %q", got)
	}
	var list v1alpha1.ApplicationList
	if err := kube.List(t.Context(), &list, client.InNamespace(ns)); err != nil || len(list.Items) != 1 {
		t.Errorf("apps stored: %d (%v), want only the permitted one", len(list.Items), err)
	}
}
