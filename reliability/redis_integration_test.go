//go:build integration

package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/client"
)

// redisDownFor is how long Redis stays down.
func redisDownFor() time.Duration {
	if full() {
		return 2 * time.Minute
	}
	return 15 * time.Second
}

// Redis killed (SIGKILL), down a while, and started again empty (the
// battery's Redis keeps nothing on disk); then a Redis that loses its
// data while it runs (FLUSHALL). Throughout, both API replicas answer the
// queries of a signed-in user, or refuse them as documented while they
// cannot check sessions (the revocation list lives in Redis: they fail
// closed) and never fail otherwise; after, the subscribers get events
// again, a session revoked before the fault is refused by both
// replicas alike and one still valid is accepted by both. Recovery: from
// Redis back until every subscriber got an event of a push made after it
// and the background apps synced that push.
func redisFaults(t *testing.T, in *installation, l *load) []outcome {
	ctx := t.Context()
	valid := l.session(t, in.ServerURLs[0])
	revoked := l.session(t, in.ServerURLs[1])
	if err := client.New(in.ServerURLs[1], revoked).Logout(ctx); err != nil {
		t.Fatal(err)
	}
	in.checkSessions(t, valid, revoked, "before the fault")

	var out []outcome
	for _, fault := range []struct {
		name   string
		inject func() (back time.Time)
	}{
		{fmt.Sprintf("Redis killed (`kill -9`), down %v, restarted empty", redisDownFor()), func() time.Time {
			in.Redis.Kill()
			time.Sleep(redisDownFor())
			if err := in.Redis.Restart(ctx); err != nil {
				t.Fatalf("restart redis: %v", err)
			}
			return time.Now()
		}},
		{"Redis loses its data (FLUSHALL)", func() time.Time {
			rdb := redis.NewClient(&redis.Options{Addr: in.Redis.Addr, Password: in.Redis.Password})
			defer func() { _ = rdb.Close() }()
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				t.Fatalf("FLUSHALL: %v", err)
			}
			return time.Now()
		}},
	} {
		queries := in.queryWhile(t, valid)
		loadBefore := l.counts()
		back := fault.inject()
		q := queries()
		if q.failed > 0 {
			t.Errorf("%s: %d of %d queries to the API replicas failed during the fault other than by the documented refusal; last: %s",
				fault.name, q.failed, q.answered+q.refused+q.failed, q.last)
		}
		if _, err := in.push(ctx); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 5*time.Minute, "every subscriber to get an event", func() (bool, string) {
			n := l.subscribersSince(back)
			return n == l.size.subscribers, fmt.Sprintf("%d of %d subscribers got an event since Redis came back", n, l.size.subscribers)
		})
		settled := l.settle(t)
		in.checkSessions(t, valid, revoked, "after: "+fault.name)
		out = append(out, outcome{
			fault:    fault.name,
			recovery: settled.Sub(back),
			note: fmt.Sprintf("queries during the fault: %d answered, %d refused (401 %q), %d failed otherwise; %d lagged markers; after: revoked session refused and valid one accepted by both replicas",
				q.answered, q.refused, auth.ErrUnavailable.Error(), q.failed, l.counts().lagged-loadBefore.lagged),
		})
	}
	return out
}

// queryCounts is how the queries of queryWhile ended.
type queryCounts struct {
	answered int64
	// refused counts the documented refusal of a replica that cannot
	// check sessions (revocations live in Redis): 401, "try again".
	refused int64
	failed  int64  // any other failure
	last    string // the last other failure
}

// queryWhile asks both API replicas for the applications, as token,
// every 200 ms until the returned function is called, which returns how
// the queries ended.
func (in *installation) queryWhile(t *testing.T, token string) func() queryCounts {
	t.Helper()
	var ok, refused, bad atomic.Int64
	var lastErr atomic.Value
	lastErr.Store("")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, base := range in.ServerURLs {
		wg.Go(func() {
			for ctx.Err() == nil {
				err := query(ctx, base, token)
				switch {
				case err == nil:
					ok.Add(1)
				case ctx.Err() != nil:
					return
				case strings.Contains(err.Error(), "HTTP 401: "+auth.ErrUnavailable.Error()):
					refused.Add(1)
				default:
					bad.Add(1)
					lastErr.Store(base + ": " + err.Error())
				}
				time.Sleep(200 * time.Millisecond)
			}
		})
	}
	return func() queryCounts {
		cancel()
		wg.Wait()
		return queryCounts{ok.Load(), refused.Load(), bad.Load(), lastErr.Load().(string)}
	}
}

// query asks base for the first applications as token and returns an
// error unless it answers them.
func query(ctx context.Context, base, token string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	body := []byte(`{"query":"query FaultQuery { applications(first: 5) { totalCount } }"}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var answer struct {
		Data *struct {
			Applications struct{ TotalCount int }
		}
		Errors []struct {
			Message    string
			Extensions struct{ Code string }
		}
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, raw)
	}
	if len(answer.Errors) > 0 {
		return fmt.Errorf("HTTP %d: %s (%s)", resp.StatusCode, answer.Errors[0].Message, answer.Errors[0].Extensions.Code)
	}
	if answer.Data == nil || answer.Data.Applications.TotalCount == 0 {
		return fmt.Errorf("HTTP %d: no applications in %.200s", resp.StatusCode, raw)
	}
	return nil
}

// checkSessions fails the test unless both API replicas accept valid and
// refuse revoked.
func (in *installation) checkSessions(t *testing.T, valid, revoked, when string) {
	t.Helper()
	for _, base := range in.ServerURLs {
		if err := query(t.Context(), base, valid); err != nil {
			t.Errorf("%s: %s refused a valid session: %v", when, base, err)
		}
		if err := query(t.Context(), base, revoked); err == nil {
			t.Errorf("%s: %s accepted a session revoked before the fault", when, base)
		}
	}
}
