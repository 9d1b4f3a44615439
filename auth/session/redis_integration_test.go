//go:build integration

package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var prefixSeq atomic.Int64

// testPrefix gives each test its own keys and channel on the shared server.
func testPrefix() string { return fmt.Sprintf("graphcd:test-revoked:%d:", prefixSeq.Add(1)) }

func newRedisClient(tb testing.TB) *redis.Client {
	client := redis.NewClient(&redis.Options{Addr: redisServer.Addr, Password: redisServer.Password})
	tb.Cleanup(func() { _ = client.Close() })
	return client
}

// commandCounter counts the commands a client sends.
type commandCounter struct{ n atomic.Int64 }

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.n.Add(1); return next(ctx, cmd) }
}
func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// startReplica runs a RedisRevocations (one API replica) with its own
// client until the test ends and waits until it has synced.
func startReplica(t *testing.T, prefix string) (*RedisRevocations, *commandCounter) {
	t.Helper()
	client := newRedisClient(t)
	counter := &commandCounter{}
	client.AddHook(counter)
	r := NewRedisRevocations(client, prefix)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case <-r.Ready():
	case err := <-done:
		t.Fatalf("Run ended before it synced: %v", err)
	}
	return r, counter
}

func TestRedisRevocations(t *testing.T) {
	revocationsConformance(t, func(t *testing.T) Revocations {
		r, _ := startReplica(t, testPrefix())
		return r
	}, time.Now)
}

// A revocation in one replica is seen by another: by Revoked, from
// memory, and by its subscribers.
func TestRedisRevocationsReplicas(t *testing.T) {
	prefix := testPrefix()
	a, _ := startReplica(t, prefix)
	b, bCommands := startReplica(t, prefix)
	revokedInB := collect(t.Context(), b)

	if err := a.Revoke(t.Context(), "tok-1", time.Now().Add(time.Hour)); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	if got := receive(t, revokedInB); got != "tok-1" {
		t.Errorf("b's subscriber got %q, want tok-1", got)
	}
	before := bCommands.n.Load()
	for _, tc := range []struct {
		id   string
		want bool
	}{{"tok-1", true}, {"tok-2", false}} {
		got, err := b.Revoked(t.Context(), tc.id)
		if err != nil || got != tc.want {
			t.Errorf("b.Revoked(%s) = %v, %v, want %v", tc.id, got, err, tc.want)
		}
	}
	if n := bCommands.n.Load() - before; n != 0 {
		t.Errorf("Revoked sent %d commands to Redis, want 0 while in sync", n)
	}

	// The key expires with the token.
	ttl, err := newRedisClient(t).PTTL(t.Context(), prefix+"id:tok-1").Result()
	if err != nil || ttl <= 0 || ttl > time.Hour {
		t.Errorf("PTTL = %s, %v, want at most an hour", ttl, err)
	}
}

// A replica starting after revocations loads them.
func TestRedisRevocationsLoadOnStart(t *testing.T) {
	prefix := testPrefix()
	a, _ := startReplica(t, prefix)
	for i := range 2500 { // more than one SCAN page
		if err := a.Revoke(t.Context(), fmt.Sprint("tok-", i), time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	b, bCommands := startReplica(t, prefix)
	before := bCommands.n.Load()
	for _, id := range []string{"tok-0", "tok-1234", "tok-2499"} {
		if got, err := b.Revoked(t.Context(), id); err != nil || !got {
			t.Errorf("b.Revoked(%s) = %v, %v, want true", id, got, err)
		}
	}
	if n := bCommands.n.Load() - before; n != 0 {
		t.Errorf("Revoked sent %d commands, want 0", n)
	}
	// Another prefix shares nothing.
	c, _ := startReplica(t, testPrefix())
	if got, _ := c.Revoked(t.Context(), "tok-0"); got {
		t.Error("a list under another prefix sees the revocation")
	}
}

// Before Run has synced, Revoked asks Redis.
func TestRedisRevocationsWithoutRun(t *testing.T) {
	prefix := testPrefix()
	a, _ := startReplica(t, prefix)
	if err := a.Revoke(t.Context(), "tok-1", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	b := NewRedisRevocations(newRedisClient(t), prefix)
	if got, err := b.Revoked(t.Context(), "tok-1"); err != nil || !got {
		t.Errorf("Revoked = %v, %v, want true", got, err)
	}
	if got, err := b.Revoked(t.Context(), "tok-2"); err != nil || got {
		t.Errorf("Revoked = %v, %v, want false", got, err)
	}
	// Redis unreachable: Revoked fails rather than saying "not revoked".
	dead := NewRedisRevocations(redis.NewClient(&redis.Options{Addr: closedAddr(t), MaxRetries: -1}), prefix)
	if got, err := dead.Revoked(t.Context(), "tok-2"); err == nil {
		t.Errorf("Revoked without Redis = %v, nil; want an error", got)
	}
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// A replica whose subscription was cut reloads the list when it is back,
// and its subscribers hear of what was revoked meanwhile.
func TestRedisRevocationsReconnect(t *testing.T) {
	prefix := testPrefix()
	a, _ := startReplica(t, prefix)
	b, _ := startReplica(t, prefix)
	revokedInB := collect(t.Context(), b)
	admin := newRedisClient(t)
	// Kill b's subscription and, while it is gone, revoke behind its back
	// (as a replica would whose message b missed).
	if err := admin.ClientKillByFilter(t.Context(), "TYPE", "pubsub").Err(); err != nil {
		t.Fatalf("CLIENT KILL: %v", err)
	}
	if err := admin.Set(t.Context(), prefix+"id:missed", time.Now().Add(time.Hour).UnixMilli(), time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, revokedInB); got != "missed" {
		t.Errorf("b's subscriber got %q, want missed", got)
	}
	if got, err := b.Revoked(t.Context(), "missed"); err != nil || !got {
		t.Errorf("b.Revoked(missed) = %v, %v, want true", got, err)
	}
	// And the channel works again.
	if err := a.Revoke(t.Context(), "after", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, revokedInB); got != "after" {
		t.Errorf("b's subscriber got %q, want after", got)
	}
}

// An Issuer on Redis revocations: logout in one replica rejects the token
// in another, and ends its subscriptions there.
func TestRedisIssuerAcrossReplicas(t *testing.T) {
	prefix := testPrefix()
	keys := StaticKeys{Current: GenerateKey()}
	a, _ := startReplica(t, prefix)
	b, _ := startReplica(t, prefix)
	issuerA := NewIssuer(keys, Options{Revocations: a})
	issuerB := NewIssuer(keys, Options{Revocations: b})
	tok, c, err := issuerA.Issue(t.Context(), Template{Subject: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	claimsB, err := issuerB.Verify(t.Context(), tok)
	if err != nil {
		t.Fatalf("Verify in b: %v", err)
	}
	sub, cancel := issuerB.Watch(t.Context(), claimsB)
	defer cancel()
	if err := issuerA.Revoke(t.Context(), c); err != nil {
		t.Fatalf("Revoke in a: %v", err)
	}
	<-sub.Done()
	if err := context.Cause(sub); !errors.Is(err, ErrRevoked) {
		t.Errorf("subscription in b ended with %v, want ErrRevoked", err)
	}
	eventually(t, "b rejects the token", func() bool {
		_, err := issuerB.Verify(t.Context(), tok)
		return errors.Is(err, ErrRevoked)
	})
}
