//go:build integration

package resolvers_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func TestProjects(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	warnOff := false
	issued := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range []*v1alpha1.AppProject{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: v1alpha1.AppProjectSpec{
			Description: "the web team", SourceRepos: []string{"https://git.example.com/web/*"},
			Destinations:             []v1alpha1.ApplicationDestination{{Server: "https://kubernetes.default.svc", Namespace: "web-*"}},
			ClusterResourceWhitelist: []metav1.GroupKind{{Group: "", Kind: "Namespace"}},
			Roles: []v1alpha1.ProjectRole{{Name: "ci", Policies: []string{"p, proj:web:ci, applications, sync, web/*, allow"},
				JWTTokens: []v1alpha1.JWTToken{{ID: "t1", IssuedAt: issued.Unix()}}}},
			SyncWindows:       []v1alpha1.SyncWindow{{Kind: "deny", Schedule: "0 22 * * *", Duration: "8h", Applications: []string{"*"}, UseAndOperator: true}},
			OrphanedResources: &v1alpha1.OrphanedResourcesMonitorSettings{},
		}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"}, Spec: v1alpha1.AppProjectSpec{
			OrphanedResources: &v1alpha1.OrphanedResourcesMonitorSettings{Warn: &warnOff},
		}},
	} {
		if err := kube.Create(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	createApps(t, ns, appSpec{name: "site", project: "web"}, appSpec{name: "etl", project: "data"})
	waitCount(t, ns, 2)

	var got struct {
		Project struct {
			ID, Name string
			Spec     struct {
				Description, Yaml        string
				SourceRepos              []string
				Destinations             []struct{ Server, Namespace string }
				ClusterResourceWhitelist []struct{ Group, Kind string }
				Roles                    []struct {
					Name      string
					Policies  []string
					JWTTokens []struct {
						ID, IssuedAt string
						ExpiresAt    *string
					}
				}
				SyncWindows []struct {
					Kind        string
					AndOperator bool
				}
				OrphanedResources struct{ Warn bool }
			}
			Applications struct{ Nodes []struct{ Name string } }
		}
	}
	const q = `query($n: String!) { project(name: $n) { id name
	  spec { description sourceRepos destinations { server namespace } clusterResourceWhitelist { group kind }
	    roles { name policies jwtTokens { id issuedAt expiresAt } } syncWindows { kind andOperator } orphanedResources { warn } }
	  applications(first: 10) { nodes { name } } } }`
	eventually(t, "project web listed", func() error {
		data(t, q, map[string]any{"n": "web"}, &got)
		if got.Project.Name != "web" {
			return errNotYet
		}
		return nil
	})
	p := got.Project
	if p.Spec.Description != "the web team" || len(p.Spec.SourceRepos) != 1 || p.Spec.Destinations[0].Namespace != "web-*" ||
		p.Spec.ClusterResourceWhitelist[0].Kind != "Namespace" {
		t.Errorf("spec = %+v", p.Spec)
	}
	if r := p.Spec.Roles; len(r) != 1 || r[0].JWTTokens[0].IssuedAt != "2026-11-01T00:00:00Z" || r[0].JWTTokens[0].ExpiresAt != nil {
		t.Errorf("roles = %+v", r)
	}
	if w := p.Spec.SyncWindows; len(w) != 1 || !w[0].AndOperator || !p.Spec.OrphanedResources.Warn {
		t.Errorf("windows %+v, orphaned %+v", w, p.Spec.OrphanedResources)
	}
	if a := p.Applications.Nodes; len(a) != 1 || a[0].Name != "site" {
		t.Errorf("applications of web = %+v", a)
	}
	data(t, q, map[string]any{"n": "data"}, &got)
	if got.Project.Spec.OrphanedResources.Warn {
		t.Error("data: orphanedResources.warn = true, want false")
	}

	var byID struct{ Node struct{ Name string } }
	data(t, `query($id: ID!) { node(id: $id) { ... on Project { name } } }`, map[string]any{"id": p.ID}, &byID)
	if byID.Node.Name != "web" {
		t.Errorf("node(project id) = %+v", byID.Node)
	}
	var list struct {
		Projects struct {
			TotalCount int
			Nodes      []struct{ Name string }
			PageInfo   struct{ HasNextPage bool }
		}
	}
	data(t, `{ projects(first: 1) { totalCount nodes { name } pageInfo { hasNextPage } } }`, nil, &list)
	if list.Projects.TotalCount < 2 || len(list.Projects.Nodes) != 1 || !list.Projects.PageInfo.HasNextPage {
		t.Errorf("projects page = %+v", list.Projects)
	}
}

type repoNode struct {
	ID, Name, URL, Type string
	HasCredentials      bool
}

// TestClustersAndRepositoriesHideCredentials registers a cluster and a
// repository with credentials: the API lists them and never shows the
// credentials.
func TestClustersAndRepositoriesHideCredentials(t *testing.T) {
	t.Parallel()
	const token, password = "s3cr3t-bearer-token", "hunter2-password"
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: secretsNS, Name: "prod", Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster", "env": "prod"}},
			StringData: map[string]string{"name": "prod", "server": "https://prod.example.com:6443", "namespaces": "web,api",
				"config": `{"bearerToken": "` + token + `", "tlsClientConfig": {"insecure": true}}`}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: secretsNS, Name: "private-repo", Labels: map[string]string{"graphcd.io/secret-type": "repository"}},
			StringData: map[string]string{"name": "private", "url": "https://git.example.com/private.git", "username": "bot", "password": password}},
	} {
		if _, err := cluster.Client.CoreV1().Secrets(secretsNS).Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	const q = `{ clusters { totalCount nodes { id name server namespaces clusterResources labels { key value } } }
	  repositories { nodes { id name url type hasCredentials template } } }`
	var got struct {
		Clusters struct {
			Nodes []struct {
				ID, Name, Server string
				Namespaces       []string
				Labels           []struct{ Key, Value string }
			}
		}
		Repositories struct{ Nodes []repoNode }
	}
	eventually(t, "cluster and repository listed", func() error {
		_, resp := query(t, q, nil)
		if strings.Contains(string(resp.Data), token) || strings.Contains(string(resp.Data), password) {
			t.Fatalf("a credential reached the response: %s", resp.Data)
		}
		data(t, q, nil, &got)
		if len(got.Clusters.Nodes) < 2 || !slices.ContainsFunc(got.Repositories.Nodes, func(r repoNode) bool { return r.Name == "private" }) {
			return errNotYet
		}
		return nil
	})
	var prod, inCluster bool
	for _, c := range got.Clusters.Nodes {
		switch c.Server {
		case "https://prod.example.com:6443":
			prod = c.Name == "prod" && strings.Join(c.Namespaces, ",") == "web,api"
		case "https://kubernetes.default.svc":
			inCluster = c.Name == "in-cluster"
		}
	}
	if !prod || !inCluster {
		t.Errorf("clusters = %+v", got.Clusters.Nodes)
	}
	i := slices.IndexFunc(got.Repositories.Nodes, func(r repoNode) bool { return r.Name == "private" })
	if r := got.Repositories.Nodes[i]; r.URL != "https://git.example.com/private.git" || !r.HasCredentials || r.Type != "git" {
		t.Errorf("repository = %+v", r)
	}
	for _, id := range []string{got.Clusters.Nodes[0].ID, got.Repositories.Nodes[i].ID} {
		var node struct{ Node map[string]any }
		data(t, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id}, &node)
		if node.Node["id"] != id {
			t.Errorf("node(%s) = %v", id, node.Node)
		}
	}
}
