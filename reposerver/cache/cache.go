package cache

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Backend stores opaque values by key with a time to live. Implementations
// are safe for concurrent use.
type Backend interface {
	// Get returns the value and true, or false when the key is absent or
	// expired.
	Get(ctx context.Context, key string) ([]byte, bool, error)
	// Set stores value under key for ttl.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// Delete removes key; deleting an absent key is not an error.
	Delete(ctx context.Context, key string) error
}

// LineageBackend is a Backend that keeps only the latest entries of a
// lineage: the renders of one source at successive revisions, of which the
// older ones are rarely asked for again. Memory is one; Redis leaves them
// to its TTL and memory policy.
type LineageBackend interface {
	Backend
	// SetInLineage is Set for an entry of lineage.
	SetInLineage(ctx context.Context, lineage, key string, value []byte, ttl time.Duration) error
}

// Entry is what the repository server caches for one render.
type Entry struct {
	// Manifests are the rendered objects as one JSON array. The cache
	// stores and returns them as bytes, never parsing them, so a hit is
	// decoded once, by the caller, into its own types.
	Manifests json.RawMessage `json:"-"`
	// SourceType is the detected tool (Helm, Kustomize, Directory, Plugin).
	SourceType string `json:"sourceType,omitempty"`
	// Revision is the commit the manifests were rendered from.
	Revision string `json:"revision,omitempty"`
	// Error is set instead of Manifests when rendering failed; such entries
	// live for Options.FailureTTL only.
	Error string `json:"error,omitempty"`
	// Lineage, when set, names the renders this one may supersede: the
	// same source at other revisions (see LineageBackend). Not stored.
	Lineage string `json:"-"`
}

// Options configure a Cache.
type Options struct {
	// Secret is the HMAC key values are signed with (at least 32 bytes).
	Secret []byte
	// TTL is how long a rendered entry lives (default 24 h).
	TTL time.Duration
	// FailureTTL is how long a failure is remembered (default 30 s).
	FailureTTL time.Duration
	// Logger receives warnings about tampered entries and backend errors.
	Logger *slog.Logger
}

// Defaults for Options.
const (
	DefaultTTL        = 24 * time.Hour
	DefaultFailureTTL = 30 * time.Second
)

// Cache signs, stores and verifies manifest entries on a Backend.
type Cache struct {
	backend Backend
	secret  []byte
	ttl     time.Duration
	failTTL time.Duration
	log     *slog.Logger
}

// New returns a Cache over backend. It fails when the secret is too short
// to make signatures meaningful.
func New(backend Backend, opts Options) (*Cache, error) {
	if len(opts.Secret) < 32 {
		return nil, errors.New("cache secret must be at least 32 bytes")
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.FailureTTL <= 0 {
		opts.FailureTTL = DefaultFailureTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Cache{backend: backend, secret: bytes.Clone(opts.Secret), ttl: opts.TTL, failTTL: opts.FailureTTL, log: opts.Logger}, nil
}

// KeyOf derives a cache key from everything that determines a render:
// the SHA-256 of v's JSON encoding (struct fields in order, map keys
// sorted), hex-encoded.
func KeyOf(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("cache key: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Get returns the entry for key. A missing, unreadable or tampered entry is
// a miss; tampering and backend errors are logged.
func (c *Cache) Get(ctx context.Context, key string) (Entry, bool) {
	raw, ok, err := c.backend.Get(ctx, key)
	if err != nil {
		c.log.WarnContext(ctx, "manifest cache read failed", "key", key, "err", err)
		return Entry{}, false
	}
	if !ok {
		return Entry{}, false
	}
	payload, ok := c.verify(raw)
	if !ok {
		c.log.WarnContext(ctx, "manifest cache entry failed signature check; ignoring it", "key", key)
		_ = c.backend.Delete(ctx, key)
		return Entry{}, false
	}
	header, manifests, _ := bytes.Cut(payload, []byte{'\n'})
	var e Entry
	if err := json.Unmarshal(header, &e); err != nil {
		c.log.WarnContext(ctx, "manifest cache entry unreadable; ignoring it", "key", key, "err", err)
		return Entry{}, false
	}
	if len(manifests) > 0 {
		e.Manifests = manifests
	}
	return e, true
}

// Set stores e under key, for FailureTTL when e records an error and TTL
// otherwise, in e's lineage when the backend keeps lineages.
func (c *Cache) Set(ctx context.Context, key string, e Entry) error {
	// The value is the small JSON header, a newline (which the header's
	// encoding never contains), then the manifests as they are.
	header, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode cache entry: %w", err)
	}
	payload := make([]byte, 0, len(header)+1+len(e.Manifests))
	payload = append(append(append(payload, header...), '\n'), e.Manifests...)
	ttl := c.ttl
	if e.Error != "" {
		ttl = c.failTTL
	}
	value := c.sign(payload)
	if lb, ok := c.backend.(LineageBackend); ok && e.Lineage != "" {
		err = lb.SetInLineage(ctx, e.Lineage, key, value, ttl)
	} else {
		err = c.backend.Set(ctx, key, value, ttl)
	}
	if err != nil {
		return fmt.Errorf("store cache entry: %w", err)
	}
	return nil
}

// Delete forgets key (a hard refresh).
func (c *Cache) Delete(ctx context.Context, key string) error {
	return c.backend.Delete(ctx, key)
}

// sign prefixes payload with its HMAC-SHA256.
func (c *Cache) sign(payload []byte) []byte {
	m := hmac.New(sha256.New, c.secret)
	m.Write(payload)
	out := make([]byte, 0, sha256.Size+len(payload))
	out = m.Sum(out)
	return append(out, payload...)
}

// verify checks the HMAC prefix and returns the payload.
func (c *Cache) verify(raw []byte) ([]byte, bool) {
	if len(raw) < sha256.Size {
		return nil, false
	}
	mac, payload := raw[:sha256.Size], raw[sha256.Size:]
	m := hmac.New(sha256.New, c.secret)
	m.Write(payload)
	return payload, hmac.Equal(mac, m.Sum(nil))
}
