//go:build integration

package cache

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/graphcd/graphcd/internal/settings"
)

func TestLabelTracking(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	app := "lbl-" + ns
	c := startCache(t, Options{})

	createConfigMap(t, ns, "mine", map[string]string{settings.DefaultInstanceLabelKey: app}, nil)
	createConfigMap(t, ns, "other", nil, nil)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: ns, Labels: map[string]string{settings.DefaultInstanceLabelKey: app}}}
	if _, err := cluster.Client.CoreV1().Secrets(ns).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create secret: %v", err)
	}
	want := []ResourceKey{
		{Kind: "ConfigMap", Namespace: ns, Name: "mine"},
		{Kind: "Secret", Namespace: ns, Name: "creds"},
	}
	eventually(t, "managed objects", func() bool { return len(c.Managed(app)) == len(want) })
	if diff := cmp.Diff(c.Managed(app), want); diff != "" {
		t.Errorf("Managed (-got +want):\n%s", diff)
	}
}

func TestAnnotationTracking(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	app := "ann-" + ns
	c := startCache(t, Options{TrackingMethod: settings.TrackingAnnotation})
	cm := schema.GroupKind{Kind: "ConfigMap"}

	createConfigMap(t, ns, "ours", nil, map[string]string{TrackingIDAnnotation: TrackingID(app, cm, ns, "ours")})
	createConfigMap(t, ns, "also-ours", map[string]string{settings.DefaultInstanceLabelKey: "someone-else"}, map[string]string{TrackingIDAnnotation: TrackingID(app, cm, ns, "also-ours")})
	// A copy of "ours" carrying its annotation belongs to nobody.
	createConfigMap(t, ns, "copy", nil, map[string]string{TrackingIDAnnotation: TrackingID(app, cm, ns, "ours")})
	createConfigMap(t, ns, "labelled", map[string]string{settings.DefaultInstanceLabelKey: app}, nil)

	eventually(t, "all configmaps indexed", func() bool {
		return c.seen(ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "copy"}, "") &&
			c.seen(ResourceKey{Kind: "ConfigMap", Namespace: ns, Name: "labelled"}, "")
	})
	eventually(t, "managed objects", func() bool { return len(c.Managed(app)) >= 2 })
	want := []ResourceKey{
		{Kind: "ConfigMap", Namespace: ns, Name: "also-ours"},
		{Kind: "ConfigMap", Namespace: ns, Name: "ours"},
	}
	if diff := cmp.Diff(c.Managed(app), want); diff != "" {
		t.Errorf("Managed (-got +want):\n%s", diff)
	}
}

func TestExclusionsHonoured(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	app := "excl-" + ns
	c := startCache(t, Options{Exclusions: []settings.ResourceFilter{{APIGroups: []string{""}, Kinds: []string{"ConfigMap"}}}})

	createConfigMap(t, ns, "hidden", map[string]string{settings.DefaultInstanceLabelKey: app}, nil)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "shown", Namespace: ns, Labels: map[string]string{settings.DefaultInstanceLabelKey: app}}}
	if _, err := cluster.Client.CoreV1().Secrets(ns).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create secret: %v", err)
	}
	eventually(t, "secret managed", func() bool { return len(c.Managed(app)) > 0 })
	want := []ResourceKey{{Kind: "Secret", Namespace: ns, Name: "shown"}}
	if diff := cmp.Diff(c.Managed(app), want); diff != "" {
		t.Errorf("Managed (-got +want):\n%s", diff)
	}
	c.syncMu.Lock()
	_, watched := c.watches[schema.GroupKind{Kind: "ConfigMap"}]
	c.syncMu.Unlock()
	if watched {
		t.Error("excluded ConfigMaps are watched")
	}
	// The kind is still known for applying and fetching.
	if gvr, err := c.ResourceFor(schema.GroupKind{Kind: "ConfigMap"}); err != nil || gvr.Resource != "configmaps" {
		t.Errorf("ResourceFor(ConfigMap) = %v, %v", gvr, err)
	}
}
