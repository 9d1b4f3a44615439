//go:build integration

package localredis_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/testenv/localredis"
)

// A value written to the real server reads back; the password is enforced;
// Stop leaves no process behind.
func TestRoundTrip(t *testing.T) {
	ctx := t.Context()
	srv, err := localredis.Start(ctx)
	if err != nil {
		t.Fatalf("start redis: %v", err)
	}
	pid := srv.PID()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = srv.Stop()
		}
	})

	client := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: srv.Password})
	defer func() { _ = client.Close() }()
	if err := client.Set(ctx, "graphcd:test", "hello", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	got, err := client.Get(ctx, "graphcd:test").Result()
	if err != nil || got != "hello" {
		t.Fatalf("GET = %q, %v; want hello", got, err)
	}

	anon := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer func() { _ = anon.Close() }()
	if err := anon.Ping(ctx).Err(); err == nil {
		t.Error("PING without the password succeeded; want NOAUTH")
	}

	stopped = true
	if err := srv.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if localcluster.Alive(pid) {
		t.Errorf("redis-server pid %d alive after Stop", pid)
	}
}
