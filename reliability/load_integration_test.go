//go:build integration

package reliability

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/client"
)

// subscribersEnv is GRAPHCD_FAULTS_SUBSCRIBERS, read before TestMain
// clears GRAPHCD_* from the environment.
var subscribersEnv = os.Getenv("GRAPHCD_FAULTS_SUBSCRIBERS")

// loadSize is how much background load runs while the faults do.
type loadSize struct {
	apps        int           // auto-synced apps of the background directory
	subscribers int           // applicationEvents subscribers, spread over the API replicas
	pushEvery   time.Duration // a push to the background apps' directory
	loginEvery  time.Duration // a login, to each API replica in turn
}

// sizeOfLoad is a small load in `make test` and the with
// GRAPHCD_FAULTS=full; GRAPHCD_FAULTS_SUBSCRIBERS overrides the
// subscribers.
func sizeOfLoad() loadSize {
	s := loadSize{apps: 4, subscribers: 20, pushEvery: 10 * time.Second, loginEvery: time.Second}
	if full() {
		s.apps, s.subscribers = 20, 500
	}
	if n, err := strconv.Atoi(subscribersEnv); err == nil && n >= 0 {
		s.subscribers = n
	}
	return s
}

// load is the background load: auto-synced apps, pushes, logins and
// subscribers, with counts of what failed.
type load struct {
	in    *installation
	size  loadSize
	apps  []string
	dests map[string]string // app: its destination namespace

	pushing atomic.Bool // pushes run only while set
	stop    context.CancelFunc
	wg      sync.WaitGroup

	pushes, pushErrors   atomic.Int64
	logins, loginErrors  atomic.Int64
	events, lagged       atomic.Int64 // subscription events received, lagged markers among them
	subErrors, connected atomic.Int64 // subscriptions that ended in an error; subscriptions open now
	lastLoginErr         atomic.Value // string
	lastSubErr           atomic.Value // string
	// lastEvent is, per subscriber, when it last got an event (UnixNano).
	lastEvent []atomic.Int64
}

// startLoad creates the background apps, waits until they are synced,
// then runs pushes, logins and subscribers until the test ends.
func startLoad(t *testing.T, in *installation) *load {
	t.Helper()
	l := &load{in: in, size: sizeOfLoad(), dests: map[string]string{}}
	l.lastEvent = make([]atomic.Int64, l.size.subscribers)
	for i := range l.size.apps {
		name := fmt.Sprintf("background-%d", i)
		l.dests[name] = in.newApp(t, name, backgroundApp, func(a *v1alpha1.Application) {
			a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true}}
		})
		l.apps = append(l.apps, name)
	}
	head, err := in.git.head(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Minute, "the background apps to sync", func() (bool, string) { return l.converged(head) })

	ctx, cancel := context.WithCancel(context.Background())
	l.stop = cancel
	t.Cleanup(func() { cancel(); l.wg.Wait() })
	l.pushing.Store(true)
	l.every(ctx, l.size.pushEvery, func(ctx context.Context) {
		if !l.pushing.Load() {
			return
		}
		if _, err := in.push(ctx); err != nil {
			l.pushErrors.Add(1)
			return
		}
		l.pushes.Add(1)
	})
	n := 0
	l.every(ctx, l.size.loginEvery, func(ctx context.Context) {
		n++
		if _, err := l.login(ctx, in.ServerURLs[n%len(in.ServerURLs)]); err != nil {
			l.loginErrors.Add(1)
			l.lastLoginErr.Store(err.Error())
		}
		l.logins.Add(1)
	})
	// The subscribers share one session, as tabs of one browser do: a
	// login each would be a flood of bcrypt checks.
	token := l.session(t, in.ServerURLs[0])
	for i := range l.size.subscribers {
		l.wg.Go(func() { l.subscribe(ctx, i, in.ServerURLs[i%len(in.ServerURLs)], token) })
	}
	waitFor(t, 2*time.Minute, "the subscribers to connect", func() (bool, string) {
		c := l.connected.Load()
		return c == int64(l.size.subscribers), fmt.Sprintf("%d of %d connected", c, l.size.subscribers)
	})
	return l
}

// every runs fn every period until ctx ends.
func (l *load) every(ctx context.Context, period time.Duration, fn func(context.Context)) {
	l.wg.Go(func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				fn(ctx)
			}
		}
	})
}

// login logs the admin in at server and returns the session's token.
func (l *load) login(ctx context.Context, server string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s, err := client.New(server, "").Login(ctx, "admin", l.in.admin)
	return s.Token, err
}

// session logs the admin in at server for the test's own use, trying
// again while the server answers that another login of the account is in
// progress (the load's logins run meanwhile; the server takes one at a
// time per account).
func (l *load) session(t *testing.T, server string) string {
	t.Helper()
	for range 50 {
		token, err := l.login(t.Context(), server)
		if err == nil {
			return token
		}
		if !strings.Contains(err.Error(), "HTTP 429") {
			t.Fatalf("log in at %s: %v", server, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("log in at %s: refused 50 times as in progress", server)
	return ""
}

// applicationEvent is what the subscribers ask of each event.
type applicationEvent struct {
	ApplicationEvents struct {
		Lagged bool
		Type   *string
		Name   *string
	}
}

// subscribe keeps one applicationEvents subscription open at server,
// subscribing again (after a second) when it ends, as a console does.
func (l *load) subscribe(ctx context.Context, i int, server, token string) {
	req := &graphql.Request{OpName: "FaultEvents", Query: "subscription FaultEvents { applicationEvents { lagged type name } }"}
	for ctx.Err() == nil {
		err := func() error {
			sub, err := client.Subscribe[applicationEvent](ctx, client.New(server, token), req)
			if err != nil {
				return err
			}
			defer sub.Close()
			l.connected.Add(1)
			defer l.connected.Add(-1)
			for {
				ev, err := sub.Next()
				if err != nil {
					return err
				}
				l.events.Add(1)
				l.lastEvent[i].Store(time.Now().UnixNano())
				if ev.ApplicationEvents.Lagged {
					l.lagged.Add(1)
				}
			}
		}()
		if ctx.Err() != nil {
			return
		}
		l.subErrors.Add(1)
		l.lastSubErr.Store(err.Error())
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// subscribersSince counts the subscribers that got an event after t.
func (l *load) subscribersSince(t time.Time) int {
	n := 0
	for i := range l.lastEvent {
		if l.lastEvent[i].Load() > t.UnixNano() {
			n++
		}
	}
	return n
}

// converged reports whether every background app is Synced and Healthy
// at revision head with no operation running.
func (l *load) converged(head string) (bool, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, name := range l.apps {
		a, err := l.in.app(ctx, name)
		if err != nil {
			return false, err.Error()
		}
		s := a.Status
		if s.Sync.Status != v1alpha1.SyncStatusCodeSynced || s.Sync.Revision != head || s.Health.Status != v1alpha1.HealthStatusHealthy ||
			(s.OperationState != nil && s.OperationState.FinishedAt == nil) || a.Operation != nil {
			return false, fmt.Sprintf("%s: sync %s at %.7s (want %.7s), health %s", name, s.Sync.Status, s.Sync.Revision, head, s.Health.Status)
		}
	}
	return true, ""
}

// counts is a reading of the load's counters.
type counts struct {
	pushes, pushErrors, logins, loginErrors, events, lagged, subErrors int64
}

func (l *load) counts() counts {
	return counts{l.pushes.Load(), l.pushErrors.Load(), l.logins.Load(), l.loginErrors.Load(),
		l.events.Load(), l.lagged.Load(), l.subErrors.Load()}
}

// since is what happened between an earlier reading and now, in words.
func (l *load) since(before counts) string {
	now := l.counts()
	s := fmt.Sprintf("pushes %d (%d failed), logins %d (%d failed), subscription events %d (%d lagged), subscriptions ended %d, open %d/%d",
		now.pushes-before.pushes, now.pushErrors-before.pushErrors, now.logins-before.logins, now.loginErrors-before.loginErrors,
		now.events-before.events, now.lagged-before.lagged, now.subErrors-before.subErrors, l.connected.Load(), l.size.subscribers)
	if now.loginErrors > before.loginErrors {
		s += fmt.Sprintf("; last login error: %v", l.lastLoginErr.Load())
	}
	if now.subErrors > before.subErrors {
		s += fmt.Sprintf("; last subscription error: %v", l.lastSubErr.Load())
	}
	return s
}
