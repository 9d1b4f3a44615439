package project

import (
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func TestOrphanedResourcesSettings(t *testing.T) {
	yes, no := true, false
	for _, tt := range []struct {
		name            string
		settings        *v1alpha1.OrphanedResourcesMonitorSettings
		monitored, warn bool
	}{
		{"unset", nil, false, false},
		{"set, warn unset", &v1alpha1.OrphanedResourcesMonitorSettings{}, true, true},
		{"warn true", &v1alpha1.OrphanedResourcesMonitorSettings{Warn: &yes}, true, true},
		{"warn false", &v1alpha1.OrphanedResourcesMonitorSettings{Warn: &no}, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := mustCompile(t, v1alpha1.AppProjectSpec{OrphanedResources: tt.settings})
			if got := r.OrphanedResourcesMonitored(); got != tt.monitored {
				t.Errorf("OrphanedResourcesMonitored = %v, want %v", got, tt.monitored)
			}
			if got := r.OrphanedResourcesWarn(); got != tt.warn {
				t.Errorf("OrphanedResourcesWarn = %v, want %v", got, tt.warn)
			}
			if got := OrphanedWarn(tt.settings); got != tt.warn {
				t.Errorf("OrphanedWarn = %v, want %v", got, tt.warn)
			}
		})
	}
}

func TestOrphanedIgnored(t *testing.T) {
	settings := &v1alpha1.OrphanedResourcesMonitorSettings{Ignore: []v1alpha1.OrphanedResourceKey{
		{Group: "", Kind: "ConfigMap", Name: "istio-ca-*"},
		{Group: "apps", Kind: "Deployment"},
		{Group: "*.example.com", Name: "keep-*"},
		{Group: "cert-manager.io", Kind: "Cert?ficate", Name: "[a-c]*"},
	}}
	for _, tt := range []struct {
		group, kind, name string
		want              bool
	}{
		{"", "ConfigMap", "istio-ca-root-cert", true},
		{"", "ConfigMap", "settings", false},
		{"", "Secret", "istio-ca-root-cert", false},
		{"apps", "Deployment", "anything", true},
		{"apps", "StatefulSet", "anything", false},
		{"", "Deployment", "anything", false}, // "apps" is not the core group
		{"widgets.example.com", "Widget", "keep-me", true},
		{"widgets.example.com", "Widget", "drop-me", false},
		{"cert-manager.io", "Certificate", "api-tls", true},
		{"cert-manager.io", "Certificate", "web-tls", false},
	} {
		r := mustCompile(t, v1alpha1.AppProjectSpec{OrphanedResources: settings})
		if got := r.OrphanedIgnored(tt.group, tt.kind, tt.name); got != tt.want {
			t.Errorf("Rules.OrphanedIgnored(%q, %q, %q) = %v, want %v", tt.group, tt.kind, tt.name, got, tt.want)
		}
		if got := OrphanedIgnored(settings, tt.group, tt.kind, tt.name); got != tt.want {
			t.Errorf("OrphanedIgnored(%q, %q, %q) = %v, want %v", tt.group, tt.kind, tt.name, got, tt.want)
		}
	}
	if OrphanedIgnored(nil, "", "ConfigMap", "x") {
		t.Error("nil settings ignore something")
	}
}

func TestKnownOrphanExclusion(t *testing.T) {
	for _, tt := range []struct {
		namespace, group, kind, name string
		want                         bool
	}{
		{"shop", "", "ServiceAccount", "default", true},
		{"shop", "", "ConfigMap", "kube-root-ca.crt", true},
		{"default", "", "Service", "kubernetes", true},
		{"shop", "", "Service", "kubernetes", false},
		{"shop", "", "ServiceAccount", "builder", false},
		{"shop", "example.com", "ServiceAccount", "default", false},
	} {
		if got := KnownOrphanExclusion(tt.namespace, tt.group, tt.kind, tt.name); got != tt.want {
			t.Errorf("KnownOrphanExclusion(%q, %q, %q, %q) = %v, want %v", tt.namespace, tt.group, tt.kind, tt.name, got, tt.want)
		}
	}
}
