package audit

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultRedisKey is the Redis stream of the audit trail unless NewRedis
// is given another.
const DefaultRedisKey = "graphcd:audit"

// MinSecret is the shortest key NewRedis accepts for signing entries.
const MinSecret = 32

// redisField is the stream entry's one field: MAC and JSON of the entry.
const redisField = "e"

// redisBatch is how many stream entries List reads at a time.
const redisBatch = 256

// redisBlock is how long one XREAD of Run waits for new entries.
const redisBlock = 5 * time.Second

// Redis is a Store shared by API replicas: a Redis stream trimmed to its
// size on every append. Entries are signed (HMAC-SHA256) with a secret
// the replicas share; an entry that does not verify is skipped and
// counted, never shown. Run must be running for Subscribe to see entries.
type Redis struct {
	hub
	client   redis.UniversalClient
	key      string
	size     int64
	secret   []byte
	log      *slog.Logger
	rejected atomic.Uint64
}

var _ Store = (*Redis)(nil)

// NewRedis returns a store on the stream key (DefaultRedisKey when empty)
// keeping size entries (DefaultSize when size <= 0), signed with secret.
func NewRedis(client redis.UniversalClient, key string, size int, secret []byte, log *slog.Logger) (*Redis, error) {
	if len(secret) < MinSecret {
		return nil, fmt.Errorf("the audit trail's signing key must be %d bytes or more", MinSecret)
	}
	if key == "" {
		key = DefaultRedisKey
	}
	if size <= 0 {
		size = DefaultSize
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Redis{client: client, key: key, size: int64(size), secret: secret, log: log}, nil
}

// Rejected is how many stream entries failed to verify or decode.
func (r *Redis) Rejected() uint64 { return r.rejected.Load() }

// Append implements Store.
func (r *Redis) Append(ctx context.Context, e *Entry) error {
	stored := *e
	stored.ID = ""
	// Without HTML escaping: the patch's "<redacted>" stays as it is.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(stored); err != nil {
		return err
	}
	payload := bytes.TrimRight(buf.Bytes(), "\n")
	id, err := r.client.XAdd(ctx, &redis.XAddArgs{
		Stream: r.key, MaxLen: r.size, Values: []any{redisField, r.sign(payload)},
	}).Result()
	if err != nil {
		return fmt.Errorf("append to the audit stream: %w", err)
	}
	e.ID = id
	return nil
}

// streamID matches the IDs Redis gives stream entries.
var streamID = regexp.MustCompile(`^[0-9]{1,20}-[0-9]{1,20}$`)

// List implements Store.
func (r *Redis) List(ctx context.Context, q Query) (Page, error) {
	first := clampFirst(q.First)
	end, start := "+", "-"
	if q.After != "" {
		if !streamID.MatchString(q.After) {
			return Page{}, ErrCursor
		}
		end = "(" + q.After
	}
	if !q.Filter.Since.IsZero() {
		start = strconv.FormatInt(max(q.Filter.Since.UnixMilli(), 0), 10)
	}
	var p Page
	for {
		msgs, err := r.client.XRevRangeN(ctx, r.key, end, start, redisBatch).Result()
		if err != nil {
			return Page{}, fmt.Errorf("read the audit stream: %w", err)
		}
		for _, m := range msgs {
			e, ok := r.open(m)
			if !ok || !q.match(&e) {
				continue
			}
			if len(p.Entries) == first {
				p.More = true
				return p, nil
			}
			p.Entries = append(p.Entries, e)
		}
		if len(msgs) < redisBatch {
			return p, nil
		}
		end = "(" + msgs[len(msgs)-1].ID
	}
}

// Subscribe implements Store.
func (r *Redis) Subscribe(ctx context.Context) <-chan Entry { return r.subscribe(ctx) }

// Run follows the stream and hands new entries to this process's
// subscribers until ctx ends.
func (r *Redis) Run(ctx context.Context) error {
	last := ""
	for ctx.Err() == nil {
		if last == "" {
			msgs, err := r.client.XRevRangeN(ctx, r.key, "+", "-", 1).Result()
			if err != nil {
				r.wait(ctx, err)
				continue
			}
			last = "0-0"
			if len(msgs) == 1 {
				last = msgs[0].ID
			}
		}
		streams, err := r.client.XRead(ctx, &redis.XReadArgs{Streams: []string{r.key, last}, Count: 100, Block: redisBlock}).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			r.wait(ctx, err)
			continue
		}
		for _, s := range streams {
			for _, m := range s.Messages {
				last = m.ID
				if e, ok := r.open(m); ok {
					r.publish(e)
				}
			}
		}
	}
	return nil
}

func (r *Redis) wait(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	r.log.Warn("follow the audit stream; retrying", "err", err)
	select {
	case <-ctx.Done():
	case <-time.After(time.Second):
	}
}

// open verifies and decodes a stream entry.
func (r *Redis) open(m redis.XMessage) (Entry, bool) {
	raw, _ := m.Values[redisField].(string)
	if len(raw) < sha256.Size || !hmac.Equal([]byte(raw[:sha256.Size]), r.mac([]byte(raw[sha256.Size:]))) {
		r.rejected.Add(1)
		return Entry{}, false
	}
	var e Entry
	if err := json.Unmarshal([]byte(raw[sha256.Size:]), &e); err != nil {
		r.rejected.Add(1)
		return Entry{}, false
	}
	e.ID = m.ID
	return e, true
}

func (r *Redis) sign(payload []byte) []byte {
	return append(r.mac(payload), payload...)
}

// mac binds the payload to this stream's key, so an entry cannot be
// replayed into another store signed with the same secret.
func (r *Redis) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, r.secret)
	m.Write([]byte(r.key))
	m.Write([]byte{0})
	m.Write(payload)
	return m.Sum(nil)
}
