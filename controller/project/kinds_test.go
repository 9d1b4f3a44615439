package project

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func TestClusterResourceAllowed(t *testing.T) {
	tests := []struct {
		name         string
		white, black []metav1.GroupKind
		group, kind  string
		want         string
	}{
		{"empty whitelist allows nothing", nil, nil, "rbac.authorization.k8s.io", "ClusterRole",
			"resource rbac.authorization.k8s.io:ClusterRole is not permitted in project team-a (not in clusterResourceWhitelist)"},
		{"all", []metav1.GroupKind{gk("*", "*")}, nil, "rbac.authorization.k8s.io", "ClusterRole", ""},
		{"exact core kind", []metav1.GroupKind{gk("", "Namespace")}, nil, "", "Namespace", ""},
		{"core group is not any group", []metav1.GroupKind{gk("", "Namespace")}, nil, "example.com", "Namespace",
			"resource example.com:Namespace is not permitted in project team-a (not in clusterResourceWhitelist)"},
		{"other kind", []metav1.GroupKind{gk("", "Namespace")}, nil, "rbac.authorization.k8s.io", "ClusterRole", "~not in clusterResourceWhitelist"},
		{"group glob", []metav1.GroupKind{gk("*.k8s.io", "*")}, nil, "rbac.authorization.k8s.io", "ClusterRoleBinding", ""},
		{"kind glob", []metav1.GroupKind{gk("rbac.authorization.k8s.io", "ClusterRole*")}, nil, "rbac.authorization.k8s.io", "ClusterRoleBinding", ""},
		{"kinds are case-sensitive", []metav1.GroupKind{gk("", "namespace")}, nil, "", "Namespace", "~not permitted"},
		{"blacklist wins", []metav1.GroupKind{gk("*", "*")}, []metav1.GroupKind{gk("rbac.authorization.k8s.io", "*")}, "rbac.authorization.k8s.io", "ClusterRole",
			"resource rbac.authorization.k8s.io:ClusterRole is not permitted in project team-a (in clusterResourceBlacklist)"},
		{"blacklist alone allows nothing", nil, []metav1.GroupKind{gk("", "Namespace")}, "", "PersistentVolume", "~not in clusterResourceWhitelist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := v1alpha1.AppProjectSpec{ClusterResourceWhitelist: tt.white, ClusterResourceBlacklist: tt.black}
			checkDecision(t, mustCompile(t, spec).ClusterResourceAllowed(tt.group, tt.kind), tt.want)
			err := ClusterResourceAllowed(newProject(spec), tt.group, tt.kind)
			if (err == nil) != (tt.want == "") {
				t.Errorf("ClusterResourceAllowed = %v, Rules disagrees", err)
			}
		})
	}
}

func TestNamespaceResourceAllowed(t *testing.T) {
	tests := []struct {
		name         string
		white, black []metav1.GroupKind
		group, kind  string
		want         string
	}{
		{"unset whitelist allows all", nil, nil, "apps", "Deployment", ""},
		{"empty whitelist allows none", []metav1.GroupKind{}, nil, "apps", "Deployment",
			"resource apps:Deployment is not permitted in project team-a (not in namespaceResourceWhitelist)"},
		{"whitelist", []metav1.GroupKind{gk("apps", "*"), gk("", "ConfigMap")}, nil, "", "ConfigMap", ""},
		{"not whitelisted", []metav1.GroupKind{gk("apps", "*")}, nil, "", "Secret",
			"resource :Secret is not permitted in project team-a (not in namespaceResourceWhitelist)"},
		{"blacklist", nil, []metav1.GroupKind{gk("", "ResourceQuota"), gk("", "LimitRange")}, "", "LimitRange",
			"resource :LimitRange is not permitted in project team-a (in namespaceResourceBlacklist)"},
		{"blacklist lets others through", nil, []metav1.GroupKind{gk("", "ResourceQuota")}, "", "ConfigMap", ""},
		{"blacklist glob", nil, []metav1.GroupKind{gk("networking.k8s.io", "Network*")}, "networking.k8s.io", "NetworkPolicy", "~in namespaceResourceBlacklist"},
		{"blacklist wins over whitelist", []metav1.GroupKind{gk("*", "*")}, []metav1.GroupKind{gk("*", "*")}, "apps", "Deployment", "~in namespaceResourceBlacklist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := v1alpha1.AppProjectSpec{NamespaceResourceWhitelist: tt.white, NamespaceResourceBlacklist: tt.black}
			checkDecision(t, mustCompile(t, spec).NamespaceResourceAllowed(tt.group, tt.kind), tt.want)
			err := NamespaceResourceAllowed(newProject(spec), tt.group, tt.kind)
			if (err == nil) != (tt.want == "") {
				t.Errorf("NamespaceResourceAllowed = %v, Rules disagrees", err)
			}
		})
	}
}

func TestResourceAllowed(t *testing.T) {
	r := mustCompile(t, v1alpha1.AppProjectSpec{
		Destinations:               []v1alpha1.ApplicationDestination{{Server: "https://kubernetes.default.svc", Namespace: "shop"}},
		ClusterResourceWhitelist:   []metav1.GroupKind{gk("", "Namespace")},
		NamespaceResourceBlacklist: []metav1.GroupKind{gk("", "ResourceQuota")},
	})
	const server = "https://kubernetes.default.svc"
	checkDecision(t, r.ResourceAllowed("apps", "Deployment", "shop", server, ""), "")
	checkDecision(t, r.ResourceAllowed("", "Namespace", "", server, ""), "")
	checkDecision(t, r.ResourceAllowed("rbac.authorization.k8s.io", "ClusterRole", "", server, ""), "~not in clusterResourceWhitelist")
	checkDecision(t, r.ResourceAllowed("", "ResourceQuota", "shop", server, ""), "~in namespaceResourceBlacklist")
	// A manifest that names another namespace than the project allows.
	checkDecision(t, r.ResourceAllowed("apps", "Deployment", "kube-system", server, ""),
		"application destination server 'https://kubernetes.default.svc' and namespace 'kube-system' do not match any of the allowed destinations in project 'team-a'")
}
