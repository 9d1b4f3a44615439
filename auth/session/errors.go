package session

import (
	"errors"
	"fmt"
)

// The reasons Verify rejects a token. Verify's errors wrap exactly one of
// them, so callers tell the cases apart with errors.Is; their text says
// why without repeating the token. Any other error (a key source or
// revocation store failing) means the token could not be checked.
var (
	// ErrInvalid is a token that is malformed, not signed by a current
	// key with HS256, or for another issuer or audience, or not valid yet,
	// or missing a required claim.
	ErrInvalid = errors.New("invalid token")
	// ErrExpired is a token past its exp.
	ErrExpired = errors.New("token expired")
	// ErrRevoked is a token revoked before its exp (logout, revoked API or
	// project token).
	ErrRevoked = errors.New("token revoked")
)

// reject wraps one of the sentinel errors with a reason that never holds
// token material.
func reject(sentinel error, reason string) error {
	return fmt.Errorf("%w: %s", sentinel, reason)
}
