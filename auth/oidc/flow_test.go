package oidc

import (
	"bytes"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/bcrypt"

	"github.com/graphcd/graphcd/auth/dex"
	"github.com/graphcd/graphcd/internal/wellknown"
)

const (
	userEmail    = "alice@example.com"
	userPassword = "correct horse battery staple"
	userID       = "3f1c0a52-8d0e-4a53-9a4f-7c0f1f7d2b11"
)

// userHash is the static user's bcrypt hash, computed once: at the cost
// Dex requires it takes a while under the race detector.
var userHash = sync.OnceValues(func() ([]byte, error) {
	return bcrypt.GenerateFromPassword([]byte(userPassword), bcrypt.DefaultCost)
})

// dexConfig is a dex.config with one static user in two groups and
// extraClients (YAML list items) registered beside graphcd.
func dexConfig(t *testing.T, extraClients string) *dex.Config {
	t.Helper()
	hash, err := userHash()
	if err != nil {
		t.Fatal(err)
	}
	doc := `
enablePasswordDB: true
staticPasswords:
- email: ` + userEmail + `
  hash: "` + string(hash) + `"
  username: alice
  userID: ` + userID + `
  groups: [platform, "graphcd:admins"]
`
	if extraClients != "" {
		doc += "staticClients:\n" + extraClients
	}
	c, err := dex.ParseConfig(doc, func(secret, key string) (string, error) {
		t.Fatalf("unexpected secret lookup %s/%s", secret, key)
		return "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// logs collects what a test's components log, to check that no secret
// ends up there.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logs) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// graphcd is a test server standing in for graphcd: it serves /auth/login
// and /auth/callback, and optionally the embedded Dex under /api/dex.
type graphcd struct {
	*httptest.Server
	mux      *http.ServeMux
	provider *Provider
	dex      *dex.Server
	logs     *logs

	mu     sync.Mutex
	logins []login
}

// login is what the done callback received.
type login struct {
	ID        Identity
	ReturnURL string
}

func newGraphcd(t *testing.T) *graphcd {
	t.Helper()
	g := &graphcd{mux: http.NewServeMux(), logs: &logs{}}
	g.Server = httptest.NewServer(g.mux)
	t.Cleanup(g.Close)
	return g
}

// embedDex runs Dex from c inside g under /api/dex, with graphcd's client
// secret (random if empty).
func (g *graphcd) embedDex(t *testing.T, c *dex.Config, secret string) {
	t.Helper()
	d, err := dex.New(t.Context(), c, dex.Options{
		Issuer: g.URL + "/api/dex",
		Client: dex.ClientRegistration{Secret: secret, RedirectURIs: []string{g.URL + "/auth/callback"}},
		Logger: g.logs.logger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	g.dex = d
	g.mux.Handle("/api/dex/", d.Handler())
}

// serveLogin makes g a relying party of o's issuer, and serves the login
// and callback handlers.
func (g *graphcd) serveLogin(t *testing.T, o Options) {
	t.Helper()
	o.RedirectURL = g.URL + "/auth/callback"
	if o.BaseURL == "" {
		o.BaseURL = g.URL
	}
	o.Logger = g.logs.logger()
	p, err := NewProvider(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	g.provider = p
	g.mux.Handle("GET /auth/login", p.LoginHandler())
	g.mux.Handle("GET /auth/callback", p.CallbackHandler(func(w http.ResponseWriter, r *http.Request, id Identity, returnURL string) {
		g.mu.Lock()
		g.logins = append(g.logins, login{id, returnURL})
		g.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
}

func (g *graphcd) done() []login {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]login(nil), g.logins...)
}

// browser is an HTTP client with a cookie jar that follows redirects until
// one leads to stopAt (a callback path).
type browser struct {
	t      *testing.T
	client *http.Client
	jar    *cookiejar.Jar
}

func newBrowser(t *testing.T, stopAt ...string) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t, jar: jar}
	b.client = &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		for _, p := range stopAt {
			if req.URL.Path == p {
				return http.ErrUseLastResponse
			}
		}
		return nil
	}}
	return b
}

// page is a response as the test sees it.
type page struct {
	Status   int
	Body     string
	URL      *url.URL // of the last request
	Location *url.URL // of a redirect not followed
	Header   http.Header
}

// do sends req, following redirects up to stopAt.
func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	res, err := b.client.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer func() { _ = res.Body.Close() }()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	pg := page{Status: res.StatusCode, Body: string(body), URL: res.Request.URL, Header: res.Header}
	if loc, err := res.Location(); err == nil {
		pg.Location = loc
	}
	return pg
}

func (b *browser) get(u string) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

var formAction = regexp.MustCompile(`<form method="post" action="([^"]*)"`)

// signInAtDex starts at start, fills Dex's password form and returns the
// callback URL Dex redirects to, without following it.
func (b *browser) signInAtDex(start, email, password string) *url.URL {
	b.t.Helper()
	pg := b.get(start)
	if pg.Status != http.StatusOK {
		b.t.Fatalf("GET %s ended at %s with HTTP %d: %.300s", start, pg.URL, pg.Status, pg.Body)
	}
	m := formAction.FindStringSubmatch(pg.Body)
	if m == nil {
		b.t.Fatalf("no login form at %s: %.500s", pg.URL, pg.Body)
	}
	action, err := pg.URL.Parse(html.UnescapeString(m[1]))
	if err != nil {
		b.t.Fatal(err)
	}
	form := url.Values{"login": {email}, "password": {password}}
	req, err := http.NewRequest(http.MethodPost, action.String(), strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	pg = b.do(req)
	if pg.Location == nil || (pg.Status != http.StatusFound && pg.Status != http.StatusSeeOther) {
		b.t.Fatalf("POST %s: HTTP %d, want a redirect to the callback: %.300s", action, pg.Status, pg.Body)
	}
	return pg.Location
}

// checkIdentity checks got is the static user, from issuer.
func checkIdentity(t *testing.T, got Identity, issuer string) {
	t.Helper()
	if got.Subject == "" || got.Issuer != issuer {
		t.Errorf("subject %q issuer %q, want a subject from %q", got.Subject, got.Issuer, issuer)
	}
	want := Identity{
		Issuer: issuer, Subject: got.Subject, Email: userEmail, EmailVerified: true,
		Name: "alice", Groups: []string{"platform", "graphcd:admins"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("identity (-got +want):\n%s", diff)
	}
}

// TestEmbeddedDexCodeFlow logs in as a browser would: graphcd's login
// page, Dex's password form, back to graphcd's callback.
func TestEmbeddedDexCodeFlow(t *testing.T) {
	g := newGraphcd(t)
	g.embedDex(t, dexConfig(t, ""), "")
	g.serveLogin(t, Options{Issuer: g.URL + "/api/dex", ClientID: g.dex.Client().ID, ClientSecret: g.dex.Client().Secret})

	b := newBrowser(t, "/auth/callback")
	cb := b.signInAtDex(g.URL+"/auth/login?return_url="+url.QueryEscape("/applications?proj=default#tree"), userEmail, userPassword)
	if cb.Path != "/auth/callback" || cb.Host != strings.TrimPrefix(g.URL, "http://") {
		t.Fatalf("Dex redirected to %s, want graphcd's callback", cb)
	}
	if pg := b.get(cb.String()); pg.Status != http.StatusNoContent {
		t.Fatalf("callback: HTTP %d %q", pg.Status, pg.Body)
	}
	logins := g.done()
	if len(logins) != 1 {
		t.Fatalf("done called %d times, want once", len(logins))
	}
	checkIdentity(t, logins[0].ID, g.URL+"/api/dex")
	if got, want := logins[0].ReturnURL, "/applications?proj=default#tree"; got != want {
		t.Errorf("return URL %q, want %q", got, want)
	}

	// The callback consumed the login cookie: the same URL again fails.
	if pg := b.get(cb.String()); pg.Status != http.StatusBadRequest || pg.Body != msgBadRequest {
		t.Errorf("replayed callback: HTTP %d %q, want 400 with the fixed page", pg.Status, pg.Body)
	}
	if n := len(g.done()); n != 1 {
		t.Errorf("done called %d times after a replay, want once", n)
	}
	for _, secret := range []string{userPassword, g.dex.Client().Secret, cb.Query().Get("code")} {
		if strings.Contains(g.logs.String(), secret) {
			t.Errorf("logs contain a secret (%.4s...)", secret)
		}
	}
}

// TestExternalProviderCodeFlow runs the same flow against a provider that
// is not embedded: a second Dex on its own server, as any OIDC provider.
func TestExternalProviderCodeFlow(t *testing.T) {
	g := newGraphcd(t)
	ext := newGraphcd(t)
	d, err := dex.New(t.Context(), dexConfig(t, ""), dex.Options{
		Issuer: ext.URL + "/idp",
		Client: dex.ClientRegistration{ID: "graphcd-prod", Secret: "ext-client-secret", RedirectURIs: []string{g.URL + "/auth/callback"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	ext.mux.Handle("/idp/", d.Handler())
	g.serveLogin(t, Options{Issuer: ext.URL + "/idp", ClientID: "graphcd-prod", ClientSecret: "ext-client-secret"})

	b := newBrowser(t, "/auth/callback")
	cb := b.signInAtDex(g.URL+"/auth/login", userEmail, userPassword)
	if pg := b.get(cb.String()); pg.Status != http.StatusNoContent {
		t.Fatalf("callback: HTTP %d %q", pg.Status, pg.Body)
	}
	logins := g.done()
	if len(logins) != 1 {
		t.Fatalf("done called %d times, want once", len(logins))
	}
	checkIdentity(t, logins[0].ID, ext.URL+"/idp")
	if logins[0].ReturnURL != "/" {
		t.Errorf("return URL %q without return_url, want /", logins[0].ReturnURL)
	}
}

// TestLoginDiscoversLazily creates the relying party before its provider
// serves: logins fail with a fixed page until the provider is up.
func TestLoginDiscoversLazily(t *testing.T) {
	g := newGraphcd(t)
	g.serveLogin(t, Options{Issuer: g.URL + "/api/dex", ClientID: wellknown.DexClientID, ClientSecret: "from-graphcd-secret"})
	b := newBrowser(t, "/auth/callback")
	if pg := b.get(g.URL + "/auth/login"); pg.Status != http.StatusServiceUnavailable || pg.Body != msgUnavailable {
		t.Fatalf("login before the provider serves: HTTP %d %q, want 503", pg.Status, pg.Body)
	}
	g.embedDex(t, dexConfig(t, ""), "from-graphcd-secret")
	cb := b.signInAtDex(g.URL+"/auth/login", userEmail, userPassword)
	if pg := b.get(cb.String()); pg.Status != http.StatusNoContent {
		t.Fatalf("callback: HTTP %d %q", pg.Status, pg.Body)
	}
}

// TestEmbeddedDexWithUpstreamOIDCConnector is the usual production shape:
// the embedded Dex federates to an upstream OIDC provider through Dex's
// oidc connector, configured in dex.config with its secret referenced
// from a Secret and its redirectURI left to graphcd to fill in, and the
// upstream's groups reach graphcd.
func TestEmbeddedDexWithUpstreamOIDCConnector(t *testing.T) {
	g := newGraphcd(t)
	up := newGraphcd(t)
	upstream, err := dex.New(t.Context(), dexConfig(t, ""), dex.Options{
		Issuer: up.URL + "/idp",
		Client: dex.ClientRegistration{ID: "graphcd-dex", Secret: "upstream-secret", RedirectURIs: []string{g.URL + "/api/dex/callback"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = upstream.Close() })
	up.mux.Handle("/idp/", upstream.Handler())

	doc := `
connectors:
- type: oidc
  id: corp
  name: Corp SSO
  config:
    issuer: ` + up.URL + `/idp
    clientID: graphcd-dex
    clientSecret: $corp-sso:clientSecret
    scopes: [profile, email, groups]
    insecureEnableGroups: true
`
	c, err := dex.ParseConfig(doc, func(secret, key string) (string, error) {
		if secret == "corp-sso" && key == "clientSecret" {
			return "upstream-secret", nil
		}
		t.Errorf("unexpected secret lookup %s/%s", secret, key)
		return "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	g.embedDex(t, c, "")
	g.serveLogin(t, Options{Issuer: g.URL + "/api/dex", ClientID: g.dex.Client().ID, ClientSecret: g.dex.Client().Secret})

	b := newBrowser(t, "/auth/callback")
	cb := b.signInAtDex(g.URL+"/auth/login", userEmail, userPassword)
	if pg := b.get(cb.String()); pg.Status != http.StatusNoContent {
		t.Fatalf("callback: HTTP %d %q", pg.Status, pg.Body)
	}
	logins := g.done()
	if len(logins) != 1 {
		t.Fatalf("done called %d times, want once", len(logins))
	}
	checkIdentity(t, logins[0].ID, g.URL+"/api/dex")
}
