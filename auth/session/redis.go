package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultRedisPrefix starts the names of the Redis keys and channel of a
// RedisRevocations unless NewRedisRevocations is given another.
const DefaultRedisPrefix = "graphcd:revoked:"

// redisIdle is how long the subscription may stay silent before it is
// pinged; a second silent period replaces the connection. It bounds how
// long a replica cut off from Redis without noticing trusts its copy.
const redisIdle = 15 * time.Second

// RedisRevocations is a Revocations shared by every replica using one
// Redis. A revocation is the key <prefix>id:<id> (value: until in Unix
// milliseconds, TTL until then) and a message on the channel
// <prefix>events.
//
// Verify runs Revoked on every request, so each replica keeps a copy of the
// list: Run subscribes to the channel, then SCANs the keys, and from then
// on the channel keeps the copy current. While that holds, Revoked answers
// from memory; before Run has synced, and whenever the subscription is
// down, it asks Redis (one EXISTS) and fails when Redis does. A revocation
// reaches other replicas as fast as Redis pub/sub delivers it
// (milliseconds).
type RedisRevocations struct {
	client    *redis.Client
	keyPrefix string
	channel   string
	set       *revokedSet
	hub       *hub
	log       *slog.Logger
	now       func() time.Time

	// synced is true while the copy in set is known to be complete.
	synced    atomic.Bool
	ready     chan struct{}
	readyOnce sync.Once
	running   atomic.Bool
}

var _ Revocations = (*RedisRevocations)(nil)

// NewRedisRevocations returns the list kept in the Redis client talks to,
// under prefix (DefaultRedisPrefix when empty). Revoke and Revoked work
// at once; Run must be running for Revoked to answer from memory and for
// Subscribe to hear of other replicas' revocations.
func NewRedisRevocations(client *redis.Client, prefix string) *RedisRevocations {
	if prefix == "" {
		prefix = DefaultRedisPrefix
	}
	return &RedisRevocations{
		client:    client,
		keyPrefix: prefix + "id:",
		channel:   prefix + "events",
		set:       newRevokedSet(),
		hub:       newHub(),
		log:       slog.Default().With("component", "session", "channel", prefix+"events"),
		now:       time.Now,
		ready:     make(chan struct{}),
	}
}

// revocation is the message announcing one revocation.
type revocation struct {
	ID string `json:"id"`
	// Until is in Unix milliseconds.
	Until int64 `json:"until"`
}

// Revoke stores id in Redis until until and announces it to every
// replica. An until in the past does nothing.
func (r *RedisRevocations) Revoke(ctx context.Context, id string, until time.Time) error {
	if id == "" {
		return errors.New("revoke: empty id")
	}
	ttl := until.Sub(r.now())
	if ttl <= 0 {
		return nil
	}
	msg, err := json.Marshal(revocation{ID: id, Until: until.UnixMilli()})
	if err != nil {
		return fmt.Errorf("revoke: %w", err)
	}
	_, err = r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, r.keyPrefix+id, strconv.FormatInt(until.UnixMilli(), 10), ttl)
		p.Publish(ctx, r.channel, msg)
		return nil
	})
	if err != nil {
		return fmt.Errorf("revoke in Redis: %w", err)
	}
	r.add(id, until)
	return nil
}

// Revoked reports whether id is on the list, from memory while Run is in
// sync with Redis and from Redis otherwise.
func (r *RedisRevocations) Revoked(ctx context.Context, id string) (bool, error) {
	if r.set.has(id, r.now()) {
		return true, nil
	}
	if r.synced.Load() {
		return false, nil
	}
	n, err := r.client.Exists(ctx, r.keyPrefix+id).Result()
	if err != nil {
		return false, fmt.Errorf("check revocation in Redis: %w", err)
	}
	return n > 0, nil
}

// Subscribe calls fn with each id revoked from now on in any replica
// (while Run runs) until ctx ends. An id revoked while this replica was
// cut off from Redis is delivered when it reconnects.
func (r *RedisRevocations) Subscribe(ctx context.Context, fn func(id string)) {
	r.hub.subscribe(ctx, fn)
}

// Ready is closed once Run has first loaded the list from Redis.
func (r *RedisRevocations) Ready() <-chan struct{} { return r.ready }

// add records a revocation in the local copy, telling subscribers when it
// is news.
func (r *RedisRevocations) add(id string, until time.Time) {
	if r.set.add(id, until, r.now()) {
		r.hub.publish(id)
	}
}

// Run keeps the local copy of the list in sync with Redis until ctx ends,
// replacing the subscription after errors. It returns nil then. A list
// runs once.
func (r *RedisRevocations) Run(ctx context.Context) error {
	if !r.running.CompareAndSwap(false, true) {
		return errors.New("session: RedisRevocations.Run called twice")
	}
	r.receive(ctx)
	return nil
}

// receive holds one subscription at a time until ctx ends.
func (r *RedisRevocations) receive(ctx context.Context) {
	var backoff time.Duration
	for ctx.Err() == nil {
		ps := r.client.Subscribe(ctx, r.channel)
		stop := context.AfterFunc(ctx, func() { _ = ps.Close() })
		err := r.session(ctx, ps)
		r.synced.Store(false)
		stop()
		_ = ps.Close()
		if ctx.Err() != nil {
			return
		}
		backoff = nextBackoff(backoff)
		r.log.Warn("revocation list subscription replaced", "err", err, "retryIn", backoff)
		if !sleep(ctx, backoff) {
			return
		}
	}
}

// session reads ps until ctx ends or the connection fails in a way
// go-redis does not recover from by itself. Each (re)subscription may
// follow missed messages, so it reloads the list before trusting the copy
// again.
func (r *RedisRevocations) session(ctx context.Context, ps *redis.PubSub) error {
	pinged := false
	var backoff time.Duration
	for {
		msg, err := ps.ReceiveTimeout(ctx, redisIdle)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
				if pinged {
					return errors.New("no answer to ping")
				}
				pinged = true
				_ = ps.Ping(ctx) // an error here makes the next read reconnect
				continue
			}
			// go-redis reconnects on the next read; until then the copy
			// may miss revocations.
			r.synced.Store(false)
			backoff = nextBackoff(backoff)
			r.log.Warn("receive revocations from Redis", "err", err, "retryIn", backoff)
			if !sleep(ctx, backoff) {
				return ctx.Err()
			}
			continue
		}
		pinged, backoff = false, 0
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind != "subscribe" {
				continue
			}
			r.synced.Store(false)
			if err := r.load(ctx); err != nil {
				return fmt.Errorf("load revocations: %w", err)
			}
			r.synced.Store(true)
			r.readyOnce.Do(func() { close(r.ready) })
		case *redis.Message:
			var rv revocation
			if err := json.Unmarshal([]byte(m.Payload), &rv); err != nil || rv.ID == "" {
				r.log.Warn("ignored an invalid revocation message")
				continue
			}
			r.add(rv.ID, time.UnixMilli(rv.Until))
		}
	}
}

// load adds every revocation stored in Redis to the local copy.
func (r *RedisRevocations) load(ctx context.Context) error {
	match := escapeGlob(r.keyPrefix) + "*"
	var cursor uint64
	for {
		keys, next, err := r.client.Scan(ctx, cursor, match, 1000).Result()
		if err != nil {
			return err
		}
		if len(keys) > 0 {
			vals, err := r.client.MGet(ctx, keys...).Result()
			if err != nil {
				return err
			}
			for i, v := range vals {
				s, ok := v.(string)
				if !ok {
					continue // expired since the SCAN
				}
				ms, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					continue
				}
				r.add(strings.TrimPrefix(keys[i], r.keyPrefix), time.UnixMilli(ms))
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// escapeGlob quotes the characters SCAN's MATCH treats specially.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func nextBackoff(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return 100 * time.Millisecond
	case d >= 5*time.Second:
		return 5 * time.Second
	default:
		return d * 2
	}
}

// sleep waits d or until ctx ends; it reports whether ctx is still alive.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
