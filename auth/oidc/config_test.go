package oidc

import (
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/auth/dex"
)

func lookupIn(data map[string]map[string]string) func(secret, key string) (string, error) {
	return func(secret, key string) (string, error) {
		v, ok := data[secret][key]
		if !ok {
			return "", errors.New("not found")
		}
		return v, nil
	}
}

// TestOIDCConfigOverTLS logs in directly against an external provider
// served over TLS with a private CA, configured the way users write
// oidc.config.
func TestOIDCConfigOverTLS(t *testing.T) {
	g := newGraphcd(t)
	mux := http.NewServeMux()
	ext := httptest.NewTLSServer(mux)
	t.Cleanup(ext.Close)
	d, err := dex.New(t.Context(), dexConfig(t, ""), dex.Options{
		Issuer: ext.URL + "/idp",
		Client: dex.ClientRegistration{ID: "graphcd-prod", Secret: "tls-client-secret", RedirectURIs: []string{g.URL + "/auth/callback"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	mux.Handle("/idp/", d.Handler())

	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ext.Certificate().Raw})
	doc := "name: Corp\nissuer: " + ext.URL + "/idp\nclientID: graphcd-prod\nclientSecret: $oidc.corp.clientSecret\n" +
		"requestedScopes: [openid, profile, email, groups]\n" +
		"requestedIDTokenClaims: {groups: {essential: true}}\n" +
		"rootCA: |\n  " + strings.ReplaceAll(strings.TrimSpace(string(ca)), "\n", "\n  ") + "\n"
	c, err := ParseConfig(doc, lookupIn(map[string]map[string]string{DefaultSecret: {"oidc.corp.clientSecret": "tls-client-secret"}}))
	if err != nil {
		t.Fatal(err)
	}
	o, err := c.Options()
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal([]byte(o.AuthParams.Get("claims")), &claims); err != nil {
		t.Fatalf("claims parameter: %v", err)
	}
	if diff := cmp.Diff(claims, map[string]any{"id_token": map[string]any{"groups": map[string]any{"essential": true}}}); diff != "" {
		t.Errorf("claims parameter (-got +want):\n%s", diff)
	}
	g.serveLogin(t, o)

	b := newBrowser(t, "/auth/callback")
	b.client.Transport = ext.Client().Transport // the browser trusts the CA too
	cb := b.signInAtDex(g.URL+"/auth/login", userEmail, userPassword)
	if pg := b.get(cb.String()); pg.Status != http.StatusNoContent {
		t.Fatalf("callback: HTTP %d %q", pg.Status, pg.Body)
	}
	logins := g.done()
	if len(logins) != 1 {
		t.Fatalf("done called %d times, want once", len(logins))
	}
	checkIdentity(t, logins[0].ID, ext.URL+"/idp")
}

func TestParseOIDCConfigErrors(t *testing.T) {
	const secret = "s3cr3t-value-for-oidc"
	lookup := lookupIn(map[string]map[string]string{DefaultSecret: {"k": secret}})
	for _, tc := range []struct{ doc, want string }{
		{"clientID: a", "issuer: required"},
		{"issuer: https://idp.example.com", "clientID: required"},
		{"issuer: idp.example.com\nclientID: a", "issuer: not an http(s) URL"},
		{"issuer: $k\nclientID: a", "issuer: not an http(s) URL"},
		{"issuer: https://idp.example.com\nclientID: a\nclientSecret: $nope", "clientSecret: read secret graphcd-secret key nope: not found"},
		{"issuer: https://idp.example.com\nclientID: a\nrequestedScopes: 3", "requestedScopes: want []string"},
		{"issuer: https://idp.example.com\nclientID: a\nrootCA: nope", "rootCA: no PEM certificate"},
		{"- a", "not a YAML mapping"},
		{"[", "not a YAML mapping"},
	} {
		_, err := ParseConfig(tc.doc, lookup)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseConfig(%q) = %v, want an error containing %q", tc.doc, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("ParseConfig(%q) error %q carries the secret", tc.doc, err)
		}
	}
}

func TestLogoutHandler(t *testing.T) {
	g := newGraphcd(t)
	g.embedDex(t, dexConfig(t, ""), "")
	cleared := 0
	clear := func(http.ResponseWriter, *http.Request) { cleared++ }
	for _, tc := range []struct {
		name, logoutURL, want string
	}{
		// Dex has no end_session_endpoint: logout is local.
		{"local", "", "/"},
		{"template", "https://idp.example.com/logout?to={{logoutRedirectURL}}&hint={{token}}",
			"https://idp.example.com/logout?to=" + url.QueryEscape(g.URL+"/") + "&hint="},
	} {
		p, err := NewProvider(t.Context(), Options{Issuer: g.URL + "/api/dex", ClientID: "graphcd", BaseURL: g.URL, LogoutURL: tc.logoutURL})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, g.URL+"/auth/logout?return_url=https://evil.example", nil)
		rec := httptest.NewRecorder()
		p.LogoutHandler(clear).ServeHTTP(rec, req)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != tc.want {
			t.Errorf("%s: HTTP %d to %q, want 303 to %q", tc.name, rec.Code, rec.Header().Get("Location"), tc.want)
		}
	}
	if cleared != 2 {
		t.Errorf("session cleared %d times, want 2", cleared)
	}
}

// TestEndSessionURL reads end_session_endpoint from a discovery document
// (Dex has none, so a minimal document stands in for a provider that has).
func TestEndSessionURL(t *testing.T) {
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": ts.URL, "authorization_endpoint": ts.URL + "/auth", "token_endpoint": ts.URL + "/token",
			"jwks_uri": ts.URL + "/keys", "end_session_endpoint": ts.URL + "/logout?tenant=a",
		})
	})
	p, err := NewProvider(t.Context(), Options{Issuer: ts.URL, ClientID: "graphcd", BaseURL: "https://cd.example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := url.Parse(p.EndSessionURL(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	want := url.Values{"tenant": {"a"}, "client_id": {"graphcd"}, "post_logout_redirect_uri": {"https://cd.example.com/"}}
	if got.Path != "/logout" || !cmp.Equal(got.Query(), want) {
		t.Errorf("EndSessionURL = %s, want /logout with %v", got, want)
	}
}

// FuzzParseConfig: hostile oidc.config never panics nor leaks a secret.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"issuer: $k\nclientID: $s:k\nclientSecret: $k",
		"issuer: https://a\nclientID: b\nrequestedIDTokenClaims: {groups: {essential: true, values: [a]}}",
		"issuer: https://a\nclientID: b\nrootCA: $k",
		"a: &a [*a]",
		"{{",
	} {
		f.Add(s)
	}
	const secret = "fuzz-oidc-secret-value"
	f.Fuzz(func(t *testing.T, doc string) {
		c, err := ParseConfig(doc, func(_, key string) (string, error) {
			if key == "missing" {
				return "", errors.New("not found")
			}
			return secret, nil
		})
		if err != nil {
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("error %q carries the secret", err)
			}
			return
		}
		if _, err := c.Options(); err != nil && strings.Contains(err.Error(), secret) {
			t.Fatalf("Options error %q carries the secret", err)
		}
	})
}
