//go:build integration

package oidc

import (
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"

	"github.com/graphcd/graphcd/auth/dex"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// cluster is a real control plane, where Dex keeps its state in its CRDs.
var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Minimal}, &cluster))
}

// TestReplicasShareDexState runs two graphcd replicas behind one URL, each
// with its embedded Dex on the Kubernetes CRD storage, the client secret
// and cookie key shared. A round-robin balancer sends every other request
// to the other replica, so each step of the login crosses replicas.
func TestReplicasShareDexState(t *testing.T) {
	var next atomic.Uint64
	var replicas [2]*http.ServeMux
	lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		replicas[next.Add(1)%2].ServeHTTP(w, r)
	}))
	t.Cleanup(lb.Close)

	var logins atomic.Int32
	var got atomic.Pointer[Identity]
	for i := range replicas {
		mux := http.NewServeMux()
		d, err := dex.New(t.Context(), dexConfig(t, ""), dex.Options{
			Issuer:  lb.URL + "/api/dex",
			Client:  dex.ClientRegistration{Secret: "shared-by-replicas", RedirectURIs: []string{lb.URL + "/auth/callback"}},
			Storage: dex.Storage{Kubernetes: &dex.KubernetesStorage{KubeconfigFile: cluster.Kubeconfig}},
		})
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		t.Cleanup(func() { _ = d.Close() })
		mux.Handle("/api/dex/", d.Handler())
		p, err := NewProvider(t.Context(), Options{
			Issuer: lb.URL + "/api/dex", ClientID: wellknown.DexClientID, ClientSecret: "shared-by-replicas",
			RedirectURL: lb.URL + "/auth/callback", BaseURL: lb.URL, CookieKey: []byte("shared by replicas, from a Secret"),
		})
		if err != nil {
			t.Fatal(err)
		}
		mux.Handle("GET /auth/login", p.LoginHandler())
		mux.Handle("GET /auth/callback", p.CallbackHandler(func(w http.ResponseWriter, _ *http.Request, id Identity, _ string) {
			logins.Add(1)
			got.Store(&id)
			w.WriteHeader(http.StatusNoContent)
		}))
		replicas[i] = mux
	}

	b := newBrowser(t, "/auth/callback")
	cb := b.signInAtDex(lb.URL+"/auth/login", userEmail, userPassword)
	if pg := b.get(cb.String()); pg.Status != http.StatusNoContent {
		t.Fatalf("callback: HTTP %d %q", pg.Status, pg.Body)
	}
	if n := logins.Load(); n != 1 {
		t.Fatalf("logins %d, want 1", n)
	}
	checkIdentity(t, *got.Load(), lb.URL+"/api/dex")
}
