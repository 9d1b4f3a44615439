//go:build integration

package reliability

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/testenv/roles"
)

// etcdPausedFor is how long etcd stays paused.
func etcdPausedFor() time.Duration {
	if full() {
		return 30 * time.Second
	}
	return 8 * time.Second
}

// kube-apiserver restarted (SIGTERM, started again on its port), then
// etcd paused (SIGSTOP) a while and resumed, with no push in between: the
// background apps, Synced and Healthy before, must never be seen
// OutOfSync, Missing or Unknown (a false alarm), and every role must keep
// running (a role that exits is started again, as a kubelet would, and
// reported). Recovery: from the control plane back until a push made then
// is synced by every background app.
func controlPlaneFaults(t *testing.T, in *installation, l *load) []outcome {
	var out []outcome
	for _, fault := range []struct {
		name   string
		inject func(context.Context) error
	}{
		{"kube-apiserver restarted", cluster.RestartAPIServer},
		{fmt.Sprintf("etcd paused (SIGSTOP) for %v", etcdPausedFor()), func(context.Context) error {
			if err := cluster.PauseEtcd(); err != nil {
				return err
			}
			time.Sleep(etcdPausedFor())
			return cluster.ResumeEtcd()
		}},
	} {
		l.settle(t)
		l.pushing.Store(false)
		pids := map[*roles.Role]int{}
		for _, r := range in.All() {
			pids[r] = r.PID()
		}
		watch := in.watchFalseAlarms(l.apps)
		if err := fault.inject(t.Context()); err != nil {
			_ = cluster.ResumeEtcd()
			t.Fatalf("%s: %v", fault.name, err)
		}
		back := time.Now()
		if _, err := in.push(t.Context()); err != nil {
			t.Fatal(err)
		}
		settled := l.settle(t) // pushes on again after
		alarms := watch()
		for _, a := range alarms {
			t.Errorf("%s: false alarm: %s", fault.name, a)
		}
		verdict := "no false OutOfSync/Missing/Unknown"
		if len(alarms) > 0 {
			verdict = fmt.Sprintf("%d false alarms", len(alarms))
		}
		var restarted []string
		for _, r := range in.All() {
			if !r.Running() || r.PID() != pids[r] {
				restarted = append(restarted, r.Name)
				if !r.Running() {
					startRole(t, r)
				}
			}
		}
		for _, name := range restarted {
			if !strings.HasPrefix(name, "controller-") {
				t.Errorf("%s: %s exited", fault.name, name)
			}
		}
		note := "no role exited"
		if len(restarted) > 0 {
			note = "exited and started again: " + strings.Join(restarted, ", ")
		}
		out = append(out, outcome{fault: fault.name, recovery: settled.Sub(back),
			note: note + "; " + verdict})
	}
	return out
}

// watchFalseAlarms polls the apps until the returned function is called,
// which returns every status seen that is not Synced and Healthy (or
// Progressing while a sync runs).
func (in *installation) watchFalseAlarms(apps []string) func() []string {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	seen := map[string]bool{}
	var alarms []string
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			for _, name := range apps {
				rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
				a, err := in.app(rctx, name)
				rcancel()
				if err != nil {
					continue // the control plane is down: nothing to see
				}
				s := a.Status
				bad := s.Sync.Status == v1alpha1.SyncStatusCodeUnknown || s.Health.Status == v1alpha1.HealthStatusMissing ||
					s.Health.Status == v1alpha1.HealthStatusUnknown ||
					(s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync && !in.newerRevision(s.Sync.Revision))
				if bad {
					msg := fmt.Sprintf("%s: sync %s at %.7s, health %s", name, s.Sync.Status, s.Sync.Revision, s.Health.Status)
					mu.Lock()
					if !seen[msg] {
						seen[msg] = true
						alarms = append(alarms, msg)
					}
					mu.Unlock()
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	return func() []string {
		cancel()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return alarms
	}
}

// newerRevision reports whether rev is the revision of the last push
// (OutOfSync at it is true, not an alarm: the push is being synced).
func (in *installation) newerRevision(rev string) bool {
	head, err := in.git.head(context.Background())
	return err == nil && head == rev
}
