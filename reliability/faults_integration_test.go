//go:build integration

package reliability

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// outcome is what a case measured.
type outcome struct {
	fault    string        // the fault, as the table names it
	recovery time.Duration // from the fault's end to the installation correct again
	note     string        // what else was seen
}

// faultCase injects one fault into the running installation and returns
// what it measured; the battery checks that nothing was lost around it.
type faultCase struct {
	name string
	run  func(t *testing.T, in *installation, l *load) []outcome
}

// The fault battery: one installation, one background load, the cases
// one after another. Each case's table row is logged; a case fails on
// anything lost, never on its recovery time.
func TestFaults(t *testing.T) {
	in := install(t)
	l := startLoad(t, in)
	t.Logf("installation: 2 API replicas, %d controller shards × 2 replicas, 2 repository servers, Redis, git server; load: %d auto-synced apps, a push every %v, a login every %v, %d subscribers",
		shards, l.size.apps, l.size.pushEvery, l.size.loginEvery, l.size.subscribers)
	var rows []string
	for _, c := range []faultCase{
		{"LeaderKilledDuringWave", leaderKilledDuringWave},
		{"LeaderKilledDuringPostDelete", leaderKilledDuringPostDelete},
		{"RepoServerKilledAndHung", repoServerFaults},
		{"RedisKilledAndFlushed", redisFaults},
		{"ControlPlaneRestartedAndPaused", controlPlaneFaults},
		{"GitDownDeletedRewritten", gitFaults},
		{"DestinationClusterAway", clusterAway},
		{"ClockSkew", clockSkew},
		{"MemoryPressure", memoryPressure},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Cleanup(func() { in.restartStopped(t) })
			before := in.snapshot(t)
			loadBefore := l.counts()
			outcomes := c.run(t, in, l)
			in.checkKept(t, before)
			in.checkNoPanics(t)
			for _, o := range outcomes {
				row := fmt.Sprintf("| %s | %.1f s | %s |", o.fault, o.recovery.Seconds(), o.note)
				t.Log(row)
				rows = append(rows, row)
			}
			t.Logf("load during the case: %s", l.since(loadBefore))
		})
	}
	t.Logf("fault battery:\n| fault | recovery | notes |\n|---|---|---|\n%s", strings.Join(rows, "\n"))
}

// restartStopped starts again the roles a failed case left stopped, so
// that the next case finds the installation whole.
func (in *installation) restartStopped(t *testing.T) {
	all := slices.Concat(in.RepoServers, in.Servers)
	for _, shard := range in.Controllers {
		all = append(all, shard...)
	}
	for _, r := range all {
		if r.Running() {
			continue
		}
		t.Logf("%s was left stopped; starting it again", r.Name)
		if err := r.Start(context.Background()); err != nil {
			t.Error(err)
		}
	}
}

// appRecord is what must survive a fault of one Application.
type appRecord struct {
	uid     string
	history []int64 // the IDs of its history entries
}

// snapshot reads every Application of graphcd's namespace.
func (in *installation) snapshot(t *testing.T) map[string]appRecord {
	t.Helper()
	var list v1alpha1.ApplicationList
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := in.apps.List(ctx, &list); err != nil {
		t.Fatal(err)
	}
	s := map[string]appRecord{}
	for _, a := range list.Items {
		r := appRecord{uid: string(a.UID)}
		for _, h := range a.Status.History {
			r.history = append(r.history, h.ID)
		}
		s[a.Namespace+"/"+a.Name] = r
	}
	return s
}

// checkKept fails the test for every Application of before that is gone
// or was replaced, and every history entry of it that is gone other than
// by the history limit (which drops the oldest first).
func (in *installation) checkKept(t *testing.T, before map[string]appRecord) {
	t.Helper()
	after := in.snapshot(t)
	for name, b := range before {
		a, ok := after[name]
		switch {
		case !ok:
			t.Errorf("Application %s lost", name)
			continue
		case a.uid != b.uid:
			t.Errorf("Application %s replaced (uid %s, was %s)", name, a.uid, b.uid)
			continue
		}
		if len(b.history) == 0 {
			continue
		}
		if len(a.history) == 0 {
			t.Errorf("Application %s: history %v lost", name, b.history)
			continue
		}
		oldest := slices.Min(a.history)
		for _, id := range b.history {
			if id >= oldest && !slices.Contains(a.history, id) {
				t.Errorf("Application %s: history entry %d lost (history %v, was %v)", name, id, a.history, b.history)
			}
		}
		if slices.Max(a.history) < slices.Max(b.history) {
			t.Errorf("Application %s: history went back (%v, was %v)", name, a.history, b.history)
		}
	}
}

// settle pauses the pushes and waits until the background apps are synced
// at the repository's head, returning when they were.
func (l *load) settle(t *testing.T) time.Time {
	t.Helper()
	l.pushing.Store(false)
	defer l.pushing.Store(true)
	waitFor(t, 5*time.Minute, "the background apps to sync the last push", func() (bool, string) {
		// Read each time: a push that started before the pause lands.
		head, err := l.in.git.head(t.Context())
		if err != nil {
			return false, err.Error()
		}
		return l.converged(head)
	})
	return time.Now()
}
