// Package keysign signs values stored under a key in a shared cache
// (Redis) with HMAC-SHA256 over the key and the value, so that a value
// altered in the cache, or copied under another key, does not verify.
package keysign

import (
	"crypto/hmac"
	"crypto/sha256"
)

// MinSecret is the shortest secret accepted by the stores that sign.
const MinSecret = 32

// Sign returns payload prefixed with its MAC under secret and key.
func Sign(secret []byte, key string, payload []byte) []byte {
	out := make([]byte, 0, sha256.Size+len(payload))
	out = mac(secret, key, payload, out)
	return append(out, payload...)
}

// Open returns the payload of a value Sign made with the same secret and
// key, and false for any other value.
func Open(secret []byte, key string, raw []byte) ([]byte, bool) {
	if len(raw) < sha256.Size {
		return nil, false
	}
	sum, payload := raw[:sha256.Size], raw[sha256.Size:]
	return payload, hmac.Equal(sum, mac(secret, key, payload, nil))
}

func mac(secret []byte, key string, payload, dst []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(key))
	m.Write([]byte{0})
	m.Write(payload)
	return m.Sum(dst)
}
