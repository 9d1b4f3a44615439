package session

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// MinKeySize is the shortest signing key accepted, in bytes: HMAC-SHA256
// keys shorter than the hash add no strength and are easier to guess.
const MinKeySize = 32

// Key is an HMAC-SHA256 signing key.
type Key struct {
	// ID goes in the kid header of the tokens the key signs, so Verify
	// picks the right key after a rotation. It is a short hash of Secret,
	// never the secret itself.
	ID string
	// Secret is the key material, at least MinKeySize bytes.
	Secret []byte
}

// NewKey returns a key made from secret. It fails when secret is shorter
// than MinKeySize.
func NewKey(secret []byte) (Key, error) {
	if len(secret) < MinKeySize {
		return Key{}, fmt.Errorf("session key is %d bytes, want at least %d", len(secret), MinKeySize)
	}
	return Key{ID: keyID(secret), Secret: secret}, nil
}

// GenerateKey returns a new random key of MinKeySize bytes.
func GenerateKey() Key {
	secret := make([]byte, MinKeySize)
	_, _ = rand.Read(secret) // never fails (crypto/rand)
	k, _ := NewKey(secret)
	return k
}

// keyID is the first 8 bytes of a domain-separated SHA-256 of secret, in
// hex: enough to tell a handful of keys apart, useless to recover one.
func keyID(secret []byte) string {
	h := sha256.New()
	h.Write([]byte("graphcd session key id\x00"))
	h.Write(secret)
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// KeySource supplies the keys an Issuer signs and verifies with. Issue and
// Verify call Keys on every token, so implementations answer from memory.
type KeySource interface {
	// Keys returns the key new tokens are signed with, which also
	// verifies, and the older keys that still verify tokens they signed
	// but sign nothing new.
	Keys(ctx context.Context) (current Key, verifyOnly []Key, err error)
}

// StaticKeys is a KeySource that never changes, for tests and the CLI.
type StaticKeys struct {
	Current    Key
	VerifyOnly []Key
}

var _ KeySource = StaticKeys{}

// Keys returns s's keys; it fails when the current key is missing.
func (s StaticKeys) Keys(context.Context) (Key, []Key, error) {
	if len(s.Current.Secret) == 0 {
		return Key{}, nil, errors.New("session: no signing key")
	}
	return s.Current, s.VerifyOnly, nil
}
