package controller

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// A running cluster cache does not notice that its cluster went away: its
// watches retry quietly and the apps would go on being compared with what
// the cache last saw. A probe asks each cluster whose cache runs for its
// version, and a cluster that has not answered for unreachableAfter is
// reported unreachable: its apps get a ComparisonError naming it (sync
// status Unknown) and are tried again after connectRetry, and the cluster
// shows as Failed. Both turns, down and back, refresh the cluster's apps.
// Other clusters are not touched: each has its own probe.
const (
	probeEvery = 5 * time.Second
	// probeFailingEvery is how often a cluster that does not answer is
	// asked, so that its return is seen soon.
	probeFailingEvery = time.Second
	probeTimeout      = 5 * time.Second
	unreachableAfter  = 30 * time.Second
)

// clusterProbe follows whether one cluster answers.
type clusterProbe struct {
	// ask asks the cluster for something cheap (its version).
	ask func(ctx context.Context) error
	// turned is called when the cluster is reported unreachable, and
	// when it answers again after that.
	turned func()

	mu           sync.Mutex
	failingSince time.Time // zero while the cluster answers
	down         error     // set once it failed for unreachableAfter
}

// run asks the cluster every probeEvery (every probeFailingEvery while it
// does not answer) until ctx ends.
func (p *clusterProbe) run(ctx context.Context) {
	for {
		wait := probeEvery
		if p.failing() {
			wait = probeFailingEvery
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		actx, cancel := context.WithTimeout(ctx, probeTimeout)
		err := p.ask(actx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		p.record(err, time.Now())
	}
}

func (p *clusterProbe) failing() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.failingSince.IsZero()
}

// record notes the outcome of one question asked at now.
func (p *clusterProbe) record(err error, now time.Time) {
	p.mu.Lock()
	wasDown := p.down != nil
	switch {
	case err == nil:
		p.failingSince, p.down = time.Time{}, nil
	case p.failingSince.IsZero():
		p.failingSince = now
	}
	if err != nil && p.down == nil && now.Sub(p.failingSince) >= unreachableAfter {
		// The message stays the same while the cluster is down, so the
		// apps' conditions are not rewritten at every retry.
		p.down = fmt.Errorf("cluster unreachable since %s: %w", p.failingSince.UTC().Format(time.RFC3339), err)
	}
	turned := wasDown != (p.down != nil)
	p.mu.Unlock()
	if turned && p.turned != nil {
		p.turned()
	}
}

// unreachable returns why the cluster is reported unreachable, or nil.
func (p *clusterProbe) unreachable() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.down
}
