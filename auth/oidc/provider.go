package oidc

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// DefaultScopes are requested when Options.Scopes is empty. graphcd mints
// its own sessions, so it asks for no refresh token (offline_access).
var DefaultScopes = []string{gooidc.ScopeOpenID, "profile", "email", "groups"}

// discoveryTimeout bounds one attempt to read the provider's discovery
// document; a failed attempt is retried by the next login.
const discoveryTimeout = 10 * time.Second

// Options configure a relying party.
type Options struct {
	// Issuer is the provider's issuer URL, for the embedded Dex
	// "<graphcd URL>/api/dex".
	Issuer string
	// ClientID is graphcd's client at the provider; ID tokens must name it
	// in their audience.
	ClientID string
	// ClientSecret is empty for a public client (the CLI).
	ClientSecret string
	// RedirectURL is where the provider sends the browser back to,
	// "<graphcd URL>/auth/callback". The login cookie is scoped to its path.
	// LoginHandler and CallbackHandler need it; the CLI, whose redirect
	// goes to a loopback port, leaves it empty.
	RedirectURL string
	// Scopes default to DefaultScopes; "openid" is added if missing.
	Scopes []string
	// BaseURL is graphcd's URL. Return URLs must lead under it.
	BaseURL string
	// HTTPClient reaches the provider's discovery, token and keys endpoints;
	// nil means http.DefaultClient. The embedded Dex is served by the same
	// process, so a client that dials it directly avoids a trip through a
	// load balancer.
	HTTPClient *http.Client
	// CookieKey seals the login cookie. Replicas behind one URL must share
	// it; empty means a random key per process.
	CookieKey []byte
	// GroupsClaim names the ID token claim holding the user's groups;
	// empty means "groups".
	GroupsClaim string
	// AuthParams are extra parameters of the authorization request, such
	// as "claims" or "prompt".
	AuthParams url.Values
	// LogoutURL is the provider's logout page for LogoutHandler, with
	// {{logoutRedirectURL}} replaced by BaseURL. Empty means the discovery
	// document's end_session_endpoint, and without one logout is local.
	LogoutURL string
	// Logger receives failed logins' causes; nil discards them.
	Logger *slog.Logger
}

// Identity is the user an ID token names.
type Identity struct {
	Issuer        string
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
	Username      string // preferred_username
	Groups        []string
}

// Provider is graphcd as an OpenID Connect relying party of one provider.
type Provider struct {
	o       Options
	base    *url.URL
	cookie  cookieCodec
	logger  *slog.Logger
	states  *consumedStates
	cbPath  string
	secure  bool
	scopes  []string
	groupsC string

	mu   sync.Mutex
	disc *discovered // nil until discovery succeeds
}

type discovered struct {
	provider *gooidc.Provider
	verifier *gooidc.IDTokenVerifier
	oauth2   oauth2.Config
}

// NewProvider checks o and tries discovery once. A provider that cannot be
// reached yet (the embedded Dex starts with the server that creates this)
// is not an error: each login retries until discovery succeeds.
func NewProvider(ctx context.Context, o Options) (*Provider, error) {
	if o.Issuer == "" || o.ClientID == "" {
		return nil, errors.New("oidc: issuer and client ID are required")
	}
	base, err := url.Parse(o.BaseURL)
	if o.BaseURL == "" || err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, errors.New("oidc: base URL must be an absolute http(s) URL")
	}
	if base.Path == "" {
		base.Path = "/"
	}
	redirect, err := url.Parse(o.RedirectURL)
	if err != nil || (o.RedirectURL != "" && redirect.Host == "") {
		return nil, errors.New("oidc: redirect URL must be an absolute URL")
	}
	key := o.CookieKey
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("oidc: cookie key: %w", err)
		}
	} else if len(key) < 16 {
		return nil, errors.New("oidc: cookie key must be at least 16 bytes")
	}
	codec, err := newCookieCodec(key)
	if err != nil {
		return nil, err
	}
	scopes := slices.Clone(o.Scopes)
	if len(scopes) == 0 {
		scopes = slices.Clone(DefaultScopes)
	}
	if !slices.Contains(scopes, gooidc.ScopeOpenID) {
		scopes = append([]string{gooidc.ScopeOpenID}, scopes...)
	}
	groups := o.GroupsClaim
	if groups == "" {
		groups = "groups"
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cbPath := redirect.EscapedPath()
	if cbPath == "" {
		cbPath = "/"
	}
	p := &Provider{
		o:       o,
		base:    base,
		cookie:  codec,
		logger:  logger,
		states:  newConsumedStates(),
		cbPath:  cbPath,
		secure:  redirect.Scheme == "https",
		scopes:  scopes,
		groupsC: groups,
	}
	if _, err := p.discover(ctx); err != nil {
		logger.Info("oidc discovery failed; will retry on the next login", "issuer", o.Issuer, "err", err)
	}
	return p, nil
}

// discover returns the provider's endpoints and verifier, reading the
// discovery document on first use.
func (p *Provider) discover(ctx context.Context) (*discovered, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.disc != nil {
		return p.disc, nil
	}
	ctx, cancel := context.WithTimeout(p.clientContext(ctx), discoveryTimeout)
	defer cancel()
	prov, err := gooidc.NewProvider(ctx, p.o.Issuer)
	if err != nil {
		return nil, fmt.Errorf("discover %s: %w", p.o.Issuer, err)
	}
	p.disc = &discovered{
		provider: prov,
		verifier: prov.Verifier(&gooidc.Config{ClientID: p.o.ClientID}),
		oauth2: oauth2.Config{
			ClientID:     p.o.ClientID,
			ClientSecret: p.o.ClientSecret,
			Endpoint:     prov.Endpoint(),
			RedirectURL:  p.o.RedirectURL,
			Scopes:       p.scopes,
		},
	}
	return p.disc, nil
}

func (p *Provider) clientContext(ctx context.Context) context.Context {
	if p.o.HTTPClient != nil {
		return gooidc.ClientContext(ctx, p.o.HTTPClient)
	}
	return ctx
}

// Verify checks a raw ID token: signature by the provider's keys, issuer,
// expiry, and that the audience includes this provider's client ID, so a
// token the same issuer minted for another client is refused.
func (p *Provider) Verify(ctx context.Context, rawIDToken string) (Identity, error) {
	id, _, err := p.verify(ctx, rawIDToken)
	return id, err
}

func (p *Provider) verify(ctx context.Context, raw string) (Identity, *gooidc.IDToken, error) {
	d, err := p.discover(ctx)
	if err != nil {
		return Identity{}, nil, err
	}
	tok, err := d.verifier.Verify(p.clientContext(ctx), raw)
	if err != nil {
		return Identity{}, nil, fmt.Errorf("verify ID token: %w", err)
	}
	var claims map[string]json.RawMessage
	if err := tok.Claims(&claims); err != nil {
		return Identity{}, nil, fmt.Errorf("ID token claims: %w", err)
	}
	id := Identity{Issuer: tok.Issuer, Subject: tok.Subject}
	str := func(name string) string {
		var s string
		_ = json.Unmarshal(claims[name], &s)
		return s
	}
	id.Email, id.Name, id.Username = str("email"), str("name"), str("preferred_username")
	_ = json.Unmarshal(claims["email_verified"], &id.EmailVerified)
	id.Groups, err = groupsOf(claims[p.groupsC])
	if err != nil {
		return Identity{}, nil, fmt.Errorf("ID token claim %q: %w", p.groupsC, err)
	}
	return id, tok, nil
}

// groupsOf reads a groups claim, which providers send as a list or, for
// one group, as a string.
func groupsOf(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, nil
	}
	return nil, errors.New("not a string or a list of strings")
}

// Login is one authorization code flow in progress, for a client that
// receives the redirect itself, such as the CLI on a loopback port.
type Login struct {
	// URL is where to send the user's browser.
	URL string

	redirectURL string
	state       string
	nonce       string
	verifier    string
}

// StartLogin begins a code flow with PKCE whose redirect goes to
// redirectURL (for the CLI, http://127.0.0.1:<port>/auth/callback; the
// provider must allow it). Keep the Login and pass it to FinishLogin.
func (p *Provider) StartLogin(ctx context.Context, redirectURL string) (*Login, error) {
	d, err := p.discover(ctx)
	if err != nil {
		return nil, err
	}
	l := &Login{redirectURL: redirectURL, state: randomString(), nonce: randomString(), verifier: oauth2.GenerateVerifier()}
	cfg := d.oauth2
	cfg.RedirectURL = redirectURL
	l.URL = p.authCodeURL(&cfg, l.state, l.nonce, l.verifier)
	return l, nil
}

// authCodeURL is the authorization request of one login: code flow, PKCE
// with S256, nonce, and the configured extra parameters.
func (p *Provider) authCodeURL(cfg *oauth2.Config, state, nonce, verifier string) string {
	opts := []oauth2.AuthCodeOption{gooidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)}
	for k, vs := range p.o.AuthParams {
		for _, v := range vs {
			opts = append(opts, oauth2.SetAuthURLParam(k, v))
		}
	}
	return cfg.AuthCodeURL(state, opts...)
}

// FinishLogin completes l with the query of the redirect: state checked,
// code exchanged with the PKCE verifier, ID token and nonce verified. The
// token carries the raw ID token as token.Extra("id_token").
func (p *Provider) FinishLogin(ctx context.Context, l *Login, query url.Values) (Identity, *oauth2.Token, error) {
	if !equal(query.Get("state"), l.state) {
		return Identity{}, nil, errState
	}
	if e := query.Get("error"); e != "" {
		return Identity{}, nil, errRefused
	}
	return p.exchange(ctx, l.redirectURL, query.Get("code"), l.verifier, l.nonce)
}

var (
	errState   = errors.New("state does not match this login")
	errRefused = errors.New("the provider refused the login")
)

// exchange trades code for tokens and verifies the ID token and its nonce.
func (p *Provider) exchange(ctx context.Context, redirectURL, code, verifier, nonce string) (Identity, *oauth2.Token, error) {
	if code == "" {
		return Identity{}, nil, errors.New("no code in the redirect")
	}
	d, err := p.discover(ctx)
	if err != nil {
		return Identity{}, nil, err
	}
	cfg := d.oauth2
	cfg.RedirectURL = redirectURL
	tok, err := cfg.Exchange(p.clientContext(ctx), code, oauth2.VerifierOption(verifier))
	if err != nil {
		return Identity{}, nil, fmt.Errorf("exchange code: %s", describeExchangeError(err))
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Identity{}, nil, errors.New("token response has no ID token")
	}
	id, idTok, err := p.verify(ctx, raw)
	if err != nil {
		return Identity{}, nil, err
	}
	if !equal(idTok.Nonce, nonce) {
		return Identity{}, nil, errors.New("ID token nonce does not match this login")
	}
	return id, tok, nil
}

// describeExchangeError keeps the OAuth2 error code of a failed exchange;
// the response body is not logged.
func describeExchangeError(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if re.ErrorCode != "" {
			return fmt.Sprintf("provider answered %s", re.ErrorCode)
		}
		if re.Response != nil {
			return fmt.Sprintf("provider answered HTTP %d", re.Response.StatusCode)
		}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return "failed"
}

func equal(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

func randomString() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b)
}
