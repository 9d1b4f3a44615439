package oidc

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// CookieName is the cookie that carries a login from /auth/login to
// /auth/callback.
const CookieName = "graphcd_login"

// loginTTL bounds how long a user may take at the provider.
const loginTTL = 10 * time.Minute

// Fixed texts of the pages the handlers answer errors with. They never
// include anything from the request.
const (
	msgUnavailable = "Login is unavailable right now. Try again later.\n"
	msgBadRequest  = "This login is invalid or has expired. Start again from the login page.\n"
	msgRefused     = "Login failed. Start again from the login page.\n"
)

// loginState is what the login cookie carries, sealed.
type loginState struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Return   string `json:"r"`
	Expires  int64  `json:"e"`
}

// LoginHandler serves GET /auth/login?return_url=...: it starts a code
// flow with PKCE (S256), a random state and nonce, remembers them with the
// return URL in a sealed, short-lived, HttpOnly cookie scoped to the
// callback, and redirects to the provider. A return URL that does not lead
// under the base URL becomes the base path.
func (p *Provider) LoginHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			plain(w, http.StatusMethodNotAllowed, "Method not allowed.\n")
			return
		}
		if p.o.RedirectURL == "" {
			p.logger.Error("oidc login: no redirect URL configured")
			plain(w, http.StatusInternalServerError, msgUnavailable)
			return
		}
		d, err := p.discover(r.Context())
		if err != nil {
			p.logger.Warn("oidc login: provider unavailable", "err", err)
			plain(w, http.StatusServiceUnavailable, msgUnavailable)
			return
		}
		st := loginState{
			State:    randomString(),
			Nonce:    randomString(),
			Verifier: oauth2.GenerateVerifier(),
			Return:   p.ReturnURL(r.URL.Query().Get("return_url")),
			Expires:  time.Now().Add(loginTTL).Unix(),
		}
		sealed, err := p.cookie.seal(st)
		if err != nil {
			p.logger.Error("oidc login: seal cookie", "err", err)
			plain(w, http.StatusInternalServerError, msgUnavailable)
			return
		}
		http.SetCookie(w, p.newCookie(sealed, int(loginTTL/time.Second)))
		w.Header().Set("Cache-Control", "no-store")
		target := p.authCodeURL(&d.oauth2, st.State, st.Nonce, st.Verifier)
		http.Redirect(w, r, target, http.StatusFound)
	})
}

// CallbackHandler serves GET /auth/callback. The state must match the
// login cookie, which is consumed whatever happens, and each state is
// accepted once; the code is exchanged with the PKCE verifier; the ID
// token's signature, issuer, audience, expiry and nonce are checked. Then
// done gets the identity and the return URL (a path under the base URL)
// and writes the response. Failures answer 400 (a request that is not a
// valid continuation of a login) or 401 (the provider or its token refused
// the user) with a fixed page.
func (p *Provider) CallbackHandler(done func(w http.ResponseWriter, r *http.Request, id Identity, returnURL string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			plain(w, http.StatusMethodNotAllowed, "Method not allowed.\n")
			return
		}
		c, err := r.Cookie(CookieName)
		if err != nil {
			p.logger.Info("oidc callback: no login cookie")
			plain(w, http.StatusBadRequest, msgBadRequest)
			return
		}
		// Single use: whatever happens next, this login is over.
		http.SetCookie(w, p.newCookie("", -1))
		var st loginState
		if err := p.cookie.open(c.Value, &st); err != nil {
			p.logger.Info("oidc callback: login cookie rejected", "err", err)
			plain(w, http.StatusBadRequest, msgBadRequest)
			return
		}
		expires := time.Unix(st.Expires, 0)
		if time.Now().After(expires) {
			p.logger.Info("oidc callback: login expired")
			plain(w, http.StatusBadRequest, msgBadRequest)
			return
		}
		q := r.URL.Query()
		if !equal(q.Get("state"), st.State) {
			p.logger.Info("oidc callback: state does not match the login cookie")
			plain(w, http.StatusBadRequest, msgBadRequest)
			return
		}
		if !p.states.consume(st.State, expires) {
			p.logger.Info("oidc callback: login replayed")
			plain(w, http.StatusBadRequest, msgBadRequest)
			return
		}
		if e := q.Get("error"); e != "" {
			p.logger.Info("oidc callback: provider refused the login", "error", truncate(e, 64))
			plain(w, http.StatusUnauthorized, msgRefused)
			return
		}
		id, _, err := p.exchange(r.Context(), p.o.RedirectURL, q.Get("code"), st.Verifier, st.Nonce)
		if err != nil {
			p.logger.Info("oidc callback: login failed", "err", err)
			plain(w, http.StatusUnauthorized, msgRefused)
			return
		}
		done(w, r, id, st.Return)
	})
}

func (p *Provider) newCookie(value string, maxAge int) *http.Cookie {
	// Secure follows the redirect URL's scheme: plain http serves local
	// setups, where a Secure cookie would never come back.
	return &http.Cookie{ //nolint:gosec // Secure is set for https, see above.
		Name:     CookieName,
		Value:    value,
		Path:     p.cbPath,
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   p.secure,
		SameSite: http.SameSiteLaxMode,
	}
}

func plain(w http.ResponseWriter, code int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(msg))
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// cookieCodec seals values with AES-256-GCM: the browser can neither read
// the PKCE verifier nor forge a state.
type cookieCodec struct{ aead cipher.AEAD }

func newCookieCodec(key []byte) (cookieCodec, error) {
	// Derive a key for this one use, so CookieKey may be shared with others.
	m := hmac.New(sha256.New, key)
	m.Write([]byte("graphcd oidc login cookie v1"))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		return cookieCodec{}, fmt.Errorf("oidc: cookie cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return cookieCodec{}, fmt.Errorf("oidc: cookie cipher: %w", err)
	}
	return cookieCodec{aead: aead}, nil
}

var additionalData = []byte(CookieName)

func (c cookieCodec) seal(v any) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, c.aead.NonceSize(), c.aead.NonceSize()+len(plain)+c.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(c.aead.Seal(nonce, nonce, plain, additionalData)), nil
}

// maxCookie bounds what open decodes.
const maxCookie = 4096

func (c cookieCodec) open(s string, v any) error {
	if len(s) > maxCookie {
		return errors.New("cookie too long")
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return errors.New("cookie not base64")
	}
	n := c.aead.NonceSize()
	if len(b) < n+c.aead.Overhead() {
		return errors.New("cookie too short")
	}
	plain, err := c.aead.Open(nil, b[:n], b[n:], additionalData)
	if err != nil {
		return errors.New("cookie not sealed by this key")
	}
	return json.Unmarshal(plain, v)
}

// consumedStates remembers the states of finished logins until their
// cookies expire, so that a captured cookie and callback URL cannot be
// played again within this process. (The provider also refuses a code
// twice, which covers replicas.)
type consumedStates struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

func newConsumedStates() *consumedStates {
	return &consumedStates{seen: map[string]time.Time{}}
}

// consume reports whether state was not consumed before, and marks it.
func (c *consumedStates) consume(state string, expires time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if len(c.seen) >= 1024 {
		for s, e := range c.seen {
			if now.After(e) {
				delete(c.seen, s)
			}
		}
	}
	if _, ok := c.seen[state]; ok {
		return false
	}
	c.seen[state] = expires
	return true
}
