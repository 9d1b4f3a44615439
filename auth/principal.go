package auth

import "context"

// Principal is who makes a request: a local account, an SSO user or a
// project role token. The zero value is nobody.
type Principal struct {
	// Subject is the user or account name (for a project token,
	// "proj:<project>:<role>").
	Subject string
	// Groups are the SSO groups the subject belongs to.
	Groups []string
	// Email is an SSO user's email address, when the provider gave one.
	Email string
}

type principalKey struct{}

// NewContext returns ctx carrying p.
func NewContext(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal of the request ctx belongs to, and
// false when the request is anonymous.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok && p.Subject != ""
}
