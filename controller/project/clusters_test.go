package project

import (
	"strings"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// A cluster scoped to another project is refused, without naming that
// project; permitOnlyProjectScopedClusters refuses every cluster not
// scoped to this one. Both go through AppAllowed, which the API and the
// controller call.
func TestClusterAllowed(t *testing.T) {
	const server = "https://prod.example.com"
	anywhere := []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}}
	tests := []struct {
		name       string
		onlyScoped bool
		dests      []v1alpha1.ApplicationDestination
		cluster    Cluster
		want       string
	}{
		{"global cluster", false, anywhere, Cluster{Server: server, Name: "prod"}, ""},
		{"own cluster", false, anywhere, Cluster{Server: server, Name: "prod", Project: "team-a"}, ""},
		{"another project's cluster", false, anywhere, Cluster{Server: server, Name: "prod", Project: "team-b"},
			"application destination server 'https://prod.example.com' (cluster 'prod') is not permitted in project 'team-a': the cluster is scoped to another project"},
		{"only scoped: own cluster", true, anywhere, Cluster{Server: server, Name: "prod", Project: "team-a"}, ""},
		{"only scoped: global cluster", true, anywhere, Cluster{Server: server, Name: "prod"},
			"application destination server 'https://prod.example.com' (cluster 'prod') is not permitted in project 'team-a': the project permits only clusters scoped to it (permitOnlyProjectScopedClusters)"},
		{"only scoped: unregistered cluster", true, anywhere, Cluster{Server: "https://unknown.example.com"}, "~permits only clusters scoped to it"},
		{"only scoped: another project's cluster", true, anywhere, Cluster{Server: server, Project: "team-b"}, "~scoped to another project"},
		// The destinations still apply to the project's own clusters, as in
		// Argo CD.
		{"only scoped: own cluster outside the destinations", true, []v1alpha1.ApplicationDestination{{Server: "https://other", Namespace: "*"}},
			Cluster{Server: server, Project: "team-a"}, "~do not match any of the allowed destinations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proj := newProject(v1alpha1.AppProjectSpec{SourceRepos: []string{"*"}, Destinations: tt.dests, PermitOnlyProjectScopedClusters: tt.onlyScoped})
			spec := &v1alpha1.ApplicationSpec{Project: "team-a", Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/a"},
				Destination: v1alpha1.ApplicationDestination{Server: tt.cluster.Server, Name: tt.cluster.Name, Namespace: "shop"}}
			checkDecision(t, AppAllowed(proj, spec, tt.cluster), tt.want)
		})
	}
	if err := ClusterScopeAllowed("team-a", Cluster{Server: server, Project: "secret-team"}); err == nil || strings.Contains(err.Error(), "secret-team") {
		t.Errorf("ClusterScopeAllowed = %v, want a refusal that does not name the other project", err)
	}
}
