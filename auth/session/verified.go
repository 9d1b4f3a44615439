package session

import (
	"crypto/sha256"
	"sync"
	"time"
)

// verifiedSize bounds the verified-token cache: enough for the tokens of
// every active user of a large installation, a few MB at most.
const verifiedSize = 8192

// verified remembers tokens that passed the signature and claim checks, so
// the same token on the next request skips the JSON decoding that is most
// of Verify's cost. Only what cannot change is cached: on a hit Verify
// still checks that the signing key is still a key, the times, and the
// revocation list. Entries are keyed by the SHA-256 of the token, so the
// cache holds no token.
type verified struct {
	mu      sync.RWMutex
	entries map[[sha256.Size]byte]verifiedEntry
}

type verifiedEntry struct {
	claims *Claims
	kid    string
}

func newVerified() *verified {
	return &verified{entries: make(map[[sha256.Size]byte]verifiedEntry)}
}

func (v *verified) get(sum [sha256.Size]byte) (verifiedEntry, bool) {
	v.mu.RLock()
	e, ok := v.entries[sum]
	v.mu.RUnlock()
	return e, ok
}

// put adds an entry, first dropping expired ones, and if none had expired,
// an arbitrary one, when the cache is full.
func (v *verified) put(sum [sha256.Size]byte, e verifiedEntry, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.entries) >= verifiedSize {
		for k, old := range v.entries {
			if !old.claims.ExpiresAt.Add(Leeway).After(now) {
				delete(v.entries, k)
			}
		}
		for k := range v.entries {
			if len(v.entries) < verifiedSize {
				break
			}
			delete(v.entries, k)
		}
	}
	v.entries[sum] = e
}

func (v *verified) drop(sum [sha256.Size]byte) {
	v.mu.Lock()
	delete(v.entries, sum)
	v.mu.Unlock()
}

// timely checks a cached token's times as the parser would: exp, nbf and
// iat within Leeway of now.
func timely(c *Claims, now time.Time) error {
	if !now.Before(c.ExpiresAt.Add(Leeway)) {
		return reject(ErrExpired, "expired")
	}
	if c.NotBefore != nil && now.Add(Leeway).Before(c.NotBefore.Time) {
		return reject(ErrInvalid, "not valid yet (nbf)")
	}
	if c.IssuedAt != nil && now.Add(Leeway).Before(c.IssuedAt.Time) {
		return reject(ErrInvalid, "issued in the future (iat)")
	}
	return nil
}
