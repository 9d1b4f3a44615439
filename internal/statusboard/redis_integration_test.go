//go:build integration

package statusboard

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/graphcd/graphcd/internal/testenv/localredis"
)

var redisServer *localredis.Server

func TestMain(m *testing.M) { os.Exit(localredis.RunMain(m, &redisServer)) }

func newRedisBoard(t *testing.T, prefix string) (*Redis, *redis.Client) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: redisServer.Addr, Password: redisServer.Password})
	t.Cleanup(func() { _ = c.Close() })
	b, err := NewRedis(c, RedisOptions{Prefix: prefix, Secret: []byte(strings.Repeat("s", 32))})
	if err != nil {
		t.Fatal(err)
	}
	return b, c
}

// The Redis board passes the board tests on a real Redis.
func TestRedis(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b, _ := newRedisBoard(t, "test|board|")
	b.now = func() time.Time { return now }
	boardTests(t, b, &now)
}

// Entries altered in Redis, or signed with another secret, are not read,
// and are removed; Ping reads the server's version and memory.
func TestRedisRejectsAlteredEntries(t *testing.T) {
	b, c := newRedisBoard(t, "test|altered|")
	ctx := t.Context()
	if err := b.PutClusters(ctx, 0, []Cluster{{Server: "https://a", Status: Successful}}); err != nil {
		t.Fatal(err)
	}
	raw, err := c.HGet(ctx, b.clusters, "0").Result()
	if err != nil {
		t.Fatal(err)
	}
	altered := strings.Replace(raw, "Successful", "Failed\"    ", 1)
	if err := c.HSet(ctx, b.clusters, "0", altered, "1", raw).Err(); err != nil { // shard 1 holds a copy of shard 0's entry
		t.Fatal(err)
	}
	got, err := b.Clusters(ctx)
	if err != nil || len(got) != 0 {
		t.Errorf("clusters from altered and copied entries: %+v %v, want none", got, err)
	}
	if n, err := c.HLen(ctx, b.clusters).Result(); err != nil || n != 0 {
		t.Errorf("fields left: %d %v, want the rejected ones removed", n, err)
	}
	if ttl, err := c.TTL(ctx, b.components).Result(); err != nil || ttl > 0 {
		t.Errorf("components key TTL %v %v before any beat", ttl, err)
	}
	if err := b.Beat(ctx, Component{Kind: KindAPI, ID: "a"}); err != nil {
		t.Fatal(err)
	}
	if ttl, err := c.TTL(ctx, b.components).Result(); err != nil || ttl <= 0 || ttl > 2*StaleAfter {
		t.Errorf("components key TTL %v %v, want it to expire within %v", ttl, err, 2*StaleAfter)
	}
	s, err := Ping(ctx, c)
	if err != nil || s.Version == "" || s.UsedMemory <= 0 {
		t.Errorf("Ping: %+v %v", s, err)
	}
}
