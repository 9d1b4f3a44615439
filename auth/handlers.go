package auth

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/graphcd/graphcd/auth/accounts"
	"github.com/graphcd/graphcd/auth/oidc"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/auth/session"
)

// CookieName is the session cookie of the console: HttpOnly,
// SameSite=Strict, so scripts cannot read it and other sites cannot send
// it.
const CookieName = "graphcd.token"

// maxLoginBody bounds a login request.
const maxLoginBody = 4 << 10

// Handlers serve the login endpoints:
//
//	POST /auth/login    {"username": ..., "password": ...} → {"token": ..., "expiresAt": ...} + cookie
//	GET  /auth/login?return_url=/applications   → single sign-on (Dex or OIDC)
//	GET  /auth/callback                         → back from SSO: cookie, redirect to return_url
//	POST /auth/logout                           → the session is revoked, the cookie cleared
//	POST /auth/exchange {"idToken": ...}        → a session for an SSO ID token (the CLI's loopback login)
type Handlers struct {
	Sessions *Sessions
	// SSO is the OIDC relying party; nil when single sign-on is off.
	SSO *oidc.Provider
	// Authz gives the RBAC scopes: which claims of an SSO identity are
	// groups. Nil means the groups claim.
	Authz *Authorizer
	// Secure marks cookies Secure (graphcd is served over https).
	Secure bool
	// TrustedProxies are the addresses of reverse proxies whose
	// X-Forwarded-For names the client for the login limits (see
	// ClientAddr). Empty means none: the header is ignored, since any
	// client can send it.
	TrustedProxies []netip.Prefix
	Log            *slog.Logger
}

// Login serves /auth/login: POST logs in with a password, GET starts SSO.
func (h *Handlers) Login() http.Handler {
	var sso http.Handler
	if h.SSO != nil {
		sso = h.SSO.LoginHandler()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			h.passwordLogin(w, r)
		case http.MethodGet, http.MethodHead:
			if sso == nil {
				writeJSONError(w, http.StatusNotFound, "single sign-on is not configured")
				return
			}
			sso.ServeHTTP(w, r)
		default:
			w.Header().Set("Allow", "GET, POST")
			writeJSONError(w, http.StatusMethodNotAllowed, "use POST to log in with a password, GET for single sign-on")
		}
	})
}

func (h *Handlers) passwordLogin(w http.ResponseWriter, r *http.Request) {
	// Only JSON: a form or text/plain body can be sent cross-site by any
	// page without a CORS preflight.
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeJSONError(w, http.StatusUnsupportedMediaType, "send the credentials as application/json")
		return
	}
	var in struct {
		Username string `json:"username"`
		Password string `json:"password"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxLoginBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || in.Username == "" {
		writeJSONError(w, http.StatusBadRequest, `send {"username": "...", "password": "..."}`)
		return
	}
	token, c, err := h.Sessions.Login(r.Context(), in.Username, in.Password, h.clientOf(r))
	if le, ok := errors.AsType[*LoginError](err); ok {
		if le.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(le.RetryAfter.Round(time.Second)/time.Second)))
			writeJSONError(w, http.StatusTooManyRequests, le.Error())
			return
		}
		writeJSONError(w, http.StatusUnauthorized, accounts.ErrInvalidCredentials.Error())
		return
	}
	if err != nil {
		h.log().ErrorContext(r.Context(), "login failed", "err", err)
		writeJSONError(w, http.StatusInternalServerError, "login failed; see the server log")
		return
	}
	h.setCookie(w, token, c)
	writeJSON(w, http.StatusOK, map[string]any{"token": token, "expiresAt": c.ExpiresAt.Time.UTC().Format(time.RFC3339)})
}

// Callback serves /auth/callback, the end of single sign-on: the user gets
// a session and goes back to where they started.
func (h *Handlers) Callback() http.Handler {
	if h.SSO == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			writeJSONError(w, http.StatusNotFound, "single sign-on is not configured")
		})
	}
	return h.SSO.CallbackHandler(func(w http.ResponseWriter, r *http.Request, id oidc.Identity, returnURL string) {
		token, c, err := h.issueSSO(r.Context(), id)
		if err != nil {
			h.log().ErrorContext(r.Context(), "SSO session", "err", err)
			writeJSONError(w, http.StatusInternalServerError, "login failed; see the server log")
			return
		}
		h.setCookie(w, token, c)
		http.Redirect(w, r, returnURL, http.StatusSeeOther)
	})
}

// Exchange serves POST /auth/exchange: a client that logged in with the
// SSO provider itself (the CLI, through a loopback redirect) trades the ID
// token it got — which must be for graphcd's client — for a graphcd
// session: {"idToken": "..."} → {"token": ..., "expiresAt": ...}.
func (h *Handlers) Exchange() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.SSO == nil {
			writeJSONError(w, http.StatusNotFound, "single sign-on is not configured")
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeJSONError(w, http.StatusMethodNotAllowed, "use POST")
			return
		}
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			writeJSONError(w, http.StatusUnsupportedMediaType, "send the ID token as application/json")
			return
		}
		var in struct {
			IDToken string `json:"idToken"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, session.MaxTokenSize+maxLoginBody))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil || in.IDToken == "" {
			writeJSONError(w, http.StatusBadRequest, `send {"idToken": "..."}`)
			return
		}
		id, err := h.SSO.Verify(r.Context(), in.IDToken)
		if err != nil {
			h.log().InfoContext(r.Context(), "ID token refused", "err", err)
			writeJSONError(w, http.StatusUnauthorized, "the ID token is not valid for graphcd")
			return
		}
		token, c, err := h.issueSSO(r.Context(), id)
		if err != nil {
			h.log().ErrorContext(r.Context(), "SSO session", "err", err)
			writeJSONError(w, http.StatusInternalServerError, "login failed; see the server log")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"token": token, "expiresAt": c.ExpiresAt.Time.UTC().Format(time.RFC3339)})
	})
}

// issueSSO issues the session of an SSO user.
func (h *Handlers) issueSSO(ctx context.Context, id oidc.Identity) (string, *session.Claims, error) {
	return h.Sessions.Issuer.Issue(ctx, session.Template{
		Subject: id.Subject, Email: id.Email, Groups: h.groupsOf(id), Kind: session.KindSSO, TTL: h.Sessions.TTL,
	})
}

// groupsOf returns the RBAC groups of an SSO identity: the values of the
// claims the policy's scopes name.
func (h *Handlers) groupsOf(id oidc.Identity) []string {
	scopes := []string{"groups"}
	if h.Authz != nil {
		scopes = h.Authz.Scopes()
	}
	claims := map[string]any{
		"groups": id.Groups, "email": id.Email, "sub": id.Subject, "name": id.Name, "preferred_username": id.Username,
	}
	return rbac.GroupsFromClaims(claims, scopes)
}

// Logout serves POST /auth/logout: the request's session is revoked and
// the cookie cleared. A request without a valid session just gets the
// cookie cleared.
func (h *Handlers) Logout() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeJSONError(w, http.StatusMethodNotAllowed, "use POST to log out")
			return
		}
		if token := RequestToken(r); token != "" {
			if ctx, err := h.Sessions.Authenticate(r.Context(), token); err == nil {
				if err := h.Sessions.Logout(ctx); err != nil {
					h.log().ErrorContext(r.Context(), "logout", "err", err)
					writeJSONError(w, http.StatusServiceUnavailable, "the session could not be revoked; try again")
					return
				}
			}
		}
		http.SetCookie(w, &http.Cookie{ //nolint:gosec // Secure whenever graphcd's URL is https; a local demo serves plain http
			Name: CookieName, Value: "", Path: "/", MaxAge: -1,
			HttpOnly: true, Secure: h.Secure, SameSite: http.SameSiteStrictMode,
		})
		w.WriteHeader(http.StatusNoContent)
	})
}

func (h *Handlers) setCookie(w http.ResponseWriter, token string, c *session.Claims) {
	http.SetCookie(w, &http.Cookie{ //nolint:gosec // Secure whenever graphcd's URL is https; a local demo serves plain http
		Name: CookieName, Value: token, Path: "/", Expires: c.ExpiresAt.Time,
		HttpOnly: true, Secure: h.Secure, SameSite: http.SameSiteStrictMode,
	})
}

func (h *Handlers) log() *slog.Logger {
	if h.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Log
}

// RequestToken returns the token of r: its bearer token, or the session
// cookie.
func RequestToken(r *http.Request) string {
	if v := r.Header.Get("Authorization"); v != "" {
		return BearerToken(v)
	}
	if c, err := r.Cookie(CookieName); err == nil {
		return c.Value
	}
	return ""
}

// BearerToken returns the token of an Authorization value "Bearer
// <token>", or "" for any other scheme.
func BearerToken(v string) string {
	scheme, token, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// clientOf names the client of r for the login limits: its address (see
// ClientAddr). An IPv6 client is named by its /64, the block one host
// usually holds, so that it cannot start afresh from a new address.
func (h *Handlers) clientOf(r *http.Request) string {
	client, ok := ClientAddr(r, h.TrustedProxies)
	if !ok {
		return r.RemoteAddr
	}
	if client.Is6() {
		p, _ := client.Prefix(64)
		return p.String()
	}
	return client.String()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
