package oidc

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/graphcd/graphcd/internal/wellknown"
)

// DefaultSecret is the Secret a "$key" reference (without a Secret name)
// reads from, as in dex.config.
const DefaultSecret = wellknown.Secret

// Config is graphcd-cm's oidc.config: an external OpenID Connect provider
// graphcd logs users in with directly, without Dex. The format is Argo
// CD's:
//
//	oidc.config: |
//	  name: Okta
//	  issuer: https://example.okta.com
//	  clientID: 0oa1b2c3
//	  clientSecret: $oidc.okta.clientSecret
//	  cliClientID: 0oa4d5e6
//	  requestedScopes: [openid, profile, email, groups]
//	  requestedIDTokenClaims: {groups: {essential: true}}
//	  logoutURL: https://example.okta.com/logout?post_logout_redirect_uri={{logoutRedirectURL}}
//	  rootCA: |
//	    -----BEGIN CERTIFICATE-----
//	    ...
//
// Values written "$key" come from graphcd-secret, "$secret:key" from the
// Secret named secret.
type Config struct {
	Name            string   `json:"name"`
	Issuer          string   `json:"issuer"`
	ClientID        string   `json:"clientID"`
	ClientSecret    string   `json:"clientSecret"`
	CLIClientID     string   `json:"cliClientID"`
	RequestedScopes []string `json:"requestedScopes"`
	// RequestedIDTokenClaims is sent as the "claims" request parameter
	// (OpenID Connect Core 5.5) for the ID token.
	RequestedIDTokenClaims map[string]*Claim `json:"requestedIDTokenClaims"`
	// LogoutURL is the provider's logout page; {{logoutRedirectURL}} is
	// replaced by graphcd's URL. Empty means the discovery document's
	// end_session_endpoint, if any.
	LogoutURL string `json:"logoutURL"`
	// RootCA is a PEM bundle to trust instead of the system's for the
	// provider's discovery, token and keys endpoints.
	RootCA string `json:"rootCA"`
	// GroupsClaim defaults to "groups".
	GroupsClaim string `json:"groupsClaim"`
}

// Claim is one requested claim.
type Claim struct {
	Essential bool     `json:"essential,omitempty"`
	Value     string   `json:"value,omitempty"`
	Values    []string `json:"values,omitempty"`
}

// secretRef matches a whole value naming a secret: "$key" or "$secret:key".
var secretRef = regexp.MustCompile(`^\$(?:([a-z0-9]([-a-z0-9.]*[a-z0-9])?):)?([-._a-zA-Z0-9]+)$`)

// maxConfigSize bounds oidc.config.
const maxConfigSize = 1 << 20

// ParseConfig parses oidc.config, reading secret references through
// lookup. Errors name the field and never carry a secret's value.
func ParseConfig(doc string, lookup func(secret, key string) (string, error)) (*Config, error) {
	if len(doc) > maxConfigSize {
		return nil, fmt.Errorf("oidc.config: larger than %d bytes", maxConfigSize)
	}
	var raw map[string]any
	if err := yaml.Unmarshal([]byte(doc), &raw); err != nil {
		return nil, errors.New("oidc.config: not a YAML mapping")
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, errors.New("oidc.config: holds values JSON cannot represent")
	}
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("oidc.config: %s: want %s, got %s", te.Field, te.Type, te.Value)
		}
		return nil, errors.New("oidc.config: invalid")
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"issuer", &c.Issuer}, {"clientID", &c.ClientID}, {"clientSecret", &c.ClientSecret}, {"cliClientID", &c.CLIClientID}, {"rootCA", &c.RootCA}} {
		m := secretRef.FindStringSubmatch(*f.v)
		if m == nil {
			continue
		}
		secret, key := m[1], m[3]
		if secret == "" {
			secret = DefaultSecret
		}
		if lookup == nil {
			return nil, fmt.Errorf("oidc.config: %s: refers to secret %s key %s, but no secrets are available", f.name, secret, key)
		}
		v, err := lookup(secret, key)
		if err != nil {
			return nil, fmt.Errorf("oidc.config: %s: read secret %s key %s: %w", f.name, secret, key, err)
		}
		*f.v = v
	}
	switch {
	case c.Issuer == "":
		return nil, errors.New("oidc.config: issuer: required")
	case c.ClientID == "":
		return nil, errors.New("oidc.config: clientID: required")
	}
	if u, err := url.Parse(c.Issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, errors.New("oidc.config: issuer: not an http(s) URL")
	}
	if c.RootCA != "" {
		if _, err := c.rootPool(); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

func (c *Config) rootPool() (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(c.RootCA)) {
		return nil, errors.New("oidc.config: rootCA: no PEM certificate")
	}
	return pool, nil
}

// Options turns c into a relying party's Options; the caller adds the
// graphcd-side ones (RedirectURL, BaseURL, CookieKey, Logger).
func (c *Config) Options() (Options, error) {
	o := Options{
		Issuer:       c.Issuer,
		ClientID:     c.ClientID,
		ClientSecret: c.ClientSecret,
		Scopes:       c.RequestedScopes,
		GroupsClaim:  c.GroupsClaim,
		LogoutURL:    c.LogoutURL,
	}
	if len(c.RequestedIDTokenClaims) > 0 {
		claims, err := json.Marshal(map[string]any{"id_token": c.RequestedIDTokenClaims})
		if err != nil {
			return Options{}, fmt.Errorf("oidc.config: requestedIDTokenClaims: %w", err)
		}
		o.AuthParams = url.Values{"claims": {string(claims)}}
	}
	if c.RootCA != "" {
		pool, err := c.rootPool()
		if err != nil {
			return Options{}, err
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		o.HTTPClient = &http.Client{Transport: t, Timeout: 30 * time.Second}
	}
	return o, nil
}

// logoutURL fills the {{logoutRedirectURL}} placeholder of an Argo CD
// style logout URL. {{token}} (an ID token hint) is dropped: graphcd's
// sessions do not keep the provider's ID token.
func logoutURL(template, redirect string) string {
	s := strings.ReplaceAll(template, "{{logoutRedirectURL}}", url.QueryEscape(redirect))
	return strings.ReplaceAll(s, "{{token}}", "")
}
