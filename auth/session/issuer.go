package session

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Defaults of Options.
const (
	DefaultIssuer   = "graphcd"
	DefaultAudience = "graphcd"
	DefaultTTL      = 24 * time.Hour
)

// Leeway is how far clocks of the replicas may disagree: Verify accepts a
// token this long after its exp and before its nbf or iat.
const Leeway = 30 * time.Second

// MaxTokenSize is the longest token Verify parses, in bytes. graphcd's
// tokens are far shorter (a few hundred bytes plus the groups); the bound
// keeps a hostile header from costing more than a small parse.
const MaxTokenSize = 16 << 10

// The one signing algorithm graphcd issues and accepts.
var signingMethod = jwt.SigningMethodHS256

// Options configure an Issuer.
type Options struct {
	// Issuer is the iss claim (default DefaultIssuer).
	Issuer string
	// Audience is the aud claim (default DefaultAudience).
	Audience string
	// TTL is how long a token is valid unless its Template says otherwise
	// (default DefaultTTL).
	TTL time.Duration
	// Now is the clock (default time.Now); tests set it.
	Now func() time.Time
	// Revocations is the revocation list Verify consults and Revoke adds
	// to (default NewMemoryRevocations(), which only suits one replica).
	Revocations Revocations
}

// Issuer issues and verifies graphcd's tokens. It is safe for concurrent
// use.
type Issuer struct {
	keys     KeySource
	opts     Options
	parser   *jwt.Parser
	verified *verified
}

// NewIssuer returns an Issuer signing with the keys of keys.
func NewIssuer(keys KeySource, o Options) *Issuer {
	if o.Issuer == "" {
		o.Issuer = DefaultIssuer
	}
	if o.Audience == "" {
		o.Audience = DefaultAudience
	}
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Revocations == nil {
		o.Revocations = NewMemoryRevocations()
	}
	return &Issuer{
		keys:     keys,
		opts:     o,
		verified: newVerified(),
		parser: jwt.NewParser(
			jwt.WithValidMethods([]string{signingMethod.Alg()}),
			jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(),
			jwt.WithIssuer(o.Issuer),
			jwt.WithAudience(o.Audience),
			jwt.WithLeeway(Leeway),
			jwt.WithTimeFunc(o.Now),
			jwt.WithStrictDecoding(),
		),
	}
}

// Revocations returns the revocation list the issuer consults.
func (i *Issuer) Revocations() Revocations { return i.opts.Revocations }

// Issue signs a new token for t with the current key and returns it with
// its claims.
func (i *Issuer) Issue(ctx context.Context, t Template) (string, *Claims, error) {
	if t.Subject == "" {
		return "", nil, errors.New("issue token: empty subject")
	}
	if t.TTL < 0 {
		return "", nil, fmt.Errorf("issue token: negative TTL %s", t.TTL)
	}
	current, _, err := i.keys.Keys(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("issue token: %w", err)
	}
	ttl := t.TTL
	if ttl == 0 {
		ttl = i.opts.TTL
	}
	id := t.ID
	if id == "" {
		id = newID()
	}
	kind := t.Kind
	if kind == "" {
		kind = KindSession
	}
	now := i.opts.Now()
	c := &Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    i.opts.Issuer,
			Subject:   t.Subject,
			Audience:  jwt.ClaimStrings{i.opts.Audience},
			ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
			NotBefore: jwt.NewNumericDate(now),
			IssuedAt:  jwt.NewNumericDate(now),
			ID:        id,
		},
		Groups: t.Groups,
		Email:  t.Email,
		Kind:   kind,
	}
	tok := jwt.NewWithClaims(signingMethod, c)
	tok.Header["kid"] = current.ID
	s, err := tok.SignedString(current.Secret)
	if err != nil {
		return "", nil, fmt.Errorf("sign token: %w", err)
	}
	return s, c, nil
}

// newID returns a random token ID (128 bits, hex).
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// Verify checks token and returns its claims. It accepts only HS256
// tokens signed by one of the keys of the key source (chosen by the kid
// header), issued by this issuer for this audience, with exp, sub and jti
// set, current (exp, nbf and iat within Leeway) and not revoked.
//
// A rejected token gives an error wrapping ErrInvalid, ErrExpired or
// ErrRevoked. Other errors mean the token could not be checked (the key
// source or the revocation list failed); callers treat them as internal
// errors, not as a bad token.
func (i *Issuer) Verify(ctx context.Context, token string) (*Claims, error) {
	switch {
	case token == "":
		return nil, reject(ErrInvalid, "empty token")
	case len(token) > MaxTokenSize:
		return nil, reject(ErrInvalid, fmt.Sprintf("token longer than %d bytes", MaxTokenSize))
	}
	current, verifyOnly, err := i.keys.Keys(ctx)
	if err != nil {
		return nil, fmt.Errorf("verify token: %w", err)
	}
	now := i.opts.Now()
	sum := sha256.Sum256([]byte(token))
	c, err := i.check(sum, token, current, verifyOnly, now)
	if err != nil {
		return nil, err
	}
	revoked, err := i.opts.Revocations.Revoked(ctx, c.ID)
	if err != nil {
		return nil, fmt.Errorf("verify token: check revocation: %w", err)
	}
	if revoked {
		return nil, reject(ErrRevoked, "revoked")
	}
	// The cached claims are shared; the caller gets its own copy.
	out := *c
	out.Groups = slices.Clone(c.Groups)
	return &out, nil
}

// check returns the claims of a token whose signature and claims are
// good, from the verified cache when it has seen the token before.
func (i *Issuer) check(sum [sha256.Size]byte, token string, current Key, verifyOnly []Key, now time.Time) (*Claims, error) {
	if e, ok := i.verified.get(sum); ok {
		if _, known := lookupKey(e.kid, current, verifyOnly); !known {
			i.verified.drop(sum)
			return nil, reject(ErrInvalid, "signed by an unknown key")
		}
		if err := timely(e.claims, now); err != nil {
			return nil, err
		}
		return e.claims, nil
	}
	c := &Claims{}
	var kid string
	tok, err := i.parser.ParseWithClaims(token, c, func(t *jwt.Token) (any, error) {
		if t.Method != signingMethod { // already checked by the parser; kept for safety
			return nil, errors.New("signing method not accepted")
		}
		kid, _ = t.Header["kid"].(string)
		if k, ok := lookupKey(kid, current, verifyOnly); ok {
			return k.Secret, nil
		}
		return nil, errors.New("unknown key")
	})
	if err != nil {
		return nil, classify(tok, c, err)
	}
	switch {
	case c.Subject == "":
		return nil, reject(ErrInvalid, "missing sub claim")
	case c.ID == "":
		return nil, reject(ErrInvalid, "missing jti claim")
	}
	i.verified.put(sum, verifiedEntry{claims: c, kid: kid}, now)
	return c, nil
}

// lookupKey finds the key named kid.
func lookupKey(kid string, current Key, verifyOnly []Key) (Key, bool) {
	if kid == "" {
		return Key{}, false
	}
	if kid == current.ID {
		return current, true
	}
	for _, k := range verifyOnly {
		if kid == k.ID {
			return k, true
		}
	}
	return Key{}, false
}

// classify turns a parse error into one wrapping a sentinel, with a reason
// of our own: the library's messages are fine but may grow to quote parts
// of the token.
func classify(tok *jwt.Token, c *Claims, err error) error {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return reject(ErrInvalid, "malformed token")
	case tok != nil && tok.Method != signingMethod:
		return reject(ErrInvalid, "signing algorithm not accepted (only HS256 is)")
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return reject(ErrInvalid, "signed by an unknown key")
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return reject(ErrInvalid, "bad signature")
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing) && c.ExpiresAt == nil:
		return reject(ErrInvalid, "missing exp claim")
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return reject(ErrInvalid, "issued by another issuer")
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return reject(ErrInvalid, "meant for another audience")
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return reject(ErrInvalid, "not valid yet (nbf)")
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return reject(ErrInvalid, "issued in the future (iat)")
	case errors.Is(err, jwt.ErrTokenExpired):
		return reject(ErrExpired, "expired")
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return reject(ErrInvalid, "missing a required claim")
	default:
		return reject(ErrInvalid, "invalid claims")
	}
}

// Revoke puts c's token on the revocation list until it expires (plus
// Leeway), so Verify rejects it with ErrRevoked everywhere the list is
// shared. Revoking twice is harmless.
func (i *Issuer) Revoke(ctx context.Context, c *Claims) error {
	if c == nil || c.ID == "" {
		return errors.New("revoke token: no token ID")
	}
	until := i.opts.Now().Add(NoExpiryTTL)
	if c.ExpiresAt != nil {
		until = c.ExpiresAt.Time
	}
	if err := i.opts.Revocations.Revoke(ctx, c.ID, until.Add(Leeway)); err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	return nil
}

// Watch returns a context that ends when ctx ends, when c's token expires
// or when it is revoked, whichever comes first; context.Cause then wraps
// ErrExpired or ErrRevoked. A GraphQL subscription runs under it so it
// stops with its token. Call the CancelFunc when done.
func (i *Issuer) Watch(ctx context.Context, c *Claims) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	if c.ExpiresAt != nil {
		left := c.ExpiresAt.Sub(i.opts.Now())
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, left, reject(ErrExpired, "expired"))
		done := cancel
		// The cause goes first: stopping the timer first would end ctx
		// with a plain Canceled.
		cancel = func(cause error) { done(cause); stop() }
	}
	revoked := func() { cancel(reject(ErrRevoked, "revoked")) }
	i.opts.Revocations.Subscribe(ctx, func(id string) {
		if id == c.ID {
			revoked()
		}
	})
	// A revocation between Verify and Subscribe is not delivered; look.
	if r, err := i.opts.Revocations.Revoked(ctx, c.ID); err == nil && r {
		revoked()
	}
	return ctx, func() { cancel(context.Canceled) }
}
