package dex

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/internal/wellknown"
)

// serve starts Dex from doc under /api/dex of a test server.
func serve(t *testing.T, doc string, o Options) (*Server, *httptest.Server) {
	t.Helper()
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	c, err := ParseConfig(doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	o.Issuer = ts.URL + "/api/dex"
	if o.Client.RedirectURIs == nil {
		o.Client.RedirectURIs = []string{ts.URL + "/auth/callback"}
	}
	s, err := New(t.Context(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	mux.Handle("/api/dex/", s.Handler())
	return s, ts
}

func TestServerServesDiscoveryUnderIssuer(t *testing.T) {
	_, ts := serve(t, "enablePasswordDB: true", Options{})
	res, err := ts.Client().Get(ts.URL + "/api/dex/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("discovery: HTTP %d", res.StatusCode)
	}
	var doc struct {
		Issuer  string   `json:"issuer"`
		AuthURL string   `json:"authorization_endpoint"`
		Methods []string `json:"code_challenge_methods_supported"`
	}
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.Issuer != ts.URL+"/api/dex" {
		t.Errorf("issuer %q, want %q", doc.Issuer, ts.URL+"/api/dex")
	}
	if doc.AuthURL != ts.URL+"/api/dex/auth" {
		t.Errorf("authorization endpoint %q, want it under the issuer", doc.AuthURL)
	}
	if !strings.Contains(strings.Join(doc.Methods, ","), "S256") {
		t.Errorf("code challenge methods %q, want S256", doc.Methods)
	}
}

func TestServerClientSecret(t *testing.T) {
	a, _ := serve(t, "enablePasswordDB: true", Options{})
	b, _ := serve(t, "enablePasswordDB: true", Options{})
	if len(a.Client().Secret) < 32 || a.Client().Secret == b.Client().Secret {
		t.Errorf("generated secrets %q and %q: want long and different", a.Client().Secret, b.Client().Secret)
	}
	c, _ := serve(t, "enablePasswordDB: true", Options{Client: ClientRegistration{ID: "cd", Secret: "given"}})
	if got := c.Client(); got.ID != "cd" || got.Secret != "given" {
		t.Errorf("Client() = %q/%q, want cd/given", got.ID, got.Secret)
	}
	if a.Client().ID != wellknown.DexClientID || a.CLIClientID() != wellknown.DexCLIClientID {
		t.Errorf("default clients %q and %q", a.Client().ID, a.CLIClientID())
	}
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		o         Options
		want      string
	}{
		{"no connectors", "{}", Options{}, "no connectors"},
		{"own client in staticClients", "enablePasswordDB: true\nstaticClients: [{id: graphcd, name: x, public: true}]", Options{}, `"graphcd" is graphcd's own client`},
		{"cli client in staticClients", "enablePasswordDB: true\nstaticClients: [{id: graphcd-cli, name: x, public: true}]", Options{}, `"graphcd-cli" is graphcd's own client`},
		{"relative issuer", "enablePasswordDB: true", Options{Issuer: "/api/dex"}, "issuer must be"},
		{"no redirect", "enablePasswordDB: true", Options{Issuer: "http://127.0.0.1/api/dex", Client: ClientRegistration{RedirectURIs: []string{}}}, "redirect URI"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig(tc.doc, nil)
			if err != nil {
				t.Fatal(err)
			}
			o := tc.o
			if o.Issuer == "" {
				o.Issuer = "http://127.0.0.1:1/api/dex"
			}
			if o.Client.RedirectURIs == nil {
				o.Client.RedirectURIs = []string{"http://127.0.0.1:1/auth/callback"}
			}
			s, err := New(t.Context(), c, o)
			if err == nil {
				_ = s.Close()
				t.Fatalf("New: no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}
