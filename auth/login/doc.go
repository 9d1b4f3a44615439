// Package login protects password sign-in against guessing: it counts
// failures per username and per client in a sliding window (by default 5
// failures in 300 s each), caps the sign-ins checked at once (bcrypt is
// CPU-bound), and keeps its memory bounded without letting a flood of
// made-up usernames push out a real user's counter.
//
// An attempt is reserved before the password is checked, so parallel
// guesses cannot all slip through a limit counted afterwards:
//
//	limiter := login.NewLimiter(login.Options{
//		Known: func(name string) bool { _, ok := store.Get(name); return ok },
//	})
//
//	attempt, err := limiter.Begin(ctx, username, clientIP)
//	if err != nil {
//		// ErrBusy, or a *BlockedError (errors.Is ErrTooManyFailures)
//		// carrying RetryAfter
//	}
//	err = store.CheckPassword(ctx, username, password)
//	attempt.Done(err == nil)
//
// Unknown usernames are counted exactly like real ones, so the limiter's
// answers never reveal which accounts exist; accounts.Store.CheckPassword
// does the same for the password check's answer and time. Per-username
// limits let anyone lock an account out for the window by failing on
// purpose, as in Argo CD; the per-client limit and the concurrency cap keep
// such guessing slow.
//
// Counters of real usernames (Options.Known) live in their own map, as
// large as the set of accounts with recent failures. Made-up usernames and
// clients live in two maps of at most Options.MaxEntries each that forget
// the least recently used entry; counters with nothing left to remember
// are dropped at once.
package login
