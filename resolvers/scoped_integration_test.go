//go:build integration

package resolvers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/secretops"
)

// projectAdmins creates two projects in ns, team-<ns> and other-<ns>, each
// with a role "admin" that may do everything to its own project's objects
// of resources, and returns their names and an API on which "team-token"
// is team's admin and "admin-token" graphcd's admin.
func projectAdmins(t *testing.T, ns string, resources ...string) (team, other, api string) {
	t.Helper()
	team, other = "team-"+ns, "other-"+ns
	for _, name := range []string{team, other} {
		role := v1alpha1.ProjectRole{Name: "admin"}
		for _, r := range resources {
			role.Policies = append(role.Policies, fmt.Sprintf("p, proj:%[1]s:admin, %[2]s, *, %[1]s/*, allow", name, r))
		}
		proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.AppProjectSpec{
			SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			Roles: []v1alpha1.ProjectRole{role},
		}}
		if err := kube.Create(t.Context(), proj); err != nil {
			t.Fatal(err)
		}
	}
	setPolicy(t, ns, "")
	api = authAPI(t, ns, tokenTable{
		"team-token":  {Subject: "proj:" + team + ":admin"},
		"admin-token": {Subject: "admin"},
	}, nil)
	return team, other, api
}

// A project role with Argo CD's "repositories, *, <project>/*" declares,
// tests, lists and removes its own project's repositories and clusters,
// and none of anybody else's; the lists show each caller what it may get.
func TestProjectScopedRepositoriesAndClusters(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	team, other, api := projectAdmins(t, ns, "repositories", "clusters")
	const password = "scoped-hunter2"
	url := serveGit(t, "bot", password)
	otherURL := "https://git.example.com/" + ns + "/other.git"

	const create = `mutation($in: RepositoryInput!) { createRepository(input: $in) { id url project hasCredentials } }`
	mustAsk := func(token, q string, vars map[string]any) json.RawMessage {
		t.Helper()
		raw, errs := ask(t, api, token, q, vars)
		if len(errs) > 0 {
			t.Fatalf("%s as %s: %+v", strings.Fields(q)[0], token, errs)
		}
		return raw
	}
	wantCode := func(what, want, token, q string, vars map[string]any) {
		t.Helper()
		if _, errs := ask(t, api, token, q, vars); codeOf(errs) != want {
			t.Errorf("%s: %+v, want %s", what, errs, want)
		}
	}

	// The team declares its repository, tested with its credentials on the
	// real server; not another project's, nor a global one.
	mine := map[string]any{"url": url, "project": team, "username": "bot", "password": password}
	if raw := mustAsk("team-token", create, map[string]any{"in": mine}); !strings.Contains(string(raw), `"project":"`+team+`"`) {
		t.Errorf("createRepository = %s, want it scoped to %s", raw, team)
	}
	wantCode("the team declaring another project's repository", "FORBIDDEN", "team-token", create,
		map[string]any{"in": map[string]any{"url": otherURL, "project": other, "skipTest": true}})
	wantCode("the team declaring a global repository", "FORBIDDEN", "team-token", create,
		map[string]any{"in": map[string]any{"url": otherURL, "skipTest": true}})
	wantCode("a project name that is no name", "BAD_USER_INPUT", "admin-token", create,
		map[string]any{"in": map[string]any{"url": otherURL, "project": "Not/A Name", "skipTest": true}})
	// An admin declares the same URL globally (a Secret apart from the
	// team's) and the other project's repository.
	mustAsk("admin-token", create, map[string]any{"in": map[string]any{"url": url, "skipTest": true}})
	mustAsk("admin-token", create, map[string]any{"in": map[string]any{"url": otherURL, "project": other, "skipTest": true}})
	if n := repoSecrets(t, url); n != 2 {
		t.Errorf("%d repository Secrets for %s, want the team's and the global one", n, url)
	}

	listRepos := func(token string) []string {
		t.Helper()
		var got struct {
			Repositories struct {
				Nodes []struct{ URL, Project string }
			}
		}
		if err := json.Unmarshal(mustAsk(token, `{ repositories(first: 500) { nodes { url project } } }`, nil), &got); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range got.Repositories.Nodes {
			if n.URL == url || n.URL == otherURL {
				out = append(out, n.Project+" "+n.URL)
			}
		}
		slices.Sort(out)
		return out
	}
	eventually(t, "the lists show each caller what it may get", func() error {
		if got, want := listRepos("team-token"), []string{team + " " + url}; !slices.Equal(got, want) {
			return fmt.Errorf("the team lists %q, want %q", got, want)
		}
		if got, want := listRepos("admin-token"), []string{" " + url, other + " " + otherURL, team + " " + url}; !slices.Equal(got, want) {
			return fmt.Errorf("the admin lists %q, want %q", got, want)
		}
		return nil
	})

	const test = `mutation($url: String!, $p: String) { testRepository(url: $url, project: $p) { status message } }`
	eventually(t, "the team's stored credentials reach its repository", func() error {
		raw := mustAsk("team-token", test, map[string]any{"url": url, "p": team})
		if !strings.Contains(string(raw), `"SUCCESSFUL"`) {
			return fmt.Errorf("testRepository = %s", raw)
		}
		return nil
	})
	wantCode("the team testing the global declaration", "FORBIDDEN", "team-token", test, map[string]any{"url": url})

	const del = `mutation($url: String!, $p: String) { deleteRepository(url: $url, project: $p) }`
	wantCode("the team deleting another project's repository", "FORBIDDEN", "team-token", del, map[string]any{"url": otherURL, "p": other})
	wantCode("the team deleting the global one", "FORBIDDEN", "team-token", del, map[string]any{"url": url})
	mustAsk("team-token", del, map[string]any{"url": url, "p": team})
	if n := repoSecrets(t, url); n != 1 {
		t.Errorf("%d repository Secrets for %s after the team removed its own, want the global one", n, url)
	}

	// Clusters, likewise; a global cluster cannot be taken over by
	// upserting it with the team's project, and one the team may not see is
	// not found for it.
	const add = `mutation($in: ClusterInput!) { addCluster(input: $in) { server project } }`
	teamServer, globalServer := "https://team-"+ns+".example.com", "https://global-"+ns+".example.com"
	mustAsk("team-token", add, map[string]any{"in": map[string]any{"name": "team-" + ns, "server": teamServer, "project": team, "bearerToken": "t"}})
	wantCode("the team registering another project's cluster", "FORBIDDEN", "team-token", add,
		map[string]any{"in": map[string]any{"name": "x-" + ns, "server": "https://x-" + ns + ".example.com", "project": other}})
	mustAsk("admin-token", add, map[string]any{"in": map[string]any{"name": "global-" + ns, "server": globalServer, "bearerToken": "g"}})
	wantCode("the team taking over a global cluster", "FORBIDDEN", "team-token", add,
		map[string]any{"in": map[string]any{"name": "global-" + ns, "server": globalServer, "project": team, "upsert": true}})
	listClusters := func(token string) []string {
		t.Helper()
		var got struct {
			Clusters struct {
				Nodes []struct{ Server, Project string }
			}
		}
		if err := json.Unmarshal(mustAsk(token, `{ clusters(first: 500) { nodes { server project } } }`, nil), &got); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range got.Clusters.Nodes {
			if strings.Contains(n.Server, ns) {
				out = append(out, n.Project+" "+n.Server)
			}
		}
		slices.Sort(out)
		return out
	}
	eventually(t, "the cluster lists show each caller what it may get", func() error {
		if got, want := listClusters("team-token"), []string{team + " " + teamServer}; !slices.Equal(got, want) {
			return fmt.Errorf("the team lists %q, want %q", got, want)
		}
		if got, want := listClusters("admin-token"), []string{" " + globalServer, team + " " + teamServer}; !slices.Equal(got, want) {
			return fmt.Errorf("the admin lists %q, want %q", got, want)
		}
		return nil
	})
	const remove = `mutation($s: String!) { removeCluster(server: $s) }`
	wantCode("the team removing a cluster it may not see", "NOT_FOUND", "team-token", remove, map[string]any{"s": globalServer})
	mustAsk("team-token", remove, map[string]any{"s": teamServer})
	mustAsk("admin-token", remove, map[string]any{"s": globalServer})
	mustAsk("admin-token", del, map[string]any{"url": url})
	mustAsk("admin-token", del, map[string]any{"url": otherURL, "p": other})
}

// The API refuses, when a spec is written, a destination cluster scoped to
// another project, and with permitOnlyProjectScopedClusters any cluster
// not scoped to the app's project; the messages never name the other
// project.
func TestProjectScopedClustersWhenWritten(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	team, only, hidden := "team-"+ns, "only-"+ns, "secret-"+ns
	for _, p := range []struct {
		name       string
		onlyScoped bool
	}{{team, false}, {only, true}} {
		proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.name}, Spec: v1alpha1.AppProjectSpec{
			SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			PermitOnlyProjectScopedClusters: p.onlyScoped,
		}}
		if err := kube.Create(t.Context(), proj); err != nil {
			t.Fatal(err)
		}
	}
	setPolicy(t, ns, "")
	api := authAPI(t, ns, tokenTable{"admin-token": {Subject: "admin"}}, nil)
	const add = `mutation($in: ClusterInput!) { addCluster(input: $in) { server } }`
	hiddenServer, onlyServer := "https://c1-"+ns+".example.com", "https://c2-"+ns+".example.com"
	for server, proj := range map[string]string{hiddenServer: hidden, onlyServer: only} {
		name := strings.TrimSuffix(strings.TrimPrefix(server, "https://"), ".example.com")
		if _, errs := ask(t, api, "admin-token", add, map[string]any{"in": map[string]any{"name": name, "server": server, "project": proj, "bearerToken": "t"}}); len(errs) > 0 {
			t.Fatal(errs)
		}
	}
	t.Cleanup(func() {
		for _, s := range []string{hiddenServer, onlyServer} {
			_ = secretops.Service{Client: cluster.Client, Namespace: secretsNS}.DeleteCluster(context.Background(), s, func(string) error { return nil })
		}
	})
	eventually(t, "both clusters registered", func() error {
		raw, _ := ask(t, api, "admin-token", `{ clusters(first: 500) { nodes { server } } }`, nil)
		if !strings.Contains(string(raw), hiddenServer) || !strings.Contains(string(raw), onlyServer) {
			return errNotYet
		}
		return nil
	})
	app := func(name, proj, server string) string {
		return strings.NewReplacer("project: default", "project: "+proj, "https://kubernetes.default.svc", server).
			Replace(manifest(ns, name, "graphcd.io/v1alpha1", ""))
	}
	for _, tt := range []struct{ name, manifest, want string }{
		{"another-projects-cluster", app("a1", team, hiddenServer), "the cluster is scoped to another project"},
		{"only-scoped-global", app("a2", only, "https://kubernetes.default.svc"), "permits only clusters scoped to it (permitOnlyProjectScopedClusters)"},
		{"only-scoped-other", app("a3", only, hiddenServer), "the cluster is scoped to another project"},
	} {
		_, errs := ask(t, api, "admin-token", createMutation, map[string]any{"m": tt.manifest, "upsert": false})
		if codeOf(errs) != "BAD_USER_INPUT" || !strings.Contains(errs[0].Message, tt.want) || strings.Contains(errs[0].Message, hidden) {
			t.Errorf("%s: %+v, want BAD_USER_INPUT saying %q without naming %s", tt.name, errs, tt.want, hidden)
		}
	}
	if _, errs := ask(t, api, "admin-token", createMutation, map[string]any{"m": app("ok", only, onlyServer), "upsert": false}); len(errs) > 0 {
		t.Errorf("an app of %s on its own cluster: %+v", only, errs)
	}
}
