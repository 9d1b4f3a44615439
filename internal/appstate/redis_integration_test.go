//go:build integration

package appstate_test

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/internal/appstate"
	"github.com/graphcd/graphcd/internal/testenv/localredis"
)

var redisServer *localredis.Server

func TestMain(m *testing.M) { os.Exit(localredis.RunMain(m, &redisServer)) }

var prefixSeq atomic.Int64

var testSecret = []byte(strings.Repeat("s", 32))

func newClient(tb testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: redisServer.Addr, Password: redisServer.Password})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// newRedisStore gives each test its own key prefix on the shared server.
func newRedisStore(tb testing.TB, client *redis.Client, prefix string, opts appstate.RedisOptions) *appstate.Redis {
	tb.Helper()
	if opts.Secret == nil {
		opts.Secret = testSecret
	}
	s, err := appstate.NewRedis(client, prefix, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func testPrefix() string { return fmt.Sprintf("test%d|", prefixSeq.Add(1)) }

func TestRedisConformance(t *testing.T) {
	runConformance(t, func(t *testing.T) appstate.Store {
		return newRedisStore(t, newClient(t), testPrefix(), appstate.RedisOptions{})
	})
}

func TestRedisRefusesShortSecret(t *testing.T) {
	if _, err := appstate.NewRedis(newClient(t), "", appstate.RedisOptions{Secret: []byte("short")}); err == nil {
		t.Fatal("NewRedis accepted a 5-byte secret")
	}
}

// A state written by the controller's store is read by an API replica's.
func TestRedisSharedBetweenReplicas(t *testing.T) {
	prefix := testPrefix()
	writer := newRedisStore(t, newClient(t), prefix, appstate.RedisOptions{})
	reader := newRedisStore(t, newClient(t), prefix, appstate.RedisOptions{})
	st := sampleState(1)
	if err := writer.Put(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	got, err := reader.Get(t.Context(), st.App)
	if err != nil || got == nil || got.Revision != st.Revision {
		t.Fatalf("reader Get = %+v, %v", got, err)
	}
}

// Values that fail their signature read as absent and are counted: altered
// bytes, a value copied under another app's key, another secret.
func TestRedisRejectsUntrustedValues(t *testing.T) {
	client := newClient(t)
	prefix := testPrefix()
	s := newRedisStore(t, client, prefix, appstate.RedisOptions{})
	a, b := sampleState(1), sampleState(2)
	if err := s.Put(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	keyA, keyB := prefix+a.App.Namespace+"/"+a.App.Name, prefix+b.App.Namespace+"/"+b.App.Name
	raw, err := client.Get(t.Context(), keyA).Bytes()
	if err != nil {
		t.Fatal(err)
	}

	// Copied under b's key: a valid value, but not for b.
	if err := client.Set(t.Context(), keyB, raw, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(t.Context(), b.App); err != nil || got != nil {
		t.Errorf("a value copied from another app's key: Get = %v, %v; want nil", got, err)
	}

	// Another secret: the API replica is misconfigured.
	other := newRedisStore(t, client, prefix, appstate.RedisOptions{Secret: []byte(strings.Repeat("o", 32))})
	if got, err := other.Get(t.Context(), a.App); err != nil || got != nil {
		t.Errorf("read with another secret: Get = %v, %v; want nil", got, err)
	}
	if other.Rejected() != 1 {
		t.Errorf("other.Rejected() = %d, want 1", other.Rejected())
	}

	// One flipped byte.
	raw[len(raw)-1] ^= 0xff
	if err := client.Set(t.Context(), keyA, raw, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetMany(t.Context(), []types.NamespacedName{a.App, b.App})
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != nil || got[1] != nil {
		t.Errorf("GetMany of tampered values = %v; want nils", got)
	}
	if n := s.Rejected(); n != 3 {
		t.Errorf("Rejected() = %d, want 3 (copied, then both in GetMany)", n)
	}
}

// States expire when no one rewrites them, and Delete removes them.
func TestRedisTTL(t *testing.T) {
	client := newClient(t)
	prefix := testPrefix()
	s := newRedisStore(t, client, prefix, appstate.RedisOptions{TTL: 90 * time.Minute})
	st := sampleState(1)
	if err := s.Put(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	ttl, err := client.TTL(t.Context(), prefix+st.App.Namespace+"/"+st.App.Name).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= time.Hour || ttl > 90*time.Minute {
		t.Errorf("TTL of a written state = %v, want about 90m", ttl)
	}
}

// BenchmarkGetMany reads a page of 50 apps of 40 resources each.
func BenchmarkGetMany(b *testing.B) {
	s := newRedisStore(b, newClient(b), testPrefix(), appstate.RedisOptions{})
	var apps []types.NamespacedName
	for i := range 50 {
		st := sampleState(i)
		for j := range 40 {
			m := st.Managed[0]
			m.Name = fmt.Sprintf("r-%d", j)
			m.Live = strings.Repeat(fmt.Sprintf("line %d of the live object\n", j), 40)
			m.Desired = m.Live
			st.Managed = append(st.Managed, m)
		}
		if err := s.Put(b.Context(), st); err != nil {
			b.Fatal(err)
		}
		apps = append(apps, st.App)
	}
	for b.Loop() {
		got, err := s.GetMany(b.Context(), apps)
		if err != nil || got[49] == nil {
			b.Fatalf("GetMany = %v, %v", got, err)
		}
	}
}
