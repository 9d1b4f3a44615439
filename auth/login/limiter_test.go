package login

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// clock is a fake clock tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func known(names ...string) func(string) bool {
	return func(n string) bool {
		for _, k := range names {
			if n == k {
				return true
			}
		}
		return false
	}
}

// try runs one attempt that ends with success, and returns Begin's error.
func try(t *testing.T, l *Limiter, user, client string, success bool) error {
	t.Helper()
	a, err := l.Begin(t.Context(), user, client)
	if err != nil {
		return err
	}
	a.Done(success)
	return nil
}

func retryAfter(t *testing.T, err error) time.Duration {
	t.Helper()
	var b *BlockedError
	if !errors.As(err, &b) || !errors.Is(err, ErrTooManyFailures) {
		t.Fatalf("err = %v, want a *BlockedError for ErrTooManyFailures", err)
	}
	return b.RetryAfter
}

func TestPairWindow(t *testing.T) {
	clk := newClock()
	l := NewLimiter(Options{Known: known("admin"), Now: clk.Now})
	// Five failures, ten seconds apart, from one client.
	for i := range 5 {
		if err := try(t, l, "admin", "client", false); err != nil {
			t.Fatalf("failure %d: Begin = %v", i+1, err)
		}
		clk.Add(10 * time.Second)
	}
	// Now 50s after the first failure: it leaves the window in 250s.
	err := try(t, l, "admin", "client", true)
	if got := retryAfter(t, err); got != 250*time.Second {
		t.Errorf("RetryAfter = %v, want 250s", got)
	}
	clk.Add(249 * time.Second)
	if err := try(t, l, "admin", "client", true); !errors.Is(err, ErrTooManyFailures) {
		t.Errorf("1s before the first failure expires: %v, want ErrTooManyFailures", err)
	}
	clk.Add(time.Second)
	if err := try(t, l, "admin", "client", false); err != nil {
		t.Errorf("once the first failure expired: %v, want an attempt", err)
	}
	// That attempt failed: five in the window again, the oldest now the
	// second, 10s later than the first.
	if got := retryAfter(t, try(t, l, "admin", "client", true)); got != 10*time.Second {
		t.Errorf("RetryAfter = %v, want 10s", got)
	}
	// The same client may still try another username, and another client
	// this one.
	if err := try(t, l, "alice", "client", false); err != nil {
		t.Errorf("alice: %v", err)
	}
	if err := try(t, l, "admin", "elsewhere", true); err != nil {
		t.Errorf("admin from elsewhere: %v", err)
	}
}

// Issue 19: five wrong guesses for admin from one client locked admin out
// for everyone. Now the guessing client is blocked and the real user's
// client is not, however many failures the attacker piles up.
func TestAttackerCannotLockOutUser(t *testing.T) {
	clk := newClock()
	l := NewLimiter(Options{Known: known("admin"), Now: clk.Now})
	for i := range 5 {
		if err := try(t, l, "admin", "attacker", false); err != nil {
			t.Fatalf("failure %d: %v", i+1, err)
		}
	}
	for range 100 {
		if err := try(t, l, "admin", "attacker", false); !errors.Is(err, ErrTooManyFailures) {
			t.Fatalf("attacker after 5 failures: %v, want ErrTooManyFailures", err)
		}
	}
	if err := try(t, l, "admin", "user", true); err != nil {
		t.Errorf("the real user from another client: %v", err)
	}
	if err := try(t, l, "admin", "attacker", true); !errors.Is(err, ErrTooManyFailures) {
		t.Errorf("the user's success unblocked the attacker: %v", err)
	}
}

func TestClientLimit(t *testing.T) {
	clk := newClock()
	l := NewLimiter(Options{MaxClientFailures: 3, Now: clk.Now})
	for i := range 3 {
		if err := try(t, l, fmt.Sprint("user", i), "10.0.0.1", false); err != nil {
			t.Fatalf("failure %d: %v", i+1, err)
		}
	}
	if got := retryAfter(t, try(t, l, "fresh", "10.0.0.1", true)); got != 300*time.Second {
		t.Errorf("RetryAfter = %v, want 300s", got)
	}
	if err := try(t, l, "fresh", "10.0.0.2", true); err != nil {
		t.Errorf("another client: %v", err)
	}
	clk.Add(300 * time.Second)
	if err := try(t, l, "fresh", "10.0.0.1", true); err != nil {
		t.Errorf("after the window: %v", err)
	}
	if got := NewLimiter(Options{}).o.MaxClientFailures; got != 20 {
		t.Errorf("default MaxClientFailures = %d, want 20", got)
	}
}

// Past the username's budget over all clients, a client that failed for
// it is blocked even under its own limit, and a client that did not may
// still try: a distributed guesser is slowed, the user is not locked out.
func TestAccountBudget(t *testing.T) {
	clk := newClock()
	l := NewLimiter(Options{Known: known("admin"), MaxAccountFailures: 10, Now: clk.Now})
	for i := range 10 {
		if err := try(t, l, "admin", fmt.Sprint("bot", i), false); err != nil {
			t.Fatalf("failure %d: %v", i+1, err)
		}
	}
	if got := retryAfter(t, try(t, l, "admin", "bot3", false)); got != 300*time.Second {
		t.Errorf("a bot past the budget: RetryAfter = %v, want 300s", got)
	}
	if err := try(t, l, "alice", "bot3", false); err != nil {
		t.Errorf("another username from that bot: %v", err)
	}
	if err := try(t, l, "admin", "user", true); err != nil {
		t.Errorf("a client without failures, past the budget: %v", err)
	}
	clk.Add(300 * time.Second)
	if err := try(t, l, "admin", "bot3", false); err != nil {
		t.Errorf("after the window: %v", err)
	}
}

// A success clears the username's failures but not the client's.
// A success clears the pair's failures but not the client's.
func TestSuccess(t *testing.T) {
	clk := newClock()
	l := NewLimiter(Options{Known: known("admin"), MaxClientFailures: 6, Now: clk.Now})
	for range 4 {
		if err := try(t, l, "admin", "c", false); err != nil {
			t.Fatal(err)
		}
	}
	if err := try(t, l, "admin", "c", true); err != nil {
		t.Fatal(err)
	}
	// The pair starts again; the client has 4 failures of its 6.
	for range 2 {
		if err := try(t, l, "admin", "c", false); err != nil {
			t.Fatal(err)
		}
	}
	if err := try(t, l, "alice", "c", true); !errors.Is(err, ErrTooManyFailures) {
		t.Errorf("client after 6 failures around a success: %v, want ErrTooManyFailures", err)
	}
}

// A real username and a made-up one get the same answers.
// A real username and a made-up one get the same answers.
func TestUnknownUserAlike(t *testing.T) {
	run := func(user string) []string {
		clk := newClock()
		l := NewLimiter(Options{Known: known("admin"), MaxAccountFailures: 7, Now: clk.Now})
		var out []string
		for range 8 {
			out = append(out, fmt.Sprint(try(t, l, user, "c", false)))
			clk.Add(7 * time.Second)
		}
		for i := range 10 {
			out = append(out, fmt.Sprint(try(t, l, user, fmt.Sprint("d", i%2), false)))
		}
		return out
	}
	admin, ghost := run("admin"), run("ghost")
	if fmt.Sprint(admin) != fmt.Sprint(ghost) {
		t.Errorf("answers differ:\nadmin %q\nghost %q", admin, ghost)
	}
	if admin[5] == "<nil>" {
		t.Errorf("the 6th attempt passed: %q", admin)
	}
}

// 1,000 attempts for random usernames from random clients cannot evict
// admin's counter, and memory stays bounded.
func TestFlood(t *testing.T) {
	clk := newClock()
	const maxEntries = 100
	l := NewLimiter(Options{Known: known("admin"), MaxEntries: maxEntries, Now: clk.Now})
	for range 4 {
		if err := try(t, l, "admin", "attacker", false); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 1000 {
		user := fmt.Sprintf("u%016x", rng.Uint64())
		client := fmt.Sprintf("2001:db8::%x", rng.Uint32())
		if err := try(t, l, user, client, false); err != nil {
			t.Fatalf("flood attempt %d: %v", i, err)
		}
		if s := l.Stats(); s.Users > maxEntries || s.Clients > maxEntries || s.Pairs > 2*maxEntries {
			t.Fatalf("after %d attempts: %+v, bound %d", i+1, s, maxEntries)
		}
	}
	if s := l.Stats(); s.KnownUsers != 1 || s.Users != maxEntries || s.InFlight != 0 {
		t.Errorf("stats after the flood = %+v", s)
	}
	if err := try(t, l, "admin", "attacker", false); err != nil {
		t.Fatalf("the attacker's 5th failure: %v", err)
	}
	if err := try(t, l, "admin", "attacker", true); !errors.Is(err, ErrTooManyFailures) {
		t.Errorf("attacker after 5 failures around a flood: %v, want ErrTooManyFailures", err)
	}
}

// 50 parallel wrong passwords from one client: exactly MaxFailures reach
// the password check, however they interleave.
func TestParallelFailures(t *testing.T) {
	for run := range 20 {
		l := NewLimiter(Options{Known: known("admin"), MaxConcurrent: 100, MaxConcurrentPerClient: 100})
		var checked atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 50 {
			wg.Go(func() {
				<-start
				a, err := l.Begin(t.Context(), "admin", "c")
				if err != nil {
					if !errors.Is(err, ErrTooManyFailures) {
						t.Errorf("Begin = %v", err)
					}
					return
				}
				checked.Add(1) // the password check
				a.Done(false)
			})
		}
		close(start)
		wg.Wait()
		if got := checked.Load(); got != 5 {
			t.Fatalf("run %d: %d attempts reached the password check, want 5", run, got)
		}
	}
}

func TestConcurrencyCap(t *testing.T) {
	l := NewLimiter(Options{MaxConcurrent: 2})
	a1, err1 := l.Begin(t.Context(), "u1", "c1")
	a2, err2 := l.Begin(t.Context(), "u2", "c2")
	if err1 != nil || err2 != nil {
		t.Fatalf("Begin under the cap: %v, %v", err1, err2)
	}
	for range 3 {
		if _, err := l.Begin(t.Context(), "u3", "c3"); !errors.Is(err, ErrBusy) {
			t.Fatalf("Begin at the cap = %v, want ErrBusy", err)
		}
	}
	a1.Done(true)
	a1.Done(false) // a second Done does nothing
	a3, err := l.Begin(t.Context(), "u3", "c3")
	if err != nil {
		t.Fatalf("Begin after a Done: %v", err)
	}
	a2.Done(false)
	a3.Done(false)
	if s := l.Stats(); s.InFlight != 0 {
		t.Errorf("InFlight = %d after every Done", s.InFlight)
	}
	// Busy answers counted nothing against u3: 3 more failures and one
	// success pass (5 in all).
	for range 3 {
		if err := try(t, l, "u3", "c4", false); err != nil {
			t.Fatal(err)
		}
	}
	if err := try(t, l, "u3", "c5", false); err != nil {
		t.Errorf("u3's 5th attempt: %v", err)
	}
}

// Done called twice counts once.
func TestDoneOnce(t *testing.T) {
	l := NewLimiter(Options{MaxFailures: 2})
	a, err := l.Begin(t.Context(), "u", "c")
	if err != nil {
		t.Fatal(err)
	}
	a.Done(false)
	a.Done(false)
	if err := try(t, l, "u", "c", false); err != nil {
		t.Errorf("second attempt after one failure counted twice? %v", err)
	}
	if err := try(t, l, "u", "c", false); !errors.Is(err, ErrTooManyFailures) {
		t.Errorf("third attempt: %v, want ErrTooManyFailures", err)
	}
}

// Counters with nothing left to remember are dropped.
func TestIdleCountersDropped(t *testing.T) {
	clk := newClock()
	l := NewLimiter(Options{Known: known("admin"), Now: clk.Now})
	if err := try(t, l, "admin", "c", true); err != nil {
		t.Fatal(err)
	}
	if s := l.Stats(); s != (Stats{}) {
		t.Errorf("after a first-try success: %+v, want nothing held", s)
	}
	if err := try(t, l, "admin", "c", false); err != nil {
		t.Fatal(err)
	}
	clk.Add(301 * time.Second)
	if err := try(t, l, "admin", "c", true); err != nil {
		t.Fatal(err)
	}
	if s := l.Stats(); s != (Stats{}) {
		t.Errorf("after the failure expired and a success: %+v, want nothing held", s)
	}
}

// BenchmarkBeginDone measures an attempt's bookkeeping: a real user
// signing in, and a flood of made-up users from new clients that keeps the
// bounded maps full and evicting.
func BenchmarkBeginDone(b *testing.B) {
	for _, bc := range []struct {
		name    string
		user    func(i int) string
		success bool
	}{
		{"known-success", func(int) string { return "admin" }, true},
		{"flood-failure", func(i int) string { return fmt.Sprint("u", i) }, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l := NewLimiter(Options{Known: known("admin"), MaxConcurrent: 1 << 20, MaxConcurrentPerClient: 1 << 20})
			var n atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := int(n.Add(1))
					a, err := l.Begin(b.Context(), bc.user(i), fmt.Sprint("c", i))
					if err != nil {
						b.Fatal(err)
					}
					a.Done(bc.success)
				}
			})
		})
	}
}

// Issue 19: a flood of concurrent logins made a correct login from
// elsewhere fail with ErrBusy. One client now holds at most
// MaxConcurrentPerClient attempts, so the other slots stay free for others.
func TestClientConcurrencyCap(t *testing.T) {
	l := NewLimiter(Options{Known: known("admin")})
	held, err := l.Begin(t.Context(), "admin", "attacker")
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if _, err := l.Begin(t.Context(), "admin", "attacker"); !errors.Is(err, ErrBusy) {
			t.Fatalf("the attacker's second attempt in progress: %v, want ErrBusy", err)
		}
	}
	var others []*Attempt
	for i := range l.o.MaxConcurrent - 1 {
		a, err := l.Begin(t.Context(), "admin", fmt.Sprint("user", i))
		if err != nil {
			t.Fatalf("client %d while the attacker floods: %v", i, err)
		}
		others = append(others, a)
	}
	if _, err := l.Begin(t.Context(), "admin", "one-too-many"); !errors.Is(err, ErrBusy) {
		t.Errorf("past MaxConcurrent: %v, want ErrBusy", err)
	}
	held.Done(false)
	for _, a := range others {
		a.Done(true)
	}
	if got := l.o.MaxConcurrent; got < 4 || got <= l.o.MaxConcurrentPerClient {
		t.Errorf("default MaxConcurrent %d leaves no room beside one client's %d", got, l.o.MaxConcurrentPerClient)
	}
}
