package project

import (
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func TestDestinationAllowed(t *testing.T) {
	const inCluster = "https://kubernetes.default.svc"
	type dst = v1alpha1.ApplicationDestination
	// The example of Argo CD's documentation: anything but kube-system and
	// clusters whose URL starts with https://team1-.
	argoExample := []dst{
		{Server: "*", Namespace: "!kube-system"},
		{Server: "!https://team1-*", Namespace: "*"},
		{Server: "*", Namespace: "*"},
	}
	tests := []struct {
		name                       string
		dests                      []dst
		server, cluster, namespace string
		want                       string
	}{
		{"no destinations allow nothing", nil, inCluster, "", "default",
			"application destination server 'https://kubernetes.default.svc' and namespace 'default' do not match any of the allowed destinations in project 'team-a'"},
		{"any", []dst{{Server: "*", Namespace: "*"}}, inCluster, "", "kube-system", ""},
		{"exact server and namespace", []dst{{Server: inCluster, Namespace: "shop"}}, inCluster, "", "shop", ""},
		{"other namespace", []dst{{Server: inCluster, Namespace: "shop"}}, inCluster, "", "kube-system",
			"application destination server 'https://kubernetes.default.svc' and namespace 'kube-system' do not match any of the allowed destinations in project 'team-a'"},
		{"other server", []dst{{Server: inCluster, Namespace: "*"}}, "https://prod.example.com", "", "shop", "~do not match any of the allowed destinations"},
		{"namespace glob", []dst{{Server: inCluster, Namespace: "team-a-*"}}, inCluster, "", "team-a-web", ""},
		{"namespace glob miss", []dst{{Server: inCluster, Namespace: "team-a-*"}}, inCluster, "", "team-b-web", "~do not match"},
		{"server glob crosses slashes", []dst{{Server: "https://*", Namespace: "*"}}, "https://host:6443/path", "", "x", ""},
		{"server glob class", []dst{{Server: "https://prod-[0-9].example.com", Namespace: "*"}}, "https://prod-3.example.com", "", "x", ""},
		{"cluster-scoped with star namespace", []dst{{Server: inCluster, Namespace: "*"}}, inCluster, "", "", ""},
		{"cluster-scoped needs star or empty namespace", []dst{{Server: inCluster, Namespace: "shop"}}, inCluster, "", "",
			"application destination server 'https://kubernetes.default.svc' and namespace '' do not match any of the allowed destinations in project 'team-a'"},
		{"cluster-scoped with empty namespace entry", []dst{{Server: inCluster}}, inCluster, "", "", ""},
		{"entry by name, app by name", []dst{{Name: "in-cluster", Namespace: "*"}}, "", "in-cluster", "shop", ""},
		{"entry by name, app by server only", []dst{{Name: "in-cluster", Namespace: "*"}}, inCluster, "", "shop", "~do not match"},
		{"entry by server, app by name only", []dst{{Server: inCluster, Namespace: "*"}}, "", "in-cluster", "shop",
			"application destination name 'in-cluster' and namespace 'shop' do not match any of the allowed destinations in project 'team-a'"},
		{"entry by server, app by both", []dst{{Server: inCluster, Namespace: "*"}}, inCluster, "in-cluster", "shop", ""},
		{"entry by name glob, app by both", []dst{{Name: "prod-*", Namespace: "*"}}, "https://p", "prod-eu", "x", ""},
		{"argo example allows others", argoExample, "https://prod.example.com", "", "shop", ""},
		{"argo example denies kube-system", argoExample, "https://prod.example.com", "", "kube-system",
			"application destination server 'https://prod.example.com' and namespace 'kube-system' is not permitted in project 'team-a' (denied by destination {server: '*', namespace: '!kube-system'})"},
		{"argo example denies team1 clusters", argoExample, "https://team1-eu.example.com", "", "shop",
			"application destination server 'https://team1-eu.example.com' and namespace 'shop' is not permitted in project 'team-a' (denied by destination {server: '!https://team1-*', namespace: '*'})"},
		{"negated server refuses an unknown server", argoExample, "", "prod", "shop", "~denied by destination {server: '!https://team1-*'"},
		{"negated server passes a known server", argoExample, "https://prod.example.com", "prod", "shop", ""},
		{"deny entry alone allows nothing", []dst{{Server: "*", Namespace: "!kube-system"}}, inCluster, "", "shop", "~do not match any"},
		{"negated field denies whatever the other fields", []dst{
			{Server: "https://other", Namespace: "!kube-system"}, {Server: "*", Namespace: "*"},
		}, inCluster, "", "kube-system", "~denied by destination"},
		{"negated namespace passes cluster-scoped", []dst{{Server: "*", Namespace: "!kube-system"}, {Server: "*", Namespace: "*"}}, inCluster, "", "", ""},
		{"negated name", []dst{{Name: "!legacy-*", Namespace: "*"}, {Server: "*", Namespace: "*"}}, "https://x", "legacy-1", "shop",
			"application destination server 'https://x', name 'legacy-1' and namespace 'shop' is not permitted in project 'team-a' (denied by destination {name: '!legacy-*', namespace: '*'})"},
		{"negated name refuses an unknown name", []dst{{Name: "!legacy-*", Namespace: "*"}, {Server: "*", Namespace: "*"}}, "https://x", "", "shop", "~denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := v1alpha1.AppProjectSpec{Destinations: tt.dests}
			r := mustCompile(t, spec)
			checkDecision(t, r.DestinationAllowed(tt.server, tt.cluster, tt.namespace), tt.want)
			err := DestinationAllowed(newProject(spec), tt.server, tt.cluster, tt.namespace)
			if (err == nil) != (tt.want == "") {
				t.Errorf("DestinationAllowed = %v, Rules.DestinationAllowed disagrees", err)
			}
		})
	}
}
