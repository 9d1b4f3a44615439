package login

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// ErrTooManyFailures means this client failed too often in the window,
// for the username or overall; the error is a *BlockedError saying when to
// retry.
var ErrTooManyFailures = errors.New("too many failed sign-in attempts from this address")

// ErrBusy means too many sign-ins are being checked right now, in all or
// from this client.
var ErrBusy = errors.New("too many sign-in attempts in progress")

// BlockedError is returned for ErrTooManyFailures.
type BlockedError struct {
	// RetryAfter is how long until an attempt may pass again.
	RetryAfter time.Duration
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("%v; retry in %v", ErrTooManyFailures, e.RetryAfter.Round(time.Second))
}

// Is makes errors.Is(err, ErrTooManyFailures) true.
func (e *BlockedError) Is(target error) bool { return target == ErrTooManyFailures }

// Options tune a Limiter; zero fields take the defaults.
type Options struct {
	// MaxFailures is how many failures one client may have for one
	// username in Window (default 5, as Argo CD's
	// ARGOCD_SESSION_FAILURE_MAX_FAIL_COUNT).
	MaxFailures int
	// MaxClientFailures is how many failures one client may have over
	// all usernames in Window (default 20).
	MaxClientFailures int
	// MaxAccountFailures is the username's budget over all clients in
	// Window (default 100). Past it, only a client without a recent
	// failure for that username may try, so a distributed guesser is
	// slowed without locking out the user's own client.
	MaxAccountFailures int
	// Window is how long a failure counts (default 300s, as Argo CD's
	// ARGOCD_SESSION_FAILURE_WINDOW_SECONDS).
	Window time.Duration
	// MaxConcurrent caps the attempts between Begin and Done over all
	// clients (default 2 × GOMAXPROCS, at least 4: checking a password is
	// bcrypt, CPU-bound).
	MaxConcurrent int
	// MaxConcurrentPerClient caps them per client (default 1), so that one
	// client's flood leaves the other slots to others.
	MaxConcurrentPerClient int
	// MaxEntries bounds, each apart, the usernames Known rejects, the
	// clients, and the (username, client) pairs of real and of other
	// usernames remembered (default
	// 10,000 each, as Argo CD's ARGOCD_SESSION_MAX_CACHE_SIZE bounds its
	// cache). When full, the least recently used entry is forgotten.
	MaxEntries int
	// Known reports whether username is a real account. Their counters
	// are kept apart, bounded by the number of accounts, so a flood of
	// made-up names can never push them out. Nil means none is known.
	Known func(username string) bool
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.MaxFailures <= 0 {
		o.MaxFailures = 5
	}
	if o.MaxClientFailures <= 0 {
		o.MaxClientFailures = 20
	}
	if o.MaxAccountFailures <= 0 {
		o.MaxAccountFailures = 100
	}
	if o.Window <= 0 {
		o.Window = 300 * time.Second
	}
	if o.MaxConcurrentPerClient <= 0 {
		o.MaxConcurrentPerClient = 1
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = max(4, 2*runtime.GOMAXPROCS(0))
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 10_000
	}
	if o.Known == nil {
		o.Known = func(string) bool { return false }
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Limiter counts failed sign-ins per (username, client), per client and
// per username. Its methods are safe for concurrent use.
type Limiter struct {
	o Options

	mu      sync.Mutex
	known   map[string]*counter // usernames Known accepts; never evicted
	unknown *lru                // other usernames
	clients *lru
	// pairs hold pairKey(username, client), those of real usernames
	// apart, so that made-up names cannot push them out.
	knownPairs, pairs *lru
	inFlight          int
}

// NewLimiter returns a limiter with o's settings.
func NewLimiter(o Options) *Limiter {
	o = o.withDefaults()
	return &Limiter{
		o:          o,
		known:      map[string]*counter{},
		unknown:    newLRU(o.MaxEntries),
		clients:    newLRU(o.MaxEntries),
		pairs:      newLRU(o.MaxEntries),
		knownPairs: newLRU(o.MaxEntries),
	}
}

// pairKey joins a username and a client into one key; the NUL cannot be
// in a client address.
func pairKey(username, client string) string { return client + "\x00" + username }

// Attempt is a sign-in between Begin and Done.
type Attempt struct {
	l                  *Limiter
	user, client, pair *counter
	userKey, clientKey string
	knownUser          bool
	once               sync.Once
}

// Begin reserves a sign-in attempt for username from client before the
// password is checked, so parallel attempts cannot all pass a limit that is
// only counted afterwards: an attempt in progress counts as a failure until
// Done says otherwise. It returns a *BlockedError (ErrTooManyFailures) when
// this client failed too often for the username or overall, or when the
// username's budget over all clients is spent and this client has failed
// for it too; and ErrBusy when this client or all clients have their
// maximum of attempts in progress. Another client's failures never block a
// client that has none. Unknown and real usernames are treated alike, so
// the answer never tells them apart. Call Done exactly once on the
// returned attempt.
func (l *Limiter) Begin(ctx context.Context, username, client string) (*Attempt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	known := l.o.Known(username)
	now := l.o.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	cl := l.clients.get(client)
	if l.inFlight >= l.o.MaxConcurrent || cl != nil && cl.pending >= l.o.MaxConcurrentPerClient {
		return nil, ErrBusy
	}
	var user *counter
	pairs := l.pairs
	if known {
		user = l.known[username]
		pairs = l.knownPairs
	} else {
		user = l.unknown.get(username)
	}
	key := pairKey(username, client)
	pair := pairs.get(key)
	wait := max(pair.blocked(now, l.o.MaxFailures, l.o.Window), cl.blocked(now, l.o.MaxClientFailures, l.o.Window))
	if pair != nil && !pair.idle(now, l.o.Window) {
		wait = max(wait, user.blocked(now, l.o.MaxAccountFailures, l.o.Window))
	}
	if wait > 0 {
		return nil, &BlockedError{RetryAfter: wait}
	}
	if user == nil {
		user = &counter{}
		if known {
			l.known[username] = user
		} else {
			l.unknown.put(username, user)
		}
	}
	if cl == nil {
		cl = &counter{}
		l.clients.put(client, cl)
	}
	if pair == nil {
		pair = &counter{}
		pairs.put(key, pair)
	}
	user.pending++
	cl.pending++
	pair.pending++
	l.inFlight++
	return &Attempt{l: l, user: user, client: cl, pair: pair, userKey: username, clientKey: client, knownUser: known}, nil
}

// Done ends the attempt. A failure counts against the (username, client)
// pair, the client and the username for Window; a success clears the
// pair's failures but not the client's, so one good account cannot wipe the
// record of guesses at others, nor the username's, so a success does not
// reopen the budget to a distributed guesser. Calls after the first do
// nothing, so `defer a.Done(false)` may follow an explicit Done.
func (a *Attempt) Done(success bool) {
	a.once.Do(func() {
		l := a.l
		now := l.o.Now()
		l.mu.Lock()
		defer l.mu.Unlock()
		l.inFlight--
		a.user.pending--
		a.client.pending--
		a.pair.pending--
		if success {
			a.pair.failures = a.pair.failures[:0]
		} else {
			a.pair.fail(now, l.o.MaxFailures)
			a.client.fail(now, l.o.MaxClientFailures)
			a.user.fail(now, l.o.MaxAccountFailures)
		}
		// Counters with nothing to remember go, so the maps hold only
		// recent failures and attempts in progress.
		if a.user.idle(now, l.o.Window) {
			if !a.knownUser {
				l.unknown.remove(a.userKey, a.user)
			} else if l.known[a.userKey] == a.user {
				delete(l.known, a.userKey)
			}
		}
		if a.client.idle(now, l.o.Window) {
			l.clients.remove(a.clientKey, a.client)
		}
		if a.pair.idle(now, l.o.Window) {
			pairs := l.pairs
			if a.knownUser {
				pairs = l.knownPairs
			}
			pairs.remove(pairKey(a.userKey, a.clientKey), a.pair)
		}
	})
}

// Stats is what a limiter holds, for metrics.
type Stats struct {
	// KnownUsers, Users, Clients and Pairs count the remembered
	// counters of real usernames, other usernames, clients and
	// (username, client) pairs.
	KnownUsers, Users, Clients, Pairs int
	// InFlight counts attempts between Begin and Done.
	InFlight int
}

// Stats returns what the limiter holds now.
func (l *Limiter) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Stats{KnownUsers: len(l.known), Users: l.unknown.len(), Clients: l.clients.len(), Pairs: l.pairs.len() + l.knownPairs.len(), InFlight: l.inFlight}
}

// counter holds the times of recent failures (at most the limit, oldest
// first) and the attempts in progress.
type counter struct {
	failures []time.Time
	pending  int
}

// blocked returns how long until another attempt may pass, or 0 when one
// may pass now. c may be nil (nothing remembered).
func (c *counter) blocked(now time.Time, limit int, window time.Duration) time.Duration {
	if c == nil {
		return 0
	}
	recent := c.recent(now, window)
	if len(recent)+c.pending < limit {
		return 0
	}
	if len(recent) < limit {
		// Blocked by attempts still in progress: they finish within a
		// bcrypt comparison.
		return time.Second
	}
	// The oldest of the last limit failures leaves the window first.
	return recent[len(recent)-limit].Add(window).Sub(now)
}

// recent returns the failures still inside the window, dropping the others.
func (c *counter) recent(now time.Time, window time.Duration) []time.Time {
	i := 0
	for i < len(c.failures) && !c.failures[i].After(now.Add(-window)) {
		i++
	}
	if i > 0 {
		c.failures = append(c.failures[:0], c.failures[i:]...)
	}
	return c.failures
}

func (c *counter) fail(now time.Time, limit int) {
	if len(c.failures) >= limit {
		c.failures = append(c.failures[:0], c.failures[len(c.failures)-limit+1:]...)
	}
	c.failures = append(c.failures, now)
}

// idle reports whether the counter remembers nothing worth keeping.
func (c *counter) idle(now time.Time, window time.Duration) bool {
	return c.pending == 0 && len(c.recent(now, window)) == 0
}

// lru is a map of counters that forgets the least recently used one when
// it holds max.
type lru struct {
	max   int
	items map[string]*list.Element
	order *list.List // front: most recently used
}

type lruItem struct {
	key string
	c   *counter
}

func newLRU(max int) *lru {
	return &lru{max: max, items: map[string]*list.Element{}, order: list.New()}
}

func (m *lru) get(key string) *counter {
	e, ok := m.items[key]
	if !ok {
		return nil
	}
	m.order.MoveToFront(e)
	return e.Value.(*lruItem).c
}

// put adds key, forgetting the least recently used entry when full. It
// spares entries with attempts in progress, unless all are.
func (m *lru) put(key string, c *counter) {
	for m.order.Len() >= m.max {
		victim := m.order.Back()
		for e := victim; e != nil; e = e.Prev() {
			if e.Value.(*lruItem).c.pending == 0 {
				victim = e
				break
			}
		}
		m.order.Remove(victim)
		delete(m.items, victim.Value.(*lruItem).key)
	}
	m.items[key] = m.order.PushFront(&lruItem{key: key, c: c})
}

// remove forgets key if it still maps to c.
func (m *lru) remove(key string, c *counter) {
	if e, ok := m.items[key]; ok && e.Value.(*lruItem).c == c {
		m.order.Remove(e)
		delete(m.items, key)
	}
}

func (m *lru) len() int { return len(m.items) }
