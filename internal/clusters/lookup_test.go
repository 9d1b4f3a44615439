package clusters

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// testRegistry is a Registry fed by set directly, without informers, with
// the in-cluster cluster at https://127.0.0.1:1 and its log in a buffer.
func testRegistry(t *testing.T) (*Registry, *bytes.Buffer) {
	t.Helper()
	logs := &bytes.Buffer{}
	r := &Registry{
		opts:    Options{Namespace: "graphcd", InCluster: &rest.Config{Host: "https://127.0.0.1:1", BearerToken: testToken, QPS: 50, Burst: 100}},
		log:     slog.New(slog.NewTextHandler(logs, nil)),
		entries: map[string]*entry{},
		warned:  map[string]bool{},
		notify:  true,
	}
	r.rebuild()
	return r, logs
}

// put adds a cluster Secret created at minute created.
func put(r *Registry, name string, created int, data map[string]string) {
	s := clusterSecret(data)
	s.Name = name
	s.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, created, 0, 0, time.UTC))
	r.set("graphcd/"+name, s)
}

func TestResolve(t *testing.T) {
	r, _ := testRegistry(t)
	put(r, "prod", 0, map[string]string{"name": "prod", "server": "https://prod.example.com/", "config": `{"bearerToken":"x"}`})
	put(r, "broken", 0, map[string]string{"name": "staging", "server": "https://staging.example.com", "config": `{"bearerToken":`})
	tests := []struct {
		dest       v1alpha1.ApplicationDestination
		wantServer string
		wantErr    string
	}{
		{dest: v1alpha1.ApplicationDestination{Server: "https://prod.example.com"}, wantServer: "https://prod.example.com"},
		{dest: v1alpha1.ApplicationDestination{Server: "https://prod.example.com/"}, wantServer: "https://prod.example.com"},
		{dest: v1alpha1.ApplicationDestination{Name: "prod"}, wantServer: "https://prod.example.com"},
		{dest: v1alpha1.ApplicationDestination{Name: "prod", Server: "https://prod.example.com"}, wantServer: "https://prod.example.com"},
		{dest: v1alpha1.ApplicationDestination{Name: InClusterName}, wantServer: InClusterServer},
		{dest: v1alpha1.ApplicationDestination{Server: InClusterServer}, wantServer: InClusterServer},
		{dest: v1alpha1.ApplicationDestination{}, wantErr: "application destination has neither a server nor a name"},
		{dest: v1alpha1.ApplicationDestination{Name: "prod", Server: InClusterServer}, wantErr: "application destination can't have both name and server defined unless they agree: cluster prod has server https://prod.example.com, not https://kubernetes.default.svc"},
		{dest: v1alpha1.ApplicationDestination{Name: "nope"}, wantErr: "there are no clusters with this name: nope"},
		{dest: v1alpha1.ApplicationDestination{Server: "https://nope"}, wantErr: "cluster https://nope not found"},
		{dest: v1alpha1.ApplicationDestination{Name: "staging"}, wantErr: "there are no clusters with this name: staging: cluster not registered; its Secret is invalid: cluster secret graphcd/broken: config is not valid JSON"},
		{dest: v1alpha1.ApplicationDestination{Server: "https://staging.example.com/"}, wantErr: "cluster https://staging.example.com/ not found: cluster not registered; its Secret is invalid: cluster secret graphcd/broken"},
	}
	for _, tt := range tests {
		c, err := r.Resolve(tt.dest)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Resolve(%+v) error = %v, want %q", tt.dest, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("Resolve(%+v): %v", tt.dest, err)
		case c.Server != tt.wantServer:
			t.Errorf("Resolve(%+v) = %s, want %s", tt.dest, c.Server, tt.wantServer)
		}
	}
	if _, err := r.Resolve(v1alpha1.ApplicationDestination{Name: "nope"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown name: error %v does not wrap ErrNotFound", err)
	}
	if got := r.Errors(); len(got) != 1 || !strings.Contains(got[0].Error(), "graphcd/broken") {
		t.Errorf("Errors() = %v, want the broken Secret's error", got)
	}
}

func TestInClusterOverride(t *testing.T) {
	r, _ := testRegistry(t)
	c, ok := r.ByName(InClusterName)
	if !ok || c.RESTConfig.Host != "https://127.0.0.1:1" || c.RESTConfig.QPS != 0 || c.Secret != "" {
		t.Fatalf("in-cluster = %+v, %v; want the controller's own config with QPS left unset", c, ok)
	}
	put(r, "local", 0, map[string]string{"name": "management", "server": InClusterServer, "namespaces": "apps,tools"})
	if _, ok := r.ByName(InClusterName); ok {
		t.Error("in-cluster still resolves by its default name after a Secret renamed it")
	}
	c, ok = r.ByName("management")
	if !ok {
		t.Fatal("renamed in-cluster cluster not found")
	}
	if diff := cmp.Diff(c.Namespaces, []string{"apps", "tools"}); diff != "" {
		t.Errorf("namespaces (-got +want):\n%s", diff)
	}
	if c.RESTConfig.Host != "https://127.0.0.1:1" || c.RESTConfig.BearerToken != testToken {
		t.Errorf("renamed in-cluster cluster does not use the controller's own config: host %s", c.RESTConfig.Host)
	}
	r.set("graphcd/local", nil)
	if c, ok := r.ByServer(InClusterServer); !ok || c.Name != InClusterName {
		t.Errorf("after deleting the override, ByServer(in-cluster) = %+v, %v; want in-cluster", c, ok)
	}
}

func TestDuplicatesNewerWins(t *testing.T) {
	r, logs := testRegistry(t)
	// Added newest first: the order of events must not matter.
	put(r, "b-new", 5, map[string]string{"name": "shared", "server": "https://new", "config": `{"bearerToken":"` + testToken + `"}`})
	put(r, "a-old", 1, map[string]string{"name": "shared", "server": "https://old", "config": `{"bearerToken":"` + testPassword + `"}`})
	c, ok := r.ByName("shared")
	if !ok || c.Server != "https://new" {
		t.Fatalf("ByName(shared) = %+v, %v; want the newer Secret's cluster https://new", c, ok)
	}
	out := logs.String()
	if !strings.Contains(out, "same name") || !strings.Contains(out, "name=shared") {
		t.Errorf("no duplicate-name warning logged:\n%s", out)
	}
	if strings.Contains(out, testToken) || strings.Contains(out, testPassword) {
		t.Errorf("log leaks a credential:\n%s", out)
	}
	if n := strings.Count(out, "same name"); n != 1 {
		t.Errorf("duplicate warning logged %d times, want once", n)
	}
	put(r, "a-old", 1, map[string]string{"name": "shared", "server": "https://old", "config": `{"bearerToken":"rotated"}`})
	if n := strings.Count(logs.String(), "same name"); n != 1 {
		t.Errorf("duplicate warning logged %d times after an unrelated update, want once", n)
	}
}

func TestOnChange(t *testing.T) {
	r, _ := testRegistry(t)
	var got []string
	r.OnChange(func(server string) { got = append(got, server) })
	step := func(name string, do func(), want ...string) {
		t.Helper()
		got = nil
		do()
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("%s: changed servers (-got +want):\n%s", name, diff)
		}
	}
	data := map[string]string{"name": "a", "server": "https://a", "config": `{"bearerToken":"one"}`}
	step("add", func() { put(r, "a", 0, data) }, "https://a")
	step("same data again", func() { put(r, "a", 0, data) })
	step("labels only", func() {
		s := clusterSecret(data)
		s.Name, s.Labels["team"] = "a", "x"
		r.set("graphcd/a", s)
	})
	step("rotate token", func() {
		put(r, "a", 0, map[string]string{"name": "a", "server": "https://a", "config": `{"bearerToken":"two"}`})
	}, "https://a")
	step("move server", func() {
		put(r, "a", 0, map[string]string{"name": "a", "server": "https://b", "config": `{"bearerToken":"two"}`})
	}, "https://a", "https://b")
	step("break", func() { put(r, "a", 0, map[string]string{"name": "a", "server": "https://b", "config": "{"}) }, "https://b")
	step("fix", func() {
		put(r, "a", 0, map[string]string{"name": "a", "server": "https://b", "config": `{"bearerToken":"two"}`})
	}, "https://b")
	step("delete", func() { r.set("graphcd/a", nil) }, "https://b")
	step("delete unknown", func() { r.set("graphcd/zz", (*corev1.Secret)(nil)) })
	if !slices.ContainsFunc(r.List(), func(c *Cluster) bool { return c.Name == InClusterName }) || len(r.List()) != 1 {
		t.Errorf("List() = %v, want only in-cluster", r.List())
	}
}
