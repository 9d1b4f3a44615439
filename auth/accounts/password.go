package accounts

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Password length bounds: bcrypt reads at most 72 bytes, and refuses to
// hash more rather than silently ignore the rest.
const (
	MinPasswordLen = 8
	MaxPasswordLen = 72
)

// CheckPassword verifies a sign-in: it returns nil when name is an enabled
// account with the login capability whose password is password, and
// ErrInvalidCredentials otherwise, whatever the reason. Every call runs one
// bcrypt comparison (against a dummy hash when there is nothing to compare
// with), so the time taken does not tell unknown users from wrong
// passwords.
func (s *Store) CheckPassword(ctx context.Context, name, password string) error {
	s.mu.RLock()
	a, ok := s.snap.accounts[name]
	hash := s.snap.hashes[name]
	s.mu.RUnlock()
	usable := ok && a.Enabled && a.HasCapability(CapabilityLogin) && len(hash) > 0
	if !usable {
		hash = s.dummyHash()
	}
	match := bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil
	if !usable || !match {
		return ErrInvalidCredentials
	}
	return nil
}

// dummyHash is a hash of a random password nobody knows, at the store's
// cost, for comparisons that must take a real comparison's time.
func (s *Store) dummyHash() []byte {
	s.dummyOnce.Do(func() {
		h, err := bcrypt.GenerateFromPassword([]byte(rand.Text()), s.cost)
		if err != nil {
			panic(fmt.Sprintf("accounts: hash dummy password: %v", err)) // only a bad cost gets here
		}
		s.dummy = h
	})
	return s.dummy
}

// UpdatePassword changes the password of the account name after checking
// current against the stored password (ErrInvalidCredentials when it does
// not match). See SetPassword for what a change does.
func (s *Store) UpdatePassword(ctx context.Context, name, current, next string) error {
	return s.setPassword(ctx, name, &current, next)
}

// SetPassword changes the password of the account name without asking for
// the current one: for an administrator resetting someone else's password
// (authorize before calling). The account must exist; next must be
// MinPasswordLen to MaxPasswordLen bytes (ErrPasswordPolicy). It writes the
// bcrypt hash and passwordMtime, which revokes every token issued before
// (see Account.TokenValid), and returns once a token issued after it
// returns is valid: within a second.
func (s *Store) SetPassword(ctx context.Context, name, next string) error {
	return s.setPassword(ctx, name, nil, next)
}

func (s *Store) setPassword(ctx context.Context, name string, current *string, next string) error {
	if len(next) < MinPasswordLen || len(next) > MaxPasswordLen {
		return ErrPasswordPolicy
	}
	if _, ok := s.Get(name); !ok {
		if current != nil {
			_ = s.CheckPassword(ctx, name, *current) // same time as a wrong password
			return ErrInvalidCredentials
		}
		return fmt.Errorf("set password of %s: %w", name, ErrNotFound)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(next), s.cost)
	if err != nil {
		return fmt.Errorf("set password of %s: hash: %w", name, err)
	}
	mtime := s.now().UTC().Truncate(time.Second)
	sec, err := updateSecret(ctx, s.client, s.namespace, func(data map[string][]byte) error {
		if current != nil {
			// Check against the stored hash, not the cache: the cache may
			// trail a change made a moment ago.
			stored := data[passwordKey(name)]
			if len(stored) == 0 {
				stored = s.dummyHash()
			}
			if bcrypt.CompareHashAndPassword(stored, []byte(*current)) != nil || len(data[passwordKey(name)]) == 0 {
				return ErrInvalidCredentials
			}
		}
		data[passwordKey(name)] = hash
		data[mtimeKey(name)] = []byte(mtime.Format(time.RFC3339))
		return nil
	})
	if err != nil {
		if current != nil && errors.Is(err, ErrInvalidCredentials) {
			return ErrInvalidCredentials
		}
		return fmt.Errorf("set password of %s: %w", name, err)
	}
	if err := s.waitFor(ctx, sec); err != nil {
		return err
	}
	// Tokens issued in mtime's second are refused; let it pass.
	return sleep(ctx, mtime.Add(time.Second).Sub(s.now()))
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
