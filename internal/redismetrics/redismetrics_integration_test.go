//go:build integration

package redismetrics

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/graphcd/graphcd/internal/testenv/localredis"
)

// Against a real redis-server: a command, a missing key and a pipeline
// count as succeeded requests, a refused command as a failed one, the
// connection handshakes not at all, and each is timed.
func TestInstrumentCountsRequests(t *testing.T) {
	ctx := t.Context()
	srv, err := localredis.Start(ctx)
	if err != nil {
		t.Fatalf("start redis: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	const initiator = "test-instrument"
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: srv.Password})
	defer func() { _ = client.Close() }()
	Instrument(client, initiator)
	// Connecting sends HELLO, AUTH and CLIENT SETINFO through the hooks
	// too (this server refuses the last), not counted: a fresh server
	// never sees a failed request.
	if err := client.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING: %v", err)
	}
	if got := testutil.ToFloat64(requests.WithLabelValues(initiator, "true")); got != 0 {
		t.Errorf("failed requests after connecting = %v, want 0", got)
	}
	ok0 := testutil.ToFloat64(requests.WithLabelValues(initiator, "false"))
	failed0 := testutil.ToFloat64(requests.WithLabelValues(initiator, "true"))

	if err := client.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	if err := client.Get(ctx, "missing").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET missing: %v, want redis.Nil", err)
	}
	if _, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, "k")
		p.Incr(ctx, "n")
		return nil
	}); err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	if err := client.Incr(ctx, "k").Err(); err == nil { // "v" is not an integer
		t.Fatal("INCR of a string succeeded")
	}

	if got := testutil.ToFloat64(requests.WithLabelValues(initiator, "false")) - ok0; got != 3 {
		t.Errorf("succeeded requests = %v, want 3", got)
	}
	if got := testutil.ToFloat64(requests.WithLabelValues(initiator, "true")) - failed0; got != 1 {
		t.Errorf("failed requests = %v, want 1", got)
	}
	if got := testutil.CollectAndCount(seconds, "graphcd_redis_request_duration"); got < 1 {
		t.Errorf("no duration series")
	}
}
