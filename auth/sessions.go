package auth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/auth/accounts"
	"github.com/graphcd/graphcd/auth/login"
	"github.com/graphcd/graphcd/auth/session"
)

// ProjectGetter reads AppProjects (catalog.Catalog does).
type ProjectGetter interface {
	Project(ctx context.Context, name string) (*v1alpha1.AppProject, error)
}

// Sessions logs people in and turns tokens back into principals: a token
// is valid when its signature and claims are (session.Issuer) and what it
// was issued for still stands — the account is enabled and its password
// unchanged since, the API token is still listed on the account, the
// project role still lists the token.
type Sessions struct {
	Issuer *session.Issuer
	// Accounts are the local accounts; nil means none (SSO only).
	Accounts *accounts.Store
	// Limiter guards Login; nil means no limit (tests).
	Limiter *login.Limiter
	// Projects resolve project role tokens; nil refuses them.
	Projects ProjectGetter
	// TTL is how long a login lasts; zero means the issuer's default.
	TTL time.Duration
}

// Errors of Sessions, safe to show.
var (
	// ErrBadSession is every reason a token is refused: bad signature,
	// expired, revoked, or issued for something that no longer stands.
	ErrBadSession = errors.New("invalid or expired session: log in again")
	// ErrUnavailable means the token could not be checked now (the keys
	// or the revocation list are unreachable).
	ErrUnavailable = errors.New("sessions cannot be checked right now; try again")
)

type claimsKey struct{}

// Authenticate returns ctx carrying the principal token stands for.
func (s *Sessions) Authenticate(ctx context.Context, token string) (context.Context, error) {
	c, err := s.Issuer.Verify(ctx, token)
	switch {
	case errors.Is(err, session.ErrInvalid), errors.Is(err, session.ErrExpired), errors.Is(err, session.ErrRevoked):
		return ctx, ErrBadSession
	case err != nil:
		return ctx, ErrUnavailable
	}
	if !s.stands(ctx, c) {
		return ctx, ErrBadSession
	}
	ctx = context.WithValue(ctx, claimsKey{}, c)
	return NewContext(ctx, Principal{Subject: c.Subject, Groups: c.Groups, Email: c.Email}), nil
}

// stands reports whether what c was issued for still stands.
func (s *Sessions) stands(ctx context.Context, c *session.Claims) bool {
	switch c.Kind {
	case session.KindSSO:
		return true
	case session.KindSession:
		if s.Accounts == nil {
			return false
		}
		a, ok := s.Accounts.Get(c.Subject)
		return ok && a.Enabled && a.HasCapability(accounts.CapabilityLogin) && c.IssuedAt != nil && a.TokenValid(c.IssuedAt.Time)
	case session.KindAPI:
		return s.Accounts != nil && s.Accounts.HasToken(c.Subject, TokenID(c))
	case session.KindProject:
		return s.projectTokenListed(ctx, c)
	}
	return false
}

// projectTokenListed reports whether the project role c names still lists
// c's token (by ID, or by issue time for tokens without one, as Argo CD
// records them).
func (s *Sessions) projectTokenListed(ctx context.Context, c *session.Claims) bool {
	project, role, ok := ParseProjectSubject(c.Subject)
	if !ok || s.Projects == nil || c.IssuedAt == nil {
		return false
	}
	p, err := s.Projects.Project(ctx, project)
	if err != nil || p == nil {
		return false
	}
	for _, r := range p.Spec.Roles {
		if r.Name != role {
			continue
		}
		tokens := append(append([]v1alpha1.JWTToken(nil), r.JWTTokens...), p.Status.JWTTokensByRole[role].Items...)
		for _, t := range tokens {
			if (t.ID != "" && t.ID == TokenID(c)) || (t.ID == "" && t.IssuedAt == c.IssuedAt.Unix()) {
				return true
			}
		}
	}
	return false
}

// ParseProjectSubject splits "proj:<project>:<role>".
func ParseProjectSubject(sub string) (project, role string, ok bool) {
	rest, ok := strings.CutPrefix(sub, "proj:")
	if !ok {
		return "", "", false
	}
	project, role, ok = strings.Cut(rest, ":")
	return project, role, ok && project != "" && role != "" && !strings.Contains(role, ":")
}

// Bind returns a context that ends when the session of ctx does: its
// token expires or is revoked, in any replica. Without a session it is
// ctx.
func (s *Sessions) Bind(ctx context.Context) context.Context {
	c, ok := ctx.Value(claimsKey{}).(*session.Claims)
	if !ok {
		return ctx
	}
	bound, cancel := s.Issuer.Watch(ctx, c)
	context.AfterFunc(bound, cancel) // releases the watch when either ends
	return bound
}

// Claims returns the claims of the session ctx was authenticated with.
func Claims(ctx context.Context) (*session.Claims, bool) {
	c, ok := ctx.Value(claimsKey{}).(*session.Claims)
	return c, ok
}

// LoginError is a refused login. Its message is the same whether the user
// does not exist or the password is wrong.
type LoginError struct {
	// RetryAfter is set when the login was refused for too many failures
	// or attempts: try again then.
	RetryAfter time.Duration
	err        error
}

func (e *LoginError) Error() string { return e.err.Error() }
func (e *LoginError) Unwrap() error { return e.err }

// Login checks username's password and issues a session token. client
// identifies the caller (its address) for the failure limits. Each call
// counts in graphcd_login_request_total.
func (s *Sessions) Login(ctx context.Context, username, password, client string) (string, *session.Claims, error) {
	token, claims, err := s.login(ctx, username, password, client)
	countLogin(err)
	return token, claims, err
}

func (s *Sessions) login(ctx context.Context, username, password, client string) (string, *session.Claims, error) {
	if s.Accounts == nil {
		return "", nil, &LoginError{err: accounts.ErrInvalidCredentials}
	}
	var attempt *login.Attempt
	if s.Limiter != nil {
		var err error
		if attempt, err = s.Limiter.Begin(ctx, username, client); err != nil {
			le := &LoginError{err: err}
			if b, ok := errors.AsType[*login.BlockedError](err); ok {
				le.RetryAfter = b.RetryAfter
			} else if errors.Is(err, login.ErrBusy) {
				le.RetryAfter = time.Second
			}
			return "", nil, le
		}
	}
	err := s.Accounts.CheckPassword(ctx, username, password)
	if attempt != nil {
		attempt.Done(err == nil)
	}
	if err != nil {
		if errors.Is(err, accounts.ErrInvalidCredentials) {
			return "", nil, &LoginError{err: accounts.ErrInvalidCredentials}
		}
		return "", nil, fmt.Errorf("check password: %w", err)
	}
	if err := s.afterPasswordChange(ctx, username); err != nil {
		return "", nil, err
	}
	return s.Issuer.Issue(ctx, session.Template{Subject: username, Kind: session.KindSession, TTL: s.TTL})
}

// afterPasswordChange waits, when username's password changed within the
// current second, for that second to end: tokens carry their issue time
// in whole seconds, and one issued in the second of a change counts as
// issued before it (Account.TokenValid). The account read is the one the
// password was just checked against, so its change time is that
// password's.
func (s *Sessions) afterPasswordChange(ctx context.Context, username string) error {
	a, ok := s.Accounts.Get(username)
	if !ok {
		return nil
	}
	wait := time.Until(a.PasswordMtime.Truncate(time.Second).Add(time.Second))
	if wait <= 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(wait):
		return nil
	}
}

// Logout revokes the session of ctx, if any.
func (s *Sessions) Logout(ctx context.Context) error {
	c, ok := Claims(ctx)
	if !ok {
		return nil
	}
	return s.Issuer.Revoke(ctx, c)
}

// List returns the local accounts, ordered by name.
func (s *Sessions) List() []accounts.Account {
	if s.Accounts == nil {
		return nil
	}
	return s.Accounts.List()
}

// ChangePassword sets account's password to next, once caller proves who
// they are with their own current password (checked under the login
// limits, so it cannot be used to guess it). Every session of account
// issued before the change stops working.
func (s *Sessions) ChangePassword(ctx context.Context, caller, account, current, next string) error {
	if s.Accounts == nil {
		return &LoginError{err: accounts.ErrInvalidCredentials}
	}
	var attempt *login.Attempt
	if s.Limiter != nil {
		var err error
		if attempt, err = s.Limiter.Begin(ctx, caller, "password-change:"+caller); err != nil {
			return &LoginError{err: err}
		}
	}
	err := s.Accounts.CheckPassword(ctx, caller, current)
	if attempt != nil {
		attempt.Done(err == nil)
	}
	if err != nil {
		if errors.Is(err, accounts.ErrInvalidCredentials) {
			return &LoginError{err: errors.New("the current password is wrong")}
		}
		return err
	}
	return s.Accounts.SetPassword(ctx, account, next)
}

// ErrNoAPIKey refuses tokens for an account without the apiKey capability.
var ErrNoAPIKey = errors.New("the account does not exist, is disabled or lacks the apiKey capability")

// CreateAccountToken issues an API token for account, valid for ttl (0:
// no expiry), with id (random when empty), and lists it on the account.
func (s *Sessions) CreateAccountToken(ctx context.Context, account, id string, ttl time.Duration) (string, *session.Claims, error) {
	if s.Accounts == nil {
		return "", nil, ErrNoAPIKey
	}
	a, ok := s.Accounts.Get(account)
	if !ok || !a.Enabled || !a.HasCapability(accounts.CapabilityAPIKey) {
		return "", nil, ErrNoAPIKey
	}
	if _, exists := a.Token(id); exists && id != "" {
		return "", nil, accounts.ErrTokenExists
	}
	token, c, err := s.issueLong(ctx, session.Template{Subject: account, Kind: session.KindAPI, ID: id}, ttl)
	if err != nil {
		return "", nil, err
	}
	t := accounts.Token{ID: TokenID(c), IssuedAt: c.IssuedAt.Unix()}
	if ttl > 0 {
		t.ExpiresAt = c.ExpiresAt.Unix()
	}
	if err := s.Accounts.AddToken(ctx, account, t); err != nil {
		return "", nil, err
	}
	return token, c, nil
}

// DeleteAccountToken removes account's token id and revokes it, so that
// it stops at once, open subscriptions included.
func (s *Sessions) DeleteAccountToken(ctx context.Context, account, id string) error {
	if s.Accounts == nil {
		return ErrNoAPIKey
	}
	a, ok := s.Accounts.Get(account)
	if !ok {
		return ErrNoAPIKey
	}
	t, ok := a.Token(id)
	if !ok {
		return accounts.ErrTokenNotFound
	}
	if err := s.Accounts.RemoveToken(ctx, account, id); err != nil {
		return err
	}
	return s.RevokeToken(ctx, account, id, tokenEnd(t.IssuedAt, t.ExpiresAt))
}

// IssueProjectToken issues a token for the role of project, valid for ttl
// (0: no expiry), with id (random when empty). The caller lists it on the
// AppProject; until then it is refused.
func (s *Sessions) IssueProjectToken(ctx context.Context, project, role, id string, ttl time.Duration) (string, *session.Claims, error) {
	return s.issueLong(ctx, session.Template{Subject: "proj:" + project + ":" + role, Kind: session.KindProject, ID: id}, ttl)
}

// RevokeToken revokes subject's token id (an account's API token, a
// project role's token) until it would expire anyway.
func (s *Sessions) RevokeToken(ctx context.Context, subject, id string, until time.Time) error {
	c := &session.Claims{}
	c.ID = jti(subject, id)
	c.ExpiresAt = jwt.NewNumericDate(until)
	return s.Issuer.Revoke(ctx, c)
}

// issueLong issues an API or project token: ttl 0 means no expiry.
func (s *Sessions) issueLong(ctx context.Context, t session.Template, ttl time.Duration) (string, *session.Claims, error) {
	if ttl < 0 {
		return "", nil, errors.New("a token's lifetime must be positive")
	}
	t.TTL = ttl
	if ttl == 0 {
		t.TTL = session.NoExpiryTTL
	}
	if t.ID == "" {
		var b [12]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", nil, err
		}
		t.ID = hex.EncodeToString(b[:])
	}
	// IDs are unique only within an account or a role: the token's jti,
	// which the revocation list is keyed by, carries the subject too.
	t.ID = jti(t.Subject, t.ID)
	return s.Issuer.Issue(ctx, t)
}

// jti is the jti claim of subject's API or project token id.
func jti(subject, id string) string { return subject + "/" + id }

// TokenID is the ID an account or project role lists its token c by.
func TokenID(c *session.Claims) string { return strings.TrimPrefix(c.ID, c.Subject+"/") }

// tokenEnd is when a listed token expires: at exp, or NoExpiryTTL after
// it was issued for one "without expiry".
func tokenEnd(iat, exp int64) time.Time {
	if exp > 0 {
		return time.Unix(exp, 0)
	}
	return time.Unix(iat, 0).Add(session.NoExpiryTTL)
}

// ProjectTokenEnd is when a project role's token expires; see tokenEnd.
func ProjectTokenEnd(t v1alpha1.JWTToken) time.Time { return tokenEnd(t.IssuedAt, t.ExpiresAt) }
