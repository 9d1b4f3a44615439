//go:build integration

package audit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/graphcd/graphcd/internal/testenv/localredis"
)

var redisServer *localredis.Server

func TestMain(m *testing.M) { os.Exit(localredis.RunMain(m, &redisServer)) }

// redisStore returns a Redis store of size on a stream of its own, its
// follower running.
func redisStore(t *testing.T, size int) (*Redis, *redis.Client) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: redisServer.Addr, Password: redisServer.Password})
	t.Cleanup(func() { _ = c.Close() })
	s, err := NewRedis(c, "graphcd:audit:"+t.Name(), size, bytes.Repeat([]byte("s"), MinSecret), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return s, c
}

// Every store keeps its size, lists newest first by cursor, filters, and
// streams new entries: the one suite both stores pass.
func TestStores(t *testing.T) {
	stores := map[string]func(t *testing.T, size int) Store{
		"memory": func(_ *testing.T, size int) Store { return NewMemory(size) },
		"redis":  func(t *testing.T, size int) Store { s, _ := redisStore(t, size); return s },
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			s := newStore(t, 3)
			base := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
			for i := range 5 {
				e := &Entry{Time: base.Add(time.Duration(i) * time.Minute), User: fmt.Sprint("u", i%2), Field: fmt.Sprint("f", i), Outcome: Success}
				if err := s.Append(t.Context(), e); err != nil {
					t.Fatal(err)
				}
				if e.ID == "" {
					t.Fatal("Append set no ID")
				}
			}
			fields := func(p Page) (out []string) {
				for _, e := range p.Entries {
					out = append(out, e.Field)
				}
				return out
			}
			p, err := s.List(t.Context(), Query{First: 2})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(fields(p), []string{"f4", "f3"}); d != "" || !p.More {
				t.Fatalf("first page (-got +want):\n%s more=%v", d, p.More)
			}
			p, err = s.List(t.Context(), Query{First: 2, After: p.Entries[1].ID})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(fields(p), []string{"f2"}); d != "" || p.More {
				t.Errorf("second page, the oldest kept (-got +want):\n%s more=%v", d, p.More)
			}
			p, _ = s.List(t.Context(), Query{First: 10, Filter: Filter{User: "u0"}})
			if d := cmp.Diff(fields(p), []string{"f4", "f2"}); d != "" {
				t.Errorf("user u0 (-got +want):\n%s", d)
			}
			p, _ = s.List(t.Context(), Query{First: 10, Filter: Filter{Since: base.Add(3 * time.Minute)}})
			if d := cmp.Diff(fields(p), []string{"f4", "f3"}); d != "" {
				t.Errorf("since the fourth (-got +want):\n%s", d)
			}
			p, _ = s.List(t.Context(), Query{First: 10, Allow: func(e *Entry) bool { return e.Field != "f3" }})
			if d := cmp.Diff(fields(p), []string{"f4", "f2"}); d != "" {
				t.Errorf("allowed (-got +want):\n%s", d)
			}
			if _, err := s.List(t.Context(), Query{First: 1, After: "x"}); err == nil {
				t.Error("a bad cursor is accepted")
			}
			// New entries stream to subscribers. The Redis follower may
			// not have reached the stream's end yet: append until one
			// arrives.
			sub := s.Subscribe(t.Context())
			appending, stop := context.WithCancel(t.Context())
			defer stop()
			go func() {
				for appending.Err() == nil {
					_ = s.Append(appending, &Entry{Time: time.Now(), Field: "late", Outcome: Failure, ErrorCode: "FORBIDDEN"})
					select {
					case <-appending.Done():
					case <-time.After(50 * time.Millisecond):
					}
				}
			}()
			// The follower may still be handing over entries appended just
			// before the subscription: the late ones come after them.
			for e := range sub {
				if e.Field != "late" {
					continue
				}
				if e.ErrorCode != "FORBIDDEN" || e.ID == "" {
					t.Errorf("streamed %+v", e)
				}
				break
			}
		})
	}
}

// An entry that does not verify (written by someone without the key) is
// never listed.
func TestRedisRejectsForgedEntries(t *testing.T) {
	s, c := redisStore(t, 10)
	if err := s.Append(t.Context(), &Entry{Field: "real", Outcome: Success}); err != nil {
		t.Fatal(err)
	}
	forged := append(bytes.Repeat([]byte{0}, 32), []byte(`{"field":"forged","outcome":"SUCCESS"}`)...)
	if err := c.XAdd(t.Context(), &redis.XAddArgs{Stream: s.key, Values: []any{redisField, forged}}).Err(); err != nil {
		t.Fatal(err)
	}
	p, err := s.List(t.Context(), Query{First: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Entries) != 1 || p.Entries[0].Field != "real" || s.Rejected() == 0 {
		t.Errorf("entries %+v, rejected %d", p.Entries, s.Rejected())
	}
}
