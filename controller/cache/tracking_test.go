package cache

import (
	"maps"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/graphcd/graphcd/internal/settings"
)

func TestTrackingAppOf(t *testing.T) {
	deploy := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	role := schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}
	obj := func(labels, annotations map[string]string) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Name: "web", Namespace: "prod", Labels: labels, Annotations: annotations}
	}
	id := func(v string) map[string]string { return map[string]string{TrackingIDAnnotation: v} }
	label := Tracking{Method: settings.TrackingLabel}
	ann := Tracking{Method: settings.TrackingAnnotation}
	tests := []struct {
		name     string
		tracking Tracking
		obj      *metav1.ObjectMeta
		gk       schema.GroupKind
		want     string
	}{
		{"default is annotation", Tracking{}, obj(nil, id("a:apps/Deployment:prod/web")), deploy, "a"},
		{"default ignores the label", Tracking{}, obj(map[string]string{settings.DefaultInstanceLabelKey: "guestbook"}, nil), deploy, ""},
		{"label", label, obj(map[string]string{settings.DefaultInstanceLabelKey: "guestbook"}, nil), deploy, "guestbook"},
		{"no label", label, obj(nil, nil), deploy, ""},
		{"custom label", Tracking{Method: settings.TrackingLabel, LabelKey: "argocd.argoproj.io/instance"}, obj(map[string]string{"argocd.argoproj.io/instance": "a"}, nil), deploy, "a"},
		{"label ignores annotation", label, obj(nil, id("a:apps/Deployment:prod/web")), deploy, ""},
		{"annotation", ann, obj(nil, id("a:apps/Deployment:prod/web")), deploy, "a"},
		{"annotation+label reads the annotation", Tracking{Method: settings.TrackingAnnotationAndLabel}, obj(map[string]string{settings.DefaultInstanceLabelKey: "b"}, id("a:apps/Deployment:prod/web")), deploy, "a"},
		{"annotation+label ignores a lone label", Tracking{Method: settings.TrackingAnnotationAndLabel}, obj(map[string]string{settings.DefaultInstanceLabelKey: "b"}, nil), deploy, ""},
		{"annotation ignores label", ann, obj(map[string]string{settings.DefaultInstanceLabelKey: "a"}, nil), deploy, ""},
		{"copied: other name", ann, obj(nil, id("a:apps/Deployment:prod/api")), deploy, ""},
		{"copied: other kind", ann, obj(nil, id("a:apps/Deployment:prod/web")), schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, ""},
		{"copied: other namespace", ann, obj(nil, id("a:apps/Deployment:dev/web")), deploy, ""},
		{"namespaced object, id without namespace", ann, obj(nil, id("a:apps/Deployment:/web")), deploy, ""},
		{"cluster-scoped, id with the destination namespace", ann, &metav1.ObjectMeta{Name: "web", Annotations: id("a:rbac.authorization.k8s.io/ClusterRole:prod/web")}, role, "a"},
		{"cluster-scoped, id without namespace", ann, &metav1.ObjectMeta{Name: "web", Annotations: id("a:rbac.authorization.k8s.io/ClusterRole:/web")}, role, "a"},
		{"core group", ann, obj(nil, id("a:/Service:prod/web")), schema.GroupKind{Kind: "Service"}, "a"},
		{"malformed", ann, obj(nil, id("a:Deployment")), deploy, ""},
		{"no app", ann, obj(nil, id(":apps/Deployment:prod/web")), deploy, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.tracking.AppOf(tt.obj, tt.gk); got != tt.want {
				t.Errorf("AppOf = %q, want %q", got, tt.want)
			}
		})
	}
}

// Mark writes what AppOf reads back, and writes what Argo CD writes: the
// same tracking id, the destination namespace for objects without one, a
// label cut to 63 characters under annotation+label.
func TestTrackingMark(t *testing.T) {
	deploy := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	role := schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}
	long := strings.Repeat("a", 62) + "-bcd" // cut at 63, then its "-" goes
	tests := []struct {
		name        string
		tracking    Tracking
		app         string
		obj         *metav1.ObjectMeta
		gk          schema.GroupKind
		labels, ann map[string]string
	}{
		{"default", Tracking{}, "guestbook", &metav1.ObjectMeta{Name: "web", Namespace: "prod", Labels: map[string]string{"tier": "web"}}, deploy,
			map[string]string{"tier": "web"}, map[string]string{TrackingIDAnnotation: "guestbook:apps/Deployment:prod/web"}},
		{"cluster-scoped gets the destination namespace", Tracking{}, "guestbook", &metav1.ObjectMeta{Name: "reader"}, role,
			nil, map[string]string{TrackingIDAnnotation: "guestbook:rbac.authorization.k8s.io/ClusterRole:dest/reader"}},
		{"label", Tracking{Method: settings.TrackingLabel}, "guestbook", &metav1.ObjectMeta{Name: "web", Namespace: "prod", Annotations: map[string]string{"x": "y"}}, deploy,
			map[string]string{settings.DefaultInstanceLabelKey: "guestbook"}, map[string]string{"x": "y"}},
		{"custom label", Tracking{Method: settings.TrackingLabel, LabelKey: "team.io/app"}, "guestbook", &metav1.ObjectMeta{Name: "web", Namespace: "prod"}, deploy,
			map[string]string{"team.io/app": "guestbook"}, nil},
		{"annotation+label", Tracking{Method: settings.TrackingAnnotationAndLabel}, "guestbook", &metav1.ObjectMeta{Name: "web", Namespace: "prod"}, deploy,
			map[string]string{settings.DefaultInstanceLabelKey: "guestbook"}, map[string]string{TrackingIDAnnotation: "guestbook:apps/Deployment:prod/web"}},
		{"annotation+label cuts a long label", Tracking{Method: settings.TrackingAnnotationAndLabel}, long, &metav1.ObjectMeta{Name: "web", Namespace: "prod"}, deploy,
			map[string]string{settings.DefaultInstanceLabelKey: strings.Repeat("a", 62)}, map[string]string{TrackingIDAnnotation: long + ":apps/Deployment:prod/web"}},
		{"a tracking id from Git is replaced", Tracking{}, "guestbook", &metav1.ObjectMeta{Name: "web", Namespace: "prod", Annotations: map[string]string{TrackingIDAnnotation: "other:apps/Deployment:prod/web"}}, deploy,
			nil, map[string]string{TrackingIDAnnotation: "guestbook:apps/Deployment:prod/web"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.tracking.Mark(tt.obj, tt.gk, tt.app, "dest")
			if !maps.Equal(tt.obj.Labels, tt.labels) || !maps.Equal(tt.obj.Annotations, tt.ann) {
				t.Errorf("labels %v, annotations %v; want %v and %v", tt.obj.Labels, tt.obj.Annotations, tt.labels, tt.ann)
			}
			if got := tt.tracking.AppOf(tt.obj, tt.gk); got != tt.app {
				t.Errorf("AppOf after Mark = %q, want %q", got, tt.app)
			}
		})
	}
}

// Mark keeps every other label and annotation of an unstructured object,
// values that are not strings included, so that the sync can still report
// them; metadata that is not a map is left for the API server to refuse.
func TestTrackingMarkKeepsOddMetadata(t *testing.T) {
	gk := schema.GroupKind{Kind: "ConfigMap"}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cfg", "namespace": "prod",
			"annotations": map[string]any{"argocd.argoproj.io/sync-wave": int64(1)},
			"labels":      map[string]any{"tier": true}},
	}}
	Tracking{Method: settings.TrackingAnnotationAndLabel}.Mark(u, gk, "web", "dest")
	meta := u.Object["metadata"].(map[string]any)
	want := map[string]any{
		"argocd.argoproj.io/sync-wave": int64(1),
		TrackingIDAnnotation:           "web:/ConfigMap:prod/cfg",
	}
	if !maps.Equal(meta["annotations"].(map[string]any), want) {
		t.Errorf("annotations = %v, want %v", meta["annotations"], want)
	}
	if l := meta["labels"].(map[string]any); l["tier"] != true || l[settings.DefaultInstanceLabelKey] != "web" {
		t.Errorf("labels = %v, want tier kept and the instance label added", l)
	}
	bad := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x", "annotations": "oops"}}}
	Tracking{}.Mark(bad, gk, "web", "dest")
	if got := bad.Object["metadata"].(map[string]any)["annotations"]; got != "oops" {
		t.Errorf("annotations that are not a map became %v", got)
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

func TestInstanceName(t *testing.T) {
	for _, tc := range []struct {
		namespace, name, own, want string
	}{
		{"graphcd", "web", "graphcd", "web"},
		{"team-a", "web", "graphcd", "team-a_web"},
		{"team-a", "web", "", "web"}, // one namespace serving alone
		{"", "web", "graphcd", "web"},
	} {
		got := InstanceName(tc.namespace, tc.name, tc.own)
		if got != tc.want {
			t.Errorf("InstanceName(%q, %q, %q) = %q, want %q", tc.namespace, tc.name, tc.own, got, tc.want)
		}
		ns, name := AppOfInstance(got, tc.own)
		wantNS := tc.namespace
		if got == tc.name {
			wantNS = tc.own
		}
		if ns != wantNS || name != tc.name {
			t.Errorf("AppOfInstance(%q, %q) = %q, %q; want %q, %q", got, tc.own, ns, name, wantNS, tc.name)
		}
	}
	for _, odd := range []string{"_web", "team-a_", "_"} {
		if ns, name := AppOfInstance(odd, "graphcd"); ns != "graphcd" || name != odd {
			t.Errorf("AppOfInstance(%q) = %q, %q; want it taken as a name in graphcd", odd, ns, name)
		}
	}
}
