//go:build integration

package cache

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/graphcd/graphcd/internal/settings"
)

// lockedBuffer is a log sink the informer goroutines may share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// namespaceUser returns a client config for a user who may do anything
// in namespaces, and nothing else (beyond discovery, which every
// authenticated user has).
func namespaceUser(t *testing.T, user string, namespaces ...string) *rest.Config {
	t.Helper()
	rbac := cluster.Client.RbacV1()
	for _, ns := range namespaces {
		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}},
		}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: user},
			Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}},
		}
		if _, err := rbac.Roles(ns).Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create role: %v", err)
		}
		if _, err := rbac.RoleBindings(ns).Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create binding: %v", err)
		}
	}
	cfg := rest.CopyConfig(cluster.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return cfg
}

// listedNamespaces returns the namespaces the informers of gk list, ""
// for all, sorted.
func (c *Cluster) listedNamespaces(gk schema.GroupKind) []string {
	c.mu.RLock()
	w := c.running[gk]
	c.mu.RUnlock()
	if w == nil {
		return nil
	}
	var out []string
	for ns := range w.lists {
		out = append(out, ns)
	}
	slices.Sort(out)
	return out
}

// clusterScopedRunning lists the cluster-scoped kinds the cache watches.
func (c *Cluster) clusterScopedRunning() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []string
	for gk := range c.running {
		if r, ok := c.resources[gk]; ok && !r.namespaced {
			out = append(out, gk.String())
		}
	}
	return out
}

// A cache limited to two namespaces starts with credentials that may read
// only those namespaces: it lists and watches each kind per namespace,
// never cluster-wide (no list is refused), indexes objects there and not
// elsewhere, watches no cluster-scoped kind, and InScope refuses objects
// outside its namespaces and cluster-scoped ones.
func TestNamespacesLimitTheCache(t *testing.T) {
	t.Parallel()
	a, b, other := cluster.Namespace(t), cluster.Namespace(t), cluster.Namespace(t)
	app := "scoped-" + a
	var logs lockedBuffer
	cfg := namespaceUser(t, "scoped-"+a, a, b)
	c := startCache(t, Options{
		Config: cfg, ClusterURL: "https://scoped.example.com", Namespaces: []string{b, a, " "},
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if got, want := c.Namespaces(), []string{a, b}; !slices.Equal(got, want) {
		t.Errorf("Namespaces() = %v, want %v", got, want)
	}

	label := map[string]string{settings.DefaultInstanceLabelKey: app}
	createConfigMap(t, a, "in-a", label, nil)
	createConfigMap(t, b, "in-b", label, nil)
	createConfigMap(t, other, "elsewhere", label, nil)
	want := []ResourceKey{
		{Kind: "ConfigMap", Namespace: a, Name: "in-a"},
		{Kind: "ConfigMap", Namespace: b, Name: "in-b"},
	}
	eventually(t, "both namespaces indexed", func() bool { return len(c.Managed(app)) == 2 })
	if d := cmp.Diff(c.Managed(app), want); d != "" {
		t.Errorf("Managed (-got +want):\n%s", d)
	}
	if got, want := c.listedNamespaces(schema.GroupKind{Kind: "ConfigMap"}), []string{a, b}; !slices.Equal(got, want) {
		t.Errorf("ConfigMaps listed in %q, want %q", got, want)
	}
	if got := c.clusterScopedRunning(); len(got) != 0 {
		t.Errorf("cluster-scoped kinds watched without clusterResources: %v", got)
	}
	if l := logs.String(); strings.Contains(l, "cannot list") {
		t.Errorf("the cache attempted lists its credentials may not make:\n%s", l)
	}

	// Lookup answers from the index in a watched namespace.
	if obj, err := c.Lookup(t.Context(), ResourceKey{Kind: "ConfigMap", Namespace: b, Name: "missing"}); obj != nil || err != nil {
		t.Errorf("Lookup of a missing object = %v, %v; want nil, nil", obj, err)
	}

	cm, ns := schema.GroupKind{Kind: "ConfigMap"}, schema.GroupKind{Kind: "Namespace"}
	if err := c.InScope(cm, b, "x"); err != nil {
		t.Errorf("InScope in an allowed namespace: %v", err)
	}
	var scope *OutOfScopeError
	err := c.InScope(cm, other, "x")
	if !errors.As(err, &scope) || scope.ClusterScoped ||
		err.Error() != "ConfigMap "+other+"/x is in namespace "+other+", which the cluster secret of https://scoped.example.com does not allow (its namespaces: "+a+", "+b+")" {
		t.Errorf("InScope in another namespace: %v", err)
	}
	err = c.InScope(ns, "", "x")
	if !errors.As(err, &scope) || !scope.ClusterScoped || !strings.Contains(err.Error(), `Namespace x is cluster-scoped: the cluster secret of https://scoped.example.com allows only namespaces `+a+", "+b) {
		t.Errorf("InScope of a cluster-scoped kind: %v", err)
	}
}

// With clusterResources the cache also watches the cluster-scoped kinds
// (cluster-wide, as they have no namespace) and InScope accepts them.
func TestNamespacesWithClusterResources(t *testing.T) {
	t.Parallel()
	a := cluster.Namespace(t)
	c := startCache(t, Options{Namespaces: []string{a}, ClusterResources: true})
	if got := c.clusterScopedRunning(); !slices.Contains(got, "Namespace") {
		t.Errorf("cluster-scoped kinds watched with clusterResources: %v, want Namespace among them", got)
	}
	if err := c.InScope(schema.GroupKind{Kind: "Namespace"}, "", a); err != nil {
		t.Errorf("InScope of a cluster-scoped kind with clusterResources: %v", err)
	}
	if err := c.InScope(schema.GroupKind{Kind: "ConfigMap"}, "kube-system", "x"); err == nil {
		t.Errorf("InScope in a namespace outside the list: nil, want an error")
	}
}
