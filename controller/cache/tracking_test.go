package cache

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/graphcd/graphcd/internal/settings"
)

func TestTrackingAppOf(t *testing.T) {
	deploy := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	obj := func(labels, annotations map[string]string) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Name: "web", Namespace: "prod", Labels: labels, Annotations: annotations}
	}
	tests := []struct {
		name     string
		tracking Tracking
		obj      *metav1.ObjectMeta
		gk       schema.GroupKind
		want     string
	}{
		{"default label", Tracking{}, obj(map[string]string{DefaultInstanceLabelKey: "guestbook"}, nil), deploy, "guestbook"},
		{"no label", Tracking{}, obj(nil, nil), deploy, ""},
		{"custom label", Tracking{LabelKey: "argocd.argoproj.io/instance"}, obj(map[string]string{"argocd.argoproj.io/instance": "a"}, nil), deploy, "a"},
		{"label ignores annotation", Tracking{Method: TrackingLabel}, obj(nil, map[string]string{TrackingIDAnnotation: "a:apps/Deployment:prod/web"}), deploy, ""},
		{"annotation", Tracking{Method: TrackingAnnotation}, obj(nil, map[string]string{TrackingIDAnnotation: "a:apps/Deployment:prod/web"}), deploy, "a"},
		{"argo annotation", Tracking{Method: TrackingAnnotationAndLabel}, obj(nil, map[string]string{ArgoTrackingIDAnnotation: "a:apps/Deployment:prod/web"}), deploy, "a"},
		{"annotation ignores label", Tracking{Method: TrackingAnnotation}, obj(map[string]string{DefaultInstanceLabelKey: "a"}, nil), deploy, ""},
		{"copied: other name", Tracking{Method: TrackingAnnotation}, obj(nil, map[string]string{TrackingIDAnnotation: "a:apps/Deployment:prod/api"}), deploy, ""},
		{"copied: other kind", Tracking{Method: TrackingAnnotation}, obj(nil, map[string]string{TrackingIDAnnotation: "a:apps/Deployment:prod/web"}), schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, ""},
		{"copied: other namespace", Tracking{Method: TrackingAnnotation}, obj(nil, map[string]string{TrackingIDAnnotation: "a:apps/Deployment:dev/web"}), deploy, ""},
		{"empty namespace", Tracking{Method: TrackingAnnotation}, obj(nil, map[string]string{TrackingIDAnnotation: "a:apps/Deployment:/web"}), deploy, "a"},
		{"core group", Tracking{Method: TrackingAnnotation}, obj(nil, map[string]string{TrackingIDAnnotation: "a:/Service:prod/web"}), schema.GroupKind{Kind: "Service"}, "a"},
		{"malformed", Tracking{Method: TrackingAnnotation}, obj(nil, map[string]string{TrackingIDAnnotation: "a:Deployment"}), deploy, ""},
		{"bad graphcd, good argo", Tracking{Method: TrackingAnnotation}, obj(nil, map[string]string{TrackingIDAnnotation: "x:apps/Deployment:prod/other", ArgoTrackingIDAnnotation: "a:apps/Deployment:prod/web"}), deploy, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.tracking.AppOf(tt.obj, tt.gk); got != tt.want {
				t.Errorf("AppOf = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTrackingIDRoundTrip(t *testing.T) {
	gk := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	o := &metav1.ObjectMeta{Name: "web", Namespace: "prod", Annotations: map[string]string{
		TrackingIDAnnotation: TrackingID("guestbook", gk, "prod", "web"),
	}}
	if got := (Tracking{Method: TrackingAnnotation}).AppOf(o, gk); got != "guestbook" {
		t.Errorf("AppOf = %q, want guestbook", got)
	}
	if got := AppOf(&metav1.ObjectMeta{Labels: map[string]string{DefaultInstanceLabelKey: "x"}}, gk); got != "x" {
		t.Errorf("package AppOf = %q, want x", got)
	}
}

func TestFilterWatched(t *testing.T) {
	cm := schema.GroupKind{Kind: "ConfigMap"}
	cilium := schema.GroupKind{Group: "cilium.io", Kind: "CiliumIdentity"}
	tests := []struct {
		name string
		f    filter
		gk   schema.GroupKind
		want bool
	}{
		{"default", filter{}, cm, true},
		{"builtin event", filter{}, schema.GroupKind{Kind: "Event"}, false},
		{"builtin lease", filter{}, schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"}, false},
		{"excluded kind", filter{exclusions: []settings.ResourceFilter{{Kinds: []string{"ConfigMap"}}}}, cm, false},
		{"excluded group glob", filter{exclusions: []settings.ResourceFilter{{APIGroups: []string{"*.io"}}}}, cilium, false},
		{"exclusion other cluster", filter{clusterURL: "https://a", exclusions: []settings.ResourceFilter{{APIGroups: []string{"cilium.io"}, Clusters: []string{"https://b"}}}}, cilium, true},
		{"exclusion cluster glob", filter{clusterURL: "https://a.example/x", exclusions: []settings.ResourceFilter{{APIGroups: []string{"cilium.io"}, Clusters: []string{"https://*"}}}}, cilium, false},
		{"inclusion misses", filter{inclusions: []settings.ResourceFilter{{APIGroups: []string{"apps"}}}}, cm, false},
		{"inclusion hits", filter{inclusions: []settings.ResourceFilter{{APIGroups: []string{""}, Kinds: []string{"Config*"}}}}, cm, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.watched(tt.gk); got != tt.want {
				t.Errorf("watched(%s) = %v, want %v", tt.gk, got, tt.want)
			}
		})
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"a*c", "abbc", true},
		{"a*c", "abbd", false},
		{"*.k8s.io", "events.k8s.io", true},
		{"https://*:6443", "https://10.0.0.1:6443", true},
		{"a*b*c", "axxbyyc", true},
		{"abc", "abc", true},
		{"abc", "abcd", false},
	}
	for _, tt := range tests {
		if got := glob(tt.pattern, tt.s); got != tt.want {
			t.Errorf("glob(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}
