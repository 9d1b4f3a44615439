package appstate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/internal/keysign"
)

// DefaultPrefix namespaces the keys of a Redis store.
const DefaultPrefix = "graphcd|appstate|"

// DefaultTTL is how long a state lives in Redis without being rewritten.
const DefaultTTL = 6 * time.Hour

// RedisOptions configure a Redis store.
type RedisOptions struct {
	// Secret is the HMAC-SHA256 key values are signed with, shared by
	// the controller and the API replicas (at least 32 bytes).
	Secret []byte
	// TTL bounds how long a state outlives its last write, so that the
	// state of an app deleted while no controller ran does not linger
	// (default DefaultTTL). Writers must rewrite sooner (see Writer).
	TTL time.Duration
	// MaxSize caps an encoded state (default DefaultMaxSize); see Encode.
	MaxSize int
	// Logger receives warnings about rejected values; nil discards them.
	Logger *slog.Logger
}

// Redis is a Store on Redis, shared by the controller and API replicas.
type Redis struct {
	client   redis.UniversalClient
	prefix   string
	secret   []byte
	ttl      time.Duration
	maxSize  int
	log      *slog.Logger
	rejected atomic.Uint64
}

// NewRedis returns a Redis store whose keys start with prefix
// (DefaultPrefix when ""). It fails when the secret is shorter than 32
// bytes.
func NewRedis(client redis.UniversalClient, prefix string, opts RedisOptions) (*Redis, error) {
	if len(opts.Secret) < keysign.MinSecret {
		return nil, errors.New("application state secret must be at least 32 bytes")
	}
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.MaxSize <= 0 {
		opts.MaxSize = DefaultMaxSize
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Redis{
		client: client, prefix: prefix, secret: bytes.Clone(opts.Secret),
		ttl: opts.TTL, maxSize: opts.MaxSize, log: opts.Logger,
	}, nil
}

// Rejected counts the values read that failed their signature check or
// could not be decoded, and were treated as absent.
func (r *Redis) Rejected() uint64 { return r.rejected.Load() }

func (r *Redis) key(app types.NamespacedName) string {
	return r.prefix + app.Namespace + "/" + app.Name
}

// Put implements Store.
func (r *Redis) Put(ctx context.Context, s State) error {
	b, err := Encode(s, r.maxSize)
	if err != nil {
		return err
	}
	key := r.key(s.App)
	if err := r.client.Set(ctx, key, r.sign(key, b), r.ttl).Err(); err != nil {
		return fmt.Errorf("store state of %s: %w", s.App, err)
	}
	return nil
}

// Get implements Store.
func (r *Redis) Get(ctx context.Context, app types.NamespacedName) (*State, error) {
	key := r.key(app)
	b, err := r.client.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read state of %s: %w", app, err)
	}
	return r.open(ctx, key, b), nil
}

// GetMany implements Store with one MGET (pipelined GETs on Redis
// Cluster, where the keys of a page live in different slots).
func (r *Redis) GetMany(ctx context.Context, apps []types.NamespacedName) ([]*State, error) {
	out := make([]*State, len(apps))
	if len(apps) == 0 {
		return out, nil
	}
	keys := make([]string, len(apps))
	for i, app := range apps {
		keys[i] = r.key(app)
	}
	vals, err := r.fetch(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("read %d application states: %w", len(apps), err)
	}
	for i, v := range vals {
		if v != nil {
			out[i] = r.open(ctx, keys[i], v)
		}
	}
	return out, nil
}

// fetch returns the values of keys, nil for absent ones.
func (r *Redis) fetch(ctx context.Context, keys []string) ([][]byte, error) {
	out := make([][]byte, len(keys))
	if _, ok := r.client.(*redis.ClusterClient); ok {
		cmds := make([]*redis.StringCmd, len(keys))
		_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, k := range keys {
				cmds[i] = p.Get(ctx, k)
			}
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, err
		}
		for i, c := range cmds {
			if b, err := c.Bytes(); err == nil {
				out[i] = b
			}
		}
		return out, nil
	}
	vals, err := r.client.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, err
	}
	for i, v := range vals {
		if s, ok := v.(string); ok {
			out[i] = []byte(s)
		}
	}
	return out, nil
}

// Delete implements Store.
func (r *Redis) Delete(ctx context.Context, app types.NamespacedName) error {
	if err := r.client.Del(ctx, r.key(app)).Err(); err != nil {
		return fmt.Errorf("delete state of %s: %w", app, err)
	}
	return nil
}

// open verifies and decodes a value; a value that fails either is counted,
// logged (by key only) and treated as absent.
func (r *Redis) open(ctx context.Context, key string, raw []byte) *State {
	payload, ok := r.verify(key, raw)
	if !ok {
		r.rejected.Add(1)
		r.log.WarnContext(ctx, "application state failed its signature check; ignoring it", "key", key)
		return nil
	}
	s, err := Decode(payload)
	if err != nil {
		r.rejected.Add(1)
		r.log.WarnContext(ctx, "application state unreadable; ignoring it", "key", key, "err", err)
		return nil
	}
	return s
}

// sign prefixes payload with an HMAC-SHA256 over key and payload: a value
// copied under another app's key does not verify.
func (r *Redis) sign(key string, payload []byte) []byte { return keysign.Sign(r.secret, key, payload) }

func (r *Redis) verify(key string, raw []byte) ([]byte, bool) {
	return keysign.Open(r.secret, key, raw)
}
