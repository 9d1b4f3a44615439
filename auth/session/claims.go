package session

import (
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Kind says how a token came to be, which decides how it may be revoked
// and what the API shows of it.
type Kind string

// The kinds of token graphcd issues.
const (
	// KindSession is a login session of a local account.
	KindSession Kind = "session"
	// KindAPI is an account's API token, listed (by ID) on the account.
	KindAPI Kind = "api"
	// KindProject is a project role token, subject
	// "proj:<project>:<role>", listed (by ID) in the AppProject's role.
	KindProject Kind = "project"
	// KindSSO is a session of a user who logged in through SSO.
	KindSSO Kind = "sso"
)

// Claims are the claims of every graphcd token. The registered claims iss,
// aud, sub, iat, nbf, exp and jti are always set by Issue and checked by
// Verify.
type Claims struct {
	jwt.RegisteredClaims
	// Groups are the subject's SSO groups, the scopes RBAC matches.
	Groups []string `json:"groups,omitempty"`
	// Email is the subject's email address, when SSO gave one.
	Email string `json:"email,omitempty"`
	// Kind is how the token was issued.
	Kind Kind `json:"kind,omitempty"`
}

// Template is what a new token says; Issue fills in the rest.
type Template struct {
	// Subject is the account, user or "proj:<project>:<role>" (required).
	Subject string
	Groups  []string
	Email   string
	Kind    Kind
	// ID becomes the jti claim, the handle Revoke uses. Empty means a new
	// random ID; API and project tokens pass the ID they store.
	ID string
	// TTL is how long the token is valid; 0 means Options.TTL. A token
	// "without expiry" passes NoExpiryTTL: exp is always required, so such
	// tokens expire, but not within any deployment's lifetime.
	TTL time.Duration
}

// NoExpiryTTL is the lifetime of tokens issued "without expiry" (API and
// project tokens with no expiry set): ten years.
const NoExpiryTTL = 10 * 365 * 24 * time.Hour
