package eventbus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultChannel is the Redis pub/sub channel events travel on unless
// NewRedis is given another.
const DefaultChannel = "graphcd:events"

// ErrBackedUp is returned by Redis.Publish when events wait for Redis
// faster than they can be sent: the event reached this process's
// subscribers but not the other replicas'.
var ErrBackedUp = errors.New("eventbus: too many events waiting for Redis")

// RedisOptions tune a Redis bus.
type RedisOptions struct {
	// Queue is how many encoded events may wait for the sending goroutine
	// (default 4096).
	Queue int
	// Idle is how long the Redis subscription may stay silent before it is
	// pinged; a second silent Idle replaces the connection (default 30s).
	Idle time.Duration
	// Logger gets connection errors (default slog.Default()).
	Logger *slog.Logger
}

// maxOrigins bounds the publishers whose sequence a bus remembers, so
// messages naming made-up origins cannot grow its memory.
const maxOrigins = 1024

// maxBatch is how many queued events one pipeline sends.
const maxBatch = 256

// Redis is a Bus shared by every process publishing and subscribing on one
// Redis channel. Run must be running for events to travel between
// processes.
type Redis struct {
	client  *redis.Client
	channel string
	hub     *Hub
	log     *slog.Logger
	idle    time.Duration
	origin  string

	pubMu sync.Mutex // orders sequence numbers as they are queued
	seq   uint64
	out   chan []byte

	ready     chan struct{}
	readyOnce sync.Once
	// last is each origin's last sequence number; only the receiving
	// goroutine touches it.
	last map[string]uint64

	received, invalid, gaps, publishErrors atomic.Uint64
	running                                atomic.Bool
}

var _ Bus = (*Redis)(nil)

// NewRedis returns a bus on channel (DefaultChannel when empty) of the
// Redis that client talks to. It does nothing until Run.
func NewRedis(client *redis.Client, channel string, opts RedisOptions) *Redis {
	if channel == "" {
		channel = DefaultChannel
	}
	if opts.Queue <= 0 {
		opts.Queue = 4096
	}
	if opts.Idle <= 0 {
		opts.Idle = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	id := make([]byte, 8)
	_, _ = rand.Read(id) // never fails (crypto/rand)
	return &Redis{
		client:  client,
		channel: channel,
		hub:     NewHub(),
		log:     opts.Logger.With("component", "eventbus", "channel", channel),
		idle:    opts.Idle,
		origin:  hex.EncodeToString(id),
		out:     make(chan []byte, opts.Queue),
		ready:   make(chan struct{}),
		last:    map[string]uint64{},
	}
}

// Lost gives the local subscriptions a Lagged marker and leaves a hole in
// the bus's sequence, so that every other process marks its subscriptions
// lagged when the next event arrives.
func (r *Redis) Lost() {
	r.pubMu.Lock()
	r.seq++
	r.pubMu.Unlock()
	r.hub.Lag()
}

// Publish hands ev to this process's subscribers and queues it for Redis,
// without waiting for either. It fails for an invalid event, and with
// ErrBackedUp when the queue to Redis is full.
func (r *Redis) Publish(_ context.Context, ev Event) error {
	ev.Message = trimMessage(ev.Message)
	ev.Origin = r.origin
	if err := ev.Validate(); err != nil {
		return err
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	r.pubMu.Lock()
	defer r.pubMu.Unlock()
	r.seq++
	ev.Seq = r.seq
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	r.hub.Publish(ev)
	select {
	case r.out <- b:
		return nil
	default:
		// Receivers see the hole in the sequence and mark their
		// subscribers lagged.
		r.publishErrors.Add(1)
		return ErrBackedUp
	}
}

// Subscribe starts a subscription on this process's hub, which Run feeds
// with every process's events.
func (r *Redis) Subscribe(ctx context.Context, f Filter, opts Options) *Subscription {
	return r.hub.Subscribe(ctx, f, opts)
}

// Ready is closed once Run has subscribed to Redis for the first time:
// from then on events published anywhere reach this process.
func (r *Redis) Ready() <-chan struct{} { return r.ready }

// Stats returns the hub's counters with the bus's own.
func (r *Redis) Stats() Stats {
	s := r.hub.Stats()
	s.Received = r.received.Load()
	s.Invalid = r.invalid.Load()
	s.Gaps = r.gaps.Load()
	s.PublishErrors = r.publishErrors.Load()
	return s
}

// Run sends queued events to Redis and feeds the hub from one Redis
// subscription, reconnecting after errors, until ctx ends. It returns nil
// then. Subscriptions stay open: they end with their own contexts. A bus
// runs once.
func (r *Redis) Run(ctx context.Context) error {
	if !r.running.CompareAndSwap(false, true) {
		return errors.New("eventbus: Run called twice")
	}
	var wg sync.WaitGroup
	wg.Go(func() { r.send(ctx) })
	r.receive(ctx)
	wg.Wait()
	return nil
}

// send publishes queued events in order, pipelining what has piled up.
func (r *Redis) send(ctx context.Context) {
	batch := make([][]byte, 0, maxBatch)
	var backoff time.Duration
	for {
		batch = batch[:0]
		select {
		case <-ctx.Done():
			return
		case b := <-r.out:
			batch = append(batch, b)
		}
	more:
		for len(batch) < maxBatch {
			select {
			case b := <-r.out:
				batch = append(batch, b)
			default:
				break more
			}
		}
		var err error
		if len(batch) == 1 {
			err = r.client.Publish(ctx, r.channel, batch[0]).Err()
		} else {
			pipe := r.client.Pipeline()
			for _, b := range batch {
				pipe.Publish(ctx, r.channel, b)
			}
			_, err = pipe.Exec(ctx)
		}
		if err == nil {
			backoff = 0
			continue
		}
		if ctx.Err() != nil {
			return
		}
		r.publishErrors.Add(uint64(len(batch)))
		backoff = nextBackoff(backoff)
		r.log.Warn("publish events to Redis", "events", len(batch), "err", err, "retryIn", backoff)
		if !sleep(ctx, backoff) {
			return
		}
	}
}

// receive holds one Redis subscription, replacing it when it stays silent,
// until ctx ends.
func (r *Redis) receive(ctx context.Context) {
	first := true
	var backoff time.Duration
	for ctx.Err() == nil {
		ps := r.client.Subscribe(ctx, r.channel)
		stop := context.AfterFunc(ctx, func() { _ = ps.Close() })
		err := r.session(ctx, ps, &first)
		stop()
		_ = ps.Close()
		if ctx.Err() != nil {
			return
		}
		backoff = nextBackoff(backoff)
		r.log.Warn("Redis subscription replaced", "err", err, "retryIn", backoff)
		if !sleep(ctx, backoff) {
			return
		}
	}
}

// session reads from ps until ctx ends or the connection stays silent
// after a ping. go-redis reconnects and subscribes again by itself after a
// read error; each subscription after the first means events may have been
// missed, so every subscriber is marked lagged.
func (r *Redis) session(ctx context.Context, ps *redis.PubSub, first *bool) error {
	pinged := false
	var backoff time.Duration
	for {
		msg, err := ps.ReceiveTimeout(ctx, r.idle)
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
			backoff = nextBackoff(backoff)
			r.log.Warn("receive events from Redis", "err", err, "retryIn", backoff)
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
			if *first {
				*first = false
				r.readyOnce.Do(func() { close(r.ready) })
			} else {
				r.gaps.Add(1)
				clear(r.last)
				r.hub.Lag()
			}
		case *redis.Message:
			r.deliver(m.Payload)
		}
	}
}

// deliver decodes one message from Redis and hands it to the hub.
func (r *Redis) deliver(payload string) {
	r.received.Add(1)
	ev, err := Decode([]byte(payload))
	if err != nil {
		r.invalid.Add(1)
		return
	}
	if ev.Origin == r.origin {
		return // delivered locally by Publish
	}
	if ev.Origin != "" && ev.Seq != 0 {
		last, seen := r.last[ev.Origin]
		switch {
		case seen && ev.Seq <= last:
			r.invalid.Add(1) // a replay; Redis keeps a publisher's order
			return
		case seen && ev.Seq != last+1:
			r.gaps.Add(1)
			r.hub.Lag()
		}
		if !seen && len(r.last) >= maxOrigins {
			clear(r.last)
		}
		r.last[ev.Origin] = ev.Seq
	}
	r.hub.Publish(ev)
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
