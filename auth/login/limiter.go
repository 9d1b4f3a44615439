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

// ErrTooManyFailures means the username or the client failed too often in
// the window; the error is a *BlockedError saying when to retry.
var ErrTooManyFailures = errors.New("too many failed sign-in attempts")

// ErrBusy means too many sign-ins are being checked right now.
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
	// MaxFailures is how many failures a username may have in Window
	// (default 5).
	MaxFailures int
	// MaxClientFailures is how many failures a client may have in Window
	// (default 5).
	MaxClientFailures int
	// Window is how long a failure counts (default 300s).
	Window time.Duration
	// MaxConcurrent caps the attempts between Begin and Done (default
	// GOMAXPROCS: checking a password is bcrypt, CPU-bound).
	MaxConcurrent int
	// MaxEntries bounds the usernames Known rejects and, apart, the
	// clients remembered (default 10,000 each). When full, the least
	// recently used entry is forgotten.
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
		o.MaxClientFailures = 5
	}
	if o.Window <= 0 {
		o.Window = 300 * time.Second
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = runtime.GOMAXPROCS(0)
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

// Limiter counts failed sign-ins per username and per client. Its methods
// are safe for concurrent use.
type Limiter struct {
	o Options

	mu       sync.Mutex
	known    map[string]*counter // usernames Known accepts; never evicted
	unknown  *lru                // other usernames
	clients  *lru
	inFlight int
}

// NewLimiter returns a limiter with o's settings.
func NewLimiter(o Options) *Limiter {
	o = o.withDefaults()
	return &Limiter{
		o:       o,
		known:   map[string]*counter{},
		unknown: newLRU(o.MaxEntries),
		clients: newLRU(o.MaxEntries),
	}
}

// Attempt is a sign-in between Begin and Done.
type Attempt struct {
	l            *Limiter
	user, client *counter
	userKey      string
	clientKey    string
	knownUser    bool
	once         sync.Once
}

// Begin reserves a sign-in attempt for username from client before the
// password is checked, so parallel attempts cannot all pass a limit that is
// only counted afterwards: an attempt in progress counts as a failure until
// Done says otherwise. It returns a *BlockedError (ErrTooManyFailures) when
// the username or the client failed too often, and ErrBusy when
// MaxConcurrent attempts are in progress. Unknown and real usernames are
// treated alike, so the answer never tells them apart. Call Done exactly
// once on the returned attempt.
func (l *Limiter) Begin(ctx context.Context, username, client string) (*Attempt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	known := l.o.Known(username)
	now := l.o.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight >= l.o.MaxConcurrent {
		return nil, ErrBusy
	}
	var user *counter
	if known {
		user = l.known[username]
	} else {
		user = l.unknown.get(username)
	}
	cl := l.clients.get(client)
	wait := max(user.blocked(now, l.o.MaxFailures, l.o.Window), cl.blocked(now, l.o.MaxClientFailures, l.o.Window))
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
	user.pending++
	cl.pending++
	l.inFlight++
	return &Attempt{l: l, user: user, client: cl, userKey: username, clientKey: client, knownUser: known}, nil
}

// Done ends the attempt. A failure counts against the username and the
// client for Window; a success clears the username's failures but not the
// client's, so one good account cannot wipe the record of guesses at
// others. Calls after the first do nothing, so `defer a.Done(false)` may
// follow an explicit Done.
func (a *Attempt) Done(success bool) {
	a.once.Do(func() {
		l := a.l
		now := l.o.Now()
		l.mu.Lock()
		defer l.mu.Unlock()
		l.inFlight--
		a.user.pending--
		a.client.pending--
		if success {
			a.user.failures = a.user.failures[:0]
		} else {
			a.user.fail(now, l.o.MaxFailures)
			a.client.fail(now, l.o.MaxClientFailures)
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
	})
}

// Stats is what a limiter holds, for metrics.
type Stats struct {
	// KnownUsers, Users and Clients count the remembered counters of
	// real usernames, other usernames and clients.
	KnownUsers, Users, Clients int
	// InFlight counts attempts between Begin and Done.
	InFlight int
}

// Stats returns what the limiter holds now.
func (l *Limiter) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Stats{KnownUsers: len(l.known), Users: l.unknown.len(), Clients: l.clients.len(), InFlight: l.inFlight}
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
