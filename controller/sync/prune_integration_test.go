//go:build integration

package sync_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/sync"
)

// After objects disappear from Git, a sync with prune deletes them in
// reverse wave order with PruneLast ones at the very end, keeps
// Prune=false, and deletes with the application's propagation policy
// (orphan: the Deployment's ReplicaSet stays).
func TestPruneOrderAndPolicies(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "prune-before.yaml")
	h.sync(v1alpha1.OperationSucceeded)
	rs := waitReplicaSets(t, h, 1)

	h.setDesired("prune-after.yaml")
	h.opts.Prune = true
	h.opts.SyncOptions = []string{"PrunePropagationPolicy=orphan"}
	h.sync(v1alpha1.OperationSucceeded)
	// Waves of the pruned objects (0, 1, 2) are mirrored: the worker of
	// wave 2 goes first; PruneLast after everything else.
	checkOrder(t, order(h.state), []string{
		"Sync 0 Deployment worker Pruned Succeeded",
		"Sync 0 ConfigMap stays Synced Running",
		"Sync 1 ConfigMap dropped-early Pruned Succeeded",
		"Sync 2 ConfigMap kept PruneSkipped Succeeded",
		"Sync 3 ConfigMap dropped-last Pruned Succeeded",
	})
	if r := result(t, h.state, "ConfigMap", "kept"); r.Message != "ignored (no prune)" {
		t.Errorf("kept: message %q", r.Message)
	}
	if r := result(t, h.state, "ConfigMap", "dropped-early"); r.Message != "pruned" {
		t.Errorf("dropped-early: message %q", r.Message)
	}
	if got := h.names("ConfigMap"); !slices.Contains(got, "stays") || !slices.Contains(got, "kept") ||
		slices.Contains(got, "dropped-early") || slices.Contains(got, "dropped-last") {
		t.Errorf("configmaps %v, want stays and kept only", got)
	}
	// Orphan propagation: the ReplicaSet outlives its Deployment.
	waitGone(t, h, "Deployment", "worker")
	if h.get("ReplicaSet", rs[0]) == nil {
		t.Errorf("ReplicaSet %s was deleted with its Deployment despite PrunePropagationPolicy=orphan", rs[0])
	}
}

// Without the prune flag nothing is deleted; the results say why.
func TestPruneDisabled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "prune-before.yaml")
	h.sync(v1alpha1.OperationSucceeded)
	h.setDesired("prune-after.yaml")
	h.sync(v1alpha1.OperationSucceeded)
	if r := result(t, h.state, "ConfigMap", "dropped-early"); r.Status != v1alpha1.ResultCodePruneSkipped || r.Message != "ignored (requires pruning)" {
		t.Errorf("dropped-early: %s %q", r.Status, r.Message)
	}
	if h.get("ConfigMap", "dropped-early") == nil || h.get("Deployment", "worker") == nil {
		t.Error("a sync without prune deleted objects")
	}
}

// waitReplicaSets waits until the namespace holds n ReplicaSets and
// returns their names.
func waitReplicaSets(t *testing.T, h *harness, n int) []string {
	t.Helper()
	var names []string
	err := wait.PollUntilContextCancel(t.Context(), 50*time.Millisecond, true, func(context.Context) (bool, error) {
		names = h.names("ReplicaSet")
		return len(names) == n, nil
	})
	if err != nil {
		t.Fatalf("ReplicaSets %v, want %d: %v", names, n, err)
	}
	return names
}

// waitGone waits until kind/name no longer exists.
func waitGone(t *testing.T, h *harness, kind, name string) {
	t.Helper()
	err := wait.PollUntilContextCancel(t.Context(), 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(gvrs[kind]).Namespace(h.ns).Get(ctx, name, metav1.GetOptions{})
		return err != nil, nil
	})
	if err != nil {
		t.Fatalf("%s %s never went away: %v", kind, name, err)
	}
}

// Prune=confirm holds the sync before the prune, saying why, until the
// plan is built with the approval; then the object is pruned.
func TestPruneWaitsForConfirmation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "prune-before.yaml")
	h.sync(v1alpha1.OperationSucceeded)
	h.setDesired("prune-after.yaml")
	h.opts.Prune = true
	h.opts.SyncOptions = []string{"Prune=confirm"}
	steps := 0
	h.runUntil(func(st *v1alpha1.OperationState) bool {
		steps++
		return strings.HasPrefix(st.Message, "waiting for pruning confirmation of ") || steps > 200
	})
	if h.state.Phase != v1alpha1.OperationRunning || !strings.Contains(h.state.Message, sync.AnnotationDeletionApproved) {
		t.Fatalf("without approval: phase %s, message %q", h.state.Phase, h.state.Message)
	}
	for range 3 { // still waiting, however often it is asked
		h.step()
	}
	if h.state.Phase != v1alpha1.OperationRunning || h.get("Deployment", "worker") == nil {
		t.Fatalf("the unapproved prune went ahead: phase %s", h.state.Phase)
	}
	h.opts.PruneApproved = true
	h.sync(v1alpha1.OperationSucceeded)
	waitGone(t, h, "Deployment", "worker")
	if h.get("ConfigMap", "kept") == nil {
		t.Error("the approval pruned an object with Prune=false")
	}
}
