package statusboard

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/graphcd/graphcd/internal/keysign"
)

// DefaultPrefix namespaces the board's keys in Redis.
const DefaultPrefix = "graphcd|status|"

// RedisOptions configure a Redis board.
type RedisOptions struct {
	// Prefix of the board's two keys (DefaultPrefix when "").
	Prefix string
	// Secret signs the entries (at least keysign.MinSecret bytes), the
	// same on every replica.
	Secret []byte
}

// Redis is a Board in two Redis hashes: one field per shard, and one per
// component. Each write renews the hash's expiry, so that a board no one
// writes any more goes away.
type Redis struct {
	client               redis.UniversalClient
	secret               []byte
	clusters, components string
	now                  func() time.Time
}

// NewRedis returns a board on client.
func NewRedis(client redis.UniversalClient, opts RedisOptions) (*Redis, error) {
	if len(opts.Secret) < keysign.MinSecret {
		return nil, fmt.Errorf("status board secret must be at least %d bytes", keysign.MinSecret)
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	return &Redis{
		client: client, secret: opts.Secret, now: time.Now,
		clusters: opts.Prefix + "clusters", components: opts.Prefix + "components",
	}, nil
}

// PutClusters implements Board.
func (r *Redis) PutClusters(ctx context.Context, shard int, clusters []Cluster) error {
	return r.put(ctx, r.clusters, shardField(shard), shardEntry{At: r.now(), Clusters: boundClusters(clusters)})
}

// Clusters implements Board.
func (r *Redis) Clusters(ctx context.Context) ([]Cluster, error) {
	var out []Cluster
	err := r.each(ctx, r.clusters, func(raw []byte) (time.Time, error) {
		var e shardEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return time.Time{}, err
		}
		if fresh(e.At, r.now()) {
			out = append(out, e.Clusters...)
		}
		return e.At, nil
	})
	sortClusters(out)
	return out, err
}

// Beat implements Board.
func (r *Redis) Beat(ctx context.Context, c Component) error {
	c = boundComponent(c)
	c.Seen = r.now()
	if n, err := r.client.HLen(ctx, r.components).Result(); err == nil && n >= MaxComponents {
		if _, err := r.Components(ctx); err != nil { // removes the stale ones
			return err
		}
		if n, err = r.client.HLen(ctx, r.components).Result(); err == nil && n >= MaxComponents {
			if ok, _ := r.client.HExists(ctx, r.components, componentKey(c)).Result(); !ok {
				return nil // full of live components
			}
		}
	}
	return r.put(ctx, r.components, componentKey(c), c)
}

// Components implements Board.
func (r *Redis) Components(ctx context.Context) ([]Component, error) {
	var out []Component
	err := r.each(ctx, r.components, func(raw []byte) (time.Time, error) {
		var c Component
		if err := json.Unmarshal(raw, &c); err != nil {
			return time.Time{}, err
		}
		if fresh(c.Seen, r.now()) {
			out = append(out, c)
		}
		return c.Seen, nil
	})
	return sortComponents(out), err
}

func (r *Redis) put(ctx context.Context, key, field string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, field, keysign.Sign(r.secret, key+"|"+field, b))
		p.Expire(ctx, key, 2*StaleAfter)
		return nil
	})
	if err != nil {
		return fmt.Errorf("publish status %s: %w", field, err)
	}
	return nil
}

// each reads every field of the hash at key and hands its verified value
// to fn, which returns when the value was written; fields that are stale,
// unsigned or unreadable are removed.
func (r *Redis) each(ctx context.Context, key string, fn func(raw []byte) (time.Time, error)) error {
	all, err := r.client.HGetAll(ctx, key).Result()
	if err != nil {
		return fmt.Errorf("read status: %w", err)
	}
	var drop []string
	for field, v := range all {
		raw, ok := keysign.Open(r.secret, key+"|"+field, []byte(v))
		if !ok {
			drop = append(drop, field)
			continue
		}
		at, err := fn(raw)
		if err != nil || !fresh(at, r.now()) {
			drop = append(drop, field)
		}
	}
	if len(drop) > 0 {
		if err := r.client.HDel(ctx, key, drop...).Err(); err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("remove stale status: %w", err)
		}
	}
	return nil
}

// Server is what Redis says of itself.
type Server struct {
	Version string
	// UsedMemory and MaxMemory are in bytes; MaxMemory 0 means no limit.
	UsedMemory, MaxMemory int64
}

// Ping asks Redis for its version and memory use.
func Ping(ctx context.Context, client redis.UniversalClient) (Server, error) {
	info, err := client.Info(ctx, "server", "memory").Result()
	if err != nil {
		return Server{}, fmt.Errorf("redis INFO: %w", err)
	}
	var s Server
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok {
			continue
		}
		switch k {
		case "redis_version":
			s.Version = cut(v)
		case "used_memory":
			s.UsedMemory, _ = strconv.ParseInt(v, 10, 64)
		case "maxmemory":
			s.MaxMemory, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return s, nil
}
