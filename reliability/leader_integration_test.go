//go:build integration

package reliability

import (
	"fmt"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/testenv/roles"
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

	killed, takeover := killLeader(t, in, shard, leader, standby)
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
	startRole(t, leader)
	return []outcome{{
		fault:    "`kill -9` of the controller leader during a sync wave",
		recovery: settled.Sub(killed),
		note: fmt.Sprintf("killed while 2 apps ran their wave-1 hook; the standby took the Lease after %.1f s (lease duration 15 s); operations Succeeded, each hook created once, waves in order",
			takeover.Seconds()),
	}}
}

// The leader of the shard that owns the cluster is killed while an app's
// PostDelete hook runs, the app being deleted: the standby takes the
// Lease, the hook finishes, the app's resources and then the app are
// gone, and the hook was created once. Recovery: from the kill until the
// Application is gone.
func leaderKilledDuringPostDelete(t *testing.T, in *installation, l *load) []outcome {
	shard := inClusterShard(t)
	leader, standby := in.leader(t, shard)
	const name = "postdelete-kill"
	dest := cluster.Namespace(t)
	log := watchOrder(t, dest)
	in.newAppIn(t, name, postDeleteApp, dest, func(a *v1alpha1.Application) {
		a.Finalizers = []string{"resources-finalizer.argocd.argoproj.io"}
		a.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}, InitiatedBy: v1alpha1.OperationInitiator{Username: "faults"}}
	})
	waitFor(t, 3*time.Minute, "the app to sync and take the PostDelete finalizer", func() (bool, string) {
		a, err := in.app(t.Context(), name)
		if err != nil {
			return false, err.Error()
		}
		st := a.Status.OperationState
		return st != nil && st.Phase == v1alpha1.OperationSucceeded && slices.Contains(a.Finalizers, "post-delete-finalizer.argocd.argoproj.io"),
			fmt.Sprintf("operation %v, finalizers %v", st, a.Finalizers)
	})
	a, err := in.app(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	if err := in.apps.Delete(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Minute, "the PostDelete hook to run", func() (bool, string) {
		return log.running("post-"), "the hook is not running"
	})

	killed, takeover := killLeader(t, in, shard, leader, standby)
	waitFor(t, 5*time.Minute, "the app to be gone", func() (bool, string) {
		a, err := in.app(t.Context(), name)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, fmt.Sprintf("finalizers %v, conditions %v", a.Finalizers, a.Status.Conditions)
	})
	gone := time.Now()
	log.mu.Lock()
	_, created := find(log.added, "Job/post-")
	_, done := find(log.done, "Job/post-")
	log.mu.Unlock()
	if created != 1 || done != 1 {
		t.Errorf("PostDelete hook: %d Jobs created, %d completed; want 1 and 1", created, done)
	}
	if _, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "kept", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the app's ConfigMap after its deletion: %v, want it deleted", err)
	}
	l.settle(t)
	startRole(t, leader)
	return []outcome{{
		fault:    "`kill -9` of the controller leader during a PostDelete hook",
		recovery: gone.Sub(killed),
		note: fmt.Sprintf("killed while the hook of a deleted app ran; the standby took the Lease after %.1f s; the hook created once and completed, the resources and the Application gone",
			takeover.Seconds()),
	}}
}

// killLeader kills the leader of shard (SIGKILL: no chance to release its
// Lease) and waits for standby to take the Lease; it returns when it
// killed and how long the takeover took.
func killLeader(t *testing.T, in *installation, shard int, leader, standby *roles.Role) (killed time.Time, takeover time.Duration) {
	t.Helper()
	killed = time.Now()
	leader.Kill()
	waitFor(t, 2*time.Minute, "the standby to take the Lease", func() (bool, string) {
		h := in.LeaseHolder(t.Context(), shard)
		return h == standby.LeaseIdentity(), "held by " + h
	})
	return killed, time.Since(killed)
}
