// Package reliability is graphcd's fault battery: the split roles run as
// real processes on a local cluster, the way deploy/ha runs them (two API
// replicas, two controller shards each with a standby, two repository
// servers, Redis and a git server; each role under GOMEMLIMIT), under a
// background load of auto-synced apps, pushes, logins and subscribers.
// Each case injects one fault, checks that nothing was lost (no
// Application, history entry or operation; no hook run twice; no wave
// applied out of order; no panic in any role's log) and logs the time the
// installation took to be correct again after the fault ended.
// docs/reliability.md keeps the table of the cases and the recoveries
// measured.
//
//	go test -tags integration -count=1 ./reliability/                       # short faults, a few subscribers
//	GRAPHCD_FAULTS=full go test -tags integration -count=1 ./reliability/   # the durations, 500 subscribers
package reliability
