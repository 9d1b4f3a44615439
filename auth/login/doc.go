// Package login protects password sign-in against guessing without
// letting a guesser lock the real user out. It counts failures in a
// sliding window (by default 300 s) per (username, client) (5), per client
// over all usernames (20) and per username over all clients (100, past
// which only clients without a recent failure for it may try); it caps the
// sign-ins checked at once per client (1) and in all (2 × GOMAXPROCS, at
// least 4; bcrypt is CPU-bound); and it keeps its memory bounded without
// letting a flood of made-up usernames push out a real user's counters.
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
//		// carrying RetryAfter: both about this client only, unless
//		// all clients together are at the concurrency cap
//	}
//	err = store.CheckPassword(ctx, username, password)
//	attempt.Done(err == nil)
//
// Unknown usernames are counted exactly like real ones, so the limiter's
// answers never reveal which accounts exist; accounts.Store.CheckPassword
// does the same for the password check's answer and time. No client's
// failures block another client that has none: an attacker who fails on
// purpose locks out only their own address.
//
// Counters of real usernames (Options.Known) live in their own map, as
// large as the set of accounts with recent failures. Made-up usernames,
// clients, and the pairs of real and of made-up usernames live in four
// maps of at most Options.MaxEntries each that forget the least recently
// used entry; counters with nothing left to remember are dropped at once.
package login
