package controller

import (
	"net/http"
	"net/http/httptest"
	"strings"
	gosync "sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/project"
	"github.com/graphcd/graphcd/internal/clusters"
	"github.com/graphcd/graphcd/internal/settings"
)

// The clients of a cluster send the user they impersonate in
// Impersonate-User, graphcd's own sends none, and each user's client is
// built once.
func TestSyncClientsImpersonate(t *testing.T) {
	var mu gosync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Impersonate-User"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
	}))
	defer srv.Close()
	sc, err := newSyncClients(&rest.Config{Host: srv.URL, QPS: 50, Burst: 100})
	if err != nil {
		t.Fatal(err)
	}
	if sc.cfg.RateLimiter == nil {
		t.Errorf("no shared rate limiter")
	}
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for _, user := range []string{"", "system:serviceaccount:a:deployer", "system:serviceaccount:b:deployer", "system:serviceaccount:a:deployer"} {
		c, err := sc.clientAs(user)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Resource(cm).Namespace("x").Get(t.Context(), "y", metav1.GetOptions{})
	}
	want := []string{"", "system:serviceaccount:a:deployer", "system:serviceaccount:b:deployer", "system:serviceaccount:a:deployer"}
	if strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Errorf("Impersonate-User headers %q, want %q", seen, want)
	}
	a1, _ := sc.clientAs("system:serviceaccount:a:deployer")
	a2, _ := sc.clientAs("system:serviceaccount:a:deployer")
	if a1 != a2 || len(sc.as) != 2 {
		t.Errorf("a client per sync: same user gave %p and %p; %d clients kept", a1, a2, len(sc.as))
	}
}

func TestSyncAccount(t *testing.T) {
	on, off := &settings.Settings{SyncImpersonation: true}, &settings.Settings{}
	withSA, err := project.Compile(&v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: "team-a"},
		Spec: v1alpha1.AppProjectSpec{DestinationServiceAccounts: []v1alpha1.ApplicationDestinationServiceAccount{
			{Server: InClusterServer, Namespace: "team-a-*", DefaultServiceAccount: "deployer"},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	without, err := project.Compile(&v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "plain"}})
	if err != nil {
		t.Fatal(err)
	}
	app := func(ns string) *v1alpha1.Application {
		return &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "graphcd"},
			Spec:       v1alpha1.ApplicationSpec{Destination: v1alpha1.ApplicationDestination{Server: InClusterServer, Namespace: ns}},
		}
	}
	c := &clusters.Cluster{Name: InClusterName, Server: InClusterServer}

	if user, err := syncAccount(off, withSA, app("team-a-web"), c); user != "" || err != nil {
		t.Errorf("off: %q, %v; want graphcd itself", user, err)
	}
	if user, err := syncAccount(on, withSA, app("team-a-web"), c); user != "system:serviceaccount:team-a-web:deployer" || err != nil {
		t.Errorf("on: %q, %v", user, err)
	}
	_, err = syncAccount(on, withSA, app("team-b"), c)
	const want = "failed to find a matching service account to impersonate: no matching service account found for destination server https://kubernetes.default.svc and namespace team-b"
	if err == nil || err.Error() != want {
		t.Errorf("no match: %v, want %q", err, want)
	}

	if msg := impersonationIgnored(off, withSA); !strings.Contains(msg, "spec.destinationServiceAccounts of project 'team-a' is ignored: sync impersonation is disabled") {
		t.Errorf("off with accounts: %q", msg)
	}
	for _, tc := range []struct {
		s     *settings.Settings
		rules *project.Rules
	}{{on, withSA}, {off, without}, {on, without}} {
		if msg := impersonationIgnored(tc.s, tc.rules); msg != "" {
			t.Errorf("impersonation %v, project %s: %q, want no warning", tc.s.SyncImpersonation, tc.rules.Name(), msg)
		}
	}
}
