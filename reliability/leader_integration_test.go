//go:build integration

package reliability

import (
	"fmt"
	"testing"
	"time"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
)

// The leader of the shard that owns the cluster is killed (SIGKILL, no
// chance to release its Lease) while two apps are in the middle of wave 1
// of a sync, its slow hook running, and just after a push the background
// apps sync: the standby takes the Lease when it expires, the operations
// finish Succeeded, every hook ran once and every wave was written after
// the one before it. Recovery: from the kill until the operations are
// done and the background apps synced the last push.
func leaderKilledDuringWave(t *testing.T, in *installation, l *load) []outcome {
	shard := inClusterShard(t)
	leader, standby := in.leader(t, shard)
	var apps []string
	logs := map[string]*orderLog{}
	for i := range 2 {
		name := fmt.Sprintf("waves-kill-%d", i)
		dest := cluster.Namespace(t)
		logs[name] = watchOrder(t, dest)
		in.newAppIn(t, name, wavesApp, dest, func(a *v1alpha1.Application) {
			a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "faults"}}
		})
		apps = append(apps, name)
	}
	waitFor(t, 3*time.Minute, "the slow hooks to run", func() (bool, string) {
		for _, name := range apps {
			if !logs[name].running("slow-") {
				return false, name + "'s wave 1 hook is not running"
			}
		}
		return true, ""
	})
	if _, err := in.push(t.Context()); err != nil {
		t.Fatal(err)
	}

	killed := time.Now()
	leader.kill()
	lease := controller.LeaseName(shard)
	waitFor(t, 2*time.Minute, "the standby to take the Lease", func() (bool, string) {
		h := leaseHolder(t, lease)
		return h == standby.leaseIdentity(), "held by " + h
	})
	takeover := time.Since(killed)
	waitFor(t, 5*time.Minute, "the operations to finish", func() (bool, string) {
		for _, name := range apps {
			a, err := in.app(t.Context(), name)
			if err != nil {
				return false, err.Error()
			}
			if st := a.Status.OperationState; st == nil || st.FinishedAt == nil {
				return false, name + "'s operation is running"
			}
		}
		return true, ""
	})
	settled := l.settle(t)
	for _, name := range apps {
		a, err := in.app(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		if st := a.Status.OperationState; st.Phase != v1alpha1.OperationSucceeded {
			t.Errorf("%s: operation %s: %s", name, st.Phase, st.Message)
		}
		if len(a.Status.History) != 1 {
			t.Errorf("%s: %d history entries, want 1", name, len(a.Status.History))
		}
		logs[name].checkWaves(t, name)
	}
	// The killed replica comes back as the standby.
	leader.start(t)
	return []outcome{{
		fault:    "`kill -9` of the controller leader during a sync wave",
		recovery: settled.Sub(killed),
		note: fmt.Sprintf("killed while 2 apps ran their wave-1 hook; the standby took the Lease after %.1f s (lease duration 15 s); operations Succeeded, each hook created once, waves in order",
			takeover.Seconds()),
	}}
}
