//go:build integration

package reliability

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// hangFor is how long a repository server stays stopped (SIGSTOP).
func hangFor() time.Duration {
	if full() {
		return 2 * time.Minute
	}
	return 30 * time.Second
}

// A repository server killed (SIGKILL) while renders fetch from a slow
// git server, then one that hangs (SIGSTOP, its connections open but
// silent): the controllers and API replicas render with the other, and
// the background apps sync a push made during the fault. Recovery, for
// the kill: from the kill until the apps synced the push; for the hang:
// from the stop until they did, while the server is still stopped.
func repoServerFaults(t *testing.T, in *installation, l *load) []outcome {
	var out []outcome

	// Killed during a render.
	victim := in.RepoServers[0]
	in.git.delay.Store(int64(2 * time.Second))
	seen := in.git.requests.Load()
	if _, err := in.push(t.Context()); err != nil {
		t.Fatal(err)
	}
	in.refreshAll(t, l.apps)
	waitFor(t, time.Minute, "a render to fetch from git", func() (bool, string) {
		return in.git.requests.Load() > seen, "no fetch yet"
	})
	killed := time.Now()
	victim.Kill()
	in.git.delay.Store(0)
	settled := l.settle(t)
	out = append(out, outcome{
		fault:    "repository server killed (`kill -9`) during a render",
		recovery: settled.Sub(killed),
		note:     "renders went to the other replica; apps synced the push made before the kill",
	})
	startRole(t, victim)

	// Hangs.
	victim = in.RepoServers[1]
	if err := victim.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	resumed := false
	resume := func() {
		if !resumed {
			_ = victim.Signal(syscall.SIGCONT)
			resumed = true
		}
	}
	defer resume()
	if _, err := in.push(t.Context()); err != nil {
		t.Fatal(err)
	}
	in.refreshAll(t, l.apps)
	settled = l.settle(t)
	hung := time.Since(stopped)
	if rest := hangFor() - hung; rest > 0 {
		time.Sleep(rest)
	}
	resume()
	out = append(out, outcome{
		fault:    fmt.Sprintf("repository server hung (SIGSTOP for %v)", hangFor().Round(time.Second)),
		recovery: settled.Sub(stopped),
		note:     "measured from the stop: the apps synced a push made during the hang while the server was still stopped",
	})
	// The resumed server serves again.
	l.settle(t)
	return out
}

// refreshAll asks for a refresh of every app of names, as a webhook's
// push does.
func (in *installation) refreshAll(t *testing.T, names []string) {
	t.Helper()
	for _, name := range names {
		a := &v1alpha1.Application{}
		a.Namespace, a.Name = graphcdNamespace, name
		patch := []byte(`{"metadata":{"annotations":{"` + v1alpha1.RefreshAnnotation + `":"normal"}}}`)
		if err := in.apps.Patch(t.Context(), a, client.RawPatch("application/merge-patch+json", patch)); err != nil {
			t.Fatal(err)
		}
	}
}
