package oidc

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// startLogin runs an embedded-Dex login up to the redirect back to graphcd
// and returns graphcd, the browser (holding the login cookie) and the
// callback URL.
func startLogin(t *testing.T) (*graphcd, *browser, *url.URL) {
	t.Helper()
	g := newGraphcd(t)
	g.embedDex(t, dexConfig(t, ""), "")
	g.serveLogin(t, Options{
		Issuer: g.URL + "/api/dex", ClientID: g.dex.Client().ID, ClientSecret: g.dex.Client().Secret,
		CookieKey: []byte("0123456789abcdef0123456789abcdef"),
	})
	b := newBrowser(t, "/auth/callback")
	return g, b, b.signInAtDex(g.URL+"/auth/login", userEmail, userPassword)
}

// loginCookie is the login cookie the browser would send to u.
func (b *browser) loginCookie(u *url.URL) *http.Cookie {
	b.t.Helper()
	for _, c := range b.jar.Cookies(u) {
		if c.Name == CookieName {
			return c
		}
	}
	b.t.Fatalf("no %s cookie for %s", CookieName, u)
	return nil
}

// reseal changes the browser's login cookie with edit.
func (b *browser) reseal(p *Provider, u *url.URL, edit func(*loginState)) {
	b.t.Helper()
	var st loginState
	if err := p.cookie.open(b.loginCookie(u).Value, &st); err != nil {
		b.t.Fatal(err)
	}
	edit(&st)
	v, err := p.cookie.seal(st)
	if err != nil {
		b.t.Fatal(err)
	}
	b.jar.SetCookies(u, []*http.Cookie{{Name: CookieName, Value: v, Path: "/auth/callback"}})
}

func wantRejected(t *testing.T, pg page, status int, g *graphcd) {
	t.Helper()
	want := map[int]string{http.StatusBadRequest: msgBadRequest, http.StatusUnauthorized: msgRefused}[status]
	if pg.Status != status || pg.Body != want {
		t.Errorf("callback: HTTP %d %q, want %d %q", pg.Status, pg.Body, status, want)
	}
	if ct := pg.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("callback error page Content-Type %q, want text/plain", ct)
	}
	if n := len(g.done()); n != 0 {
		t.Errorf("done called %d times, want never", n)
	}
}

func TestCallbackRefusesForgedState(t *testing.T) {
	g, b, cb := startLogin(t)
	q := cb.Query()
	q.Set("state", "<script>alert(1)</script>")
	forged := *cb
	forged.RawQuery = q.Encode()
	wantRejected(t, b.get(forged.String()), http.StatusBadRequest, g)
}

func TestCallbackRefusesMissingCookie(t *testing.T) {
	g, _, cb := startLogin(t)
	other := newBrowser(t, "/auth/callback")
	wantRejected(t, other.get(cb.String()), http.StatusBadRequest, g)
}

func TestCallbackRefusesCookieFromAnotherKey(t *testing.T) {
	g, b, cb := startLogin(t)
	var st loginState
	if err := g.provider.cookie.open(b.loginCookie(cb).Value, &st); err != nil {
		t.Fatal(err)
	}
	other, err := newCookieCodec([]byte("another key, another graphcd...."))
	if err != nil {
		t.Fatal(err)
	}
	v, err := other.seal(st)
	if err != nil {
		t.Fatal(err)
	}
	b.jar.SetCookies(cb, []*http.Cookie{{Name: CookieName, Value: v, Path: "/auth/callback"}})
	wantRejected(t, b.get(cb.String()), http.StatusBadRequest, g)
}

func TestCallbackRefusesExpiredLogin(t *testing.T) {
	g, b, cb := startLogin(t)
	b.reseal(g.provider, cb, func(st *loginState) { st.Expires = time.Now().Add(-time.Second).Unix() })
	wantRejected(t, b.get(cb.String()), http.StatusBadRequest, g)
}

// TestCallbackRefusesWrongNonce keeps state and verifier but changes the
// nonce the ID token must carry.
func TestCallbackRefusesWrongNonce(t *testing.T) {
	g, b, cb := startLogin(t)
	b.reseal(g.provider, cb, func(st *loginState) { st.Nonce = randomString() })
	wantRejected(t, b.get(cb.String()), http.StatusUnauthorized, g)
}

// TestCallbackRefusesWrongVerifier: without the PKCE verifier of this
// login, the provider does not hand out tokens for the code.
func TestCallbackRefusesWrongVerifier(t *testing.T) {
	g, b, cb := startLogin(t)
	b.reseal(g.provider, cb, func(st *loginState) { st.Verifier = randomString() })
	wantRejected(t, b.get(cb.String()), http.StatusUnauthorized, g)
}

// TestCallbackRefusesReplayWithCapturedCookie replays a finished login
// with its cookie: this process remembers the state; another replica
// (same cookie key, fresh memory) gets the provider's refusal of a used
// code.
func TestCallbackRefusesReplayWithCapturedCookie(t *testing.T) {
	g, b, cb := startLogin(t)
	cookie := b.loginCookie(cb)
	if pg := b.get(cb.String()); pg.Status != http.StatusNoContent {
		t.Fatalf("callback: HTTP %d %q", pg.Status, pg.Body)
	}
	replay := func(h http.Handler) *httptest.ResponseRecorder {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, cb.String(), nil)
		req.AddCookie(&http.Cookie{Name: CookieName, Value: cookie.Value})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	called := 0
	count := func(http.ResponseWriter, *http.Request, Identity, string) { called++ }
	if rec := replay(g.provider.CallbackHandler(count)); rec.Code != http.StatusBadRequest || rec.Body.String() != msgBadRequest {
		t.Errorf("replay on the same process: HTTP %d %q, want 400", rec.Code, rec.Body)
	}
	replica, err := NewProvider(t.Context(), g.provider.o)
	if err != nil {
		t.Fatal(err)
	}
	if rec := replay(replica.CallbackHandler(count)); rec.Code != http.StatusUnauthorized || rec.Body.String() != msgRefused {
		t.Errorf("replay on another replica: HTTP %d %q, want 401", rec.Code, rec.Body)
	}
	if called != 0 {
		t.Errorf("done called %d times on replays, want never", called)
	}
}

// TestCallbackDoesNotEchoProviderError answers a provider's error with the
// fixed page, whatever the error says.
func TestCallbackDoesNotEchoProviderError(t *testing.T) {
	g, b, cb := startLogin(t)
	q := url.Values{
		"state":             {cb.Query().Get("state")},
		"error":             {"<script>alert(1)</script>"},
		"error_description": {"<img src=x onerror=alert(1)>"},
	}
	u := *cb
	u.RawQuery = q.Encode()
	wantRejected(t, b.get(u.String()), http.StatusUnauthorized, g)
}

func TestLoginCookieAttributes(t *testing.T) {
	g, b, _ := startLogin(t)
	b.client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	pg := b.get(g.URL + "/auth/login?return_url=/x")
	if pg.Status != http.StatusFound || pg.Location == nil {
		t.Fatalf("login: HTTP %d, want a redirect", pg.Status)
	}
	q := pg.Location.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("nonce") == "" || len(q.Get("state")) < 32 {
		t.Errorf("authorization request %s lacks S256 PKCE, nonce or a long state", pg.Location)
	}
	cookies := (&http.Response{Header: pg.Header}).Cookies()
	if len(cookies) != 1 {
		t.Fatalf("login set %d cookies, want 1", len(cookies))
	}
	c := cookies[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/auth/callback" || c.MaxAge <= 0 || c.MaxAge > 600 {
		t.Errorf("login cookie %+v, want HttpOnly, SameSite=Lax, Path=/auth/callback, short-lived", c)
	}
	if strings.Contains(c.Value, q.Get("state")) {
		t.Error("login cookie carries the state in the clear")
	}
}

func TestLoginCookieSecureOverHTTPS(t *testing.T) {
	for redirect, secure := range map[string]bool{
		"https://cd.example.com/auth/callback": true,
		"http://127.0.0.1:8080/auth/callback":  false,
	} {
		p, err := NewProvider(t.Context(), Options{
			Issuer: "http://127.0.0.1:1/unreachable", ClientID: "graphcd", BaseURL: "https://cd.example.com", RedirectURL: redirect,
		})
		if err != nil {
			t.Fatal(err)
		}
		if c := p.newCookie("v", 60); c.Secure != secure {
			t.Errorf("redirect %s: cookie Secure=%v, want %v", redirect, c.Secure, secure)
		}
	}
}
