//go:build integration

package controller_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appops"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/approval"
)

// approvalProject creates a project that lets its apps deploy anything
// anywhere under policy.
func approvalProject(t *testing.T, name string, policy v1alpha1.SyncApproval) {
	t.Helper()
	newProject(t, name, v1alpha1.AppProjectSpec{
		SourceRepos:  []string{"*"},
		Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		SyncApproval: &policy,
	})
}

// heldApp creates an app of project proj, has alice request its sync and
// waits until the sync is held; it returns the app's destination
// namespace and the held app.
func heldApp(t *testing.T, name, proj string) (string, *v1alpha1.Application) {
	t.Helper()
	_, dest, _ := newAppWith(t, name, map[string]string{"app/cm.yaml": configMap("DEST", name, "prod")},
		func(a *v1alpha1.Application) { a.Spec.Project = proj })
	waitStatus(t, name, "OutOfSync", func(s *v1alpha1.ApplicationStatus) bool { return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync })
	requestSync(t, name, manual(v1alpha1.SyncOperation{}))
	app := waitStatus(t, name, "held for approval", func(s *v1alpha1.ApplicationStatus) bool {
		return approval.Waiting(s.OperationState) && strings.HasPrefix(s.OperationState.Message, "waiting for ")
	})
	return dest, app
}

// noConfigMap fails the test when the app's ConfigMap was applied.
func noConfigMap(t *testing.T, dest, when string) {
	t.Helper()
	_, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "settings", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("%s: the ConfigMap of a held sync was read with %v, want NotFound", when, err)
	}
}

// anyone lets every approval through to approval's own checks, as an API
// caller with the rights would.
func anyone(*v1alpha1.Application) error { return nil }

// A project asking for one approval from group release holds alice's
// sync: nothing is applied, bob (ops) and alice herself are refused,
// and carol's approval (release) lets the sync run to Synced. The hold
// and the approval are Events, and the approvals go with the operation.
func TestSyncApprovalHoldsUntilApproved(t *testing.T) {
	t.Parallel()
	const name, proj = "approval-held", "approvals-held"
	approvalProject(t, proj, v1alpha1.SyncApproval{Approvals: 1, Groups: []string{"release"}})
	dest, app := heldApp(t, name, proj)
	st := app.Status.OperationState
	if want := "waiting for 1 approval from groups [release] (0 of 1), expires at "; !strings.HasPrefix(st.Message, want) {
		t.Errorf("held message %q, want it to start with %q", st.Message, want)
	}
	if got, want := st.Approval.ExpiresAt.Sub(st.StartedAt.Time), approval.DefaultExpiry; got != want {
		t.Errorf("held for %s, want the default %s", got, want)
	}
	noConfigMap(t, dest, "held")

	ops := appops.Service{Client: apps}
	key := types.NamespacedName{Namespace: appNamespace, Name: name}
	if _, err := ops.ApproveSync(t.Context(), key, approval.Approver{User: "bob", Groups: []string{"ops"}}, anyone); !errors.Is(err, approval.ErrNotInGroups) {
		t.Errorf("bob of ops approved: %v, want %v", err, approval.ErrNotInGroups)
	}
	if _, err := ops.ApproveSync(t.Context(), key, approval.Approver{User: "alice", Groups: []string{"release"}}, anyone); !errors.Is(err, approval.ErrSelfApproval) {
		t.Errorf("alice approved her own sync: %v, want %v", err, approval.ErrSelfApproval)
	}
	if got := getApp(t, name); !approval.Waiting(got.Status.OperationState) || got.Annotations[v1alpha1.SyncApprovalsAnnotation] != "" {
		t.Errorf("after refused approvals: held %v, approvals %q", approval.Waiting(got.Status.OperationState), got.Annotations[v1alpha1.SyncApprovalsAnnotation])
	}
	noConfigMap(t, dest, "after refused approvals")

	if _, err := ops.ApproveSync(t.Context(), key, approval.Approver{User: "carol", Via: "chatops", Groups: []string{"release"}}, anyone); err != nil {
		t.Fatalf("carol of release: %v", err)
	}
	app = waitStatus(t, name, "synced once approved", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	hold := app.Status.OperationState.Approval
	if hold.ApprovedAt == nil || len(hold.ApprovedBy) != 1 || hold.ApprovedBy[0].User != "carol" || hold.ApprovedBy[0].Via != "chatops" {
		t.Errorf("approval of the finished sync: %+v", hold)
	}
	if _, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "settings", metav1.GetOptions{}); err != nil {
		t.Errorf("the approved sync did not apply the ConfigMap: %v", err)
	}
	poll(t, "the approvals dropped with the finished operation", func(ctx context.Context) (bool, error) {
		var got v1alpha1.Application
		if err := apps.Get(ctx, key, &got); err != nil {
			return false, err
		}
		_, kept := got.Annotations[v1alpha1.SyncApprovalsAnnotation]
		return got.Operation == nil && !kept, nil
	})
	poll(t, "SyncApprovalRequired and SyncApproved events", func(ctx context.Context) (bool, error) {
		var events corev1.EventList
		if err := cluster.Client.CoreV1().RESTClient().Get().Namespace(appNamespace).Resource("events").Do(ctx).Into(&events); err != nil {
			return false, err
		}
		var required, approved bool
		for _, e := range events.Items {
			if e.InvolvedObject.Name != name {
				continue
			}
			required = required || e.Reason == controller.ReasonSyncApprovalRequired
			approved = approved || (e.Reason == controller.ReasonSyncApproved && strings.Contains(e.Message, "carol (via chatops)"))
		}
		return required && approved, nil
	})
}

// Approvals recorded around the API count for nothing when they break the
// policy (an approver outside its groups, the requester, another
// operation's approval): the sync stays held, nothing is applied, and at
// its expiry it fails and the approvals are dropped; approving it then is
// refused.
func TestSyncApprovalExpires(t *testing.T) {
	t.Parallel()
	const name, proj = "approval-expires", "approvals-expire"
	approvalProject(t, proj, v1alpha1.SyncApproval{Approvals: 1, Groups: []string{"release"}, Expiry: "10s"})
	dest, app := heldApp(t, name, proj)
	id := app.Status.OperationState.Approval.ID
	now := metav1.Now()
	forged := approval.Encode([]v1alpha1.SyncApprovalRecord{
		{User: "bob", Groups: []string{"ops"}, At: now, Operation: id},
		{User: "alice", Groups: []string{"release"}, At: now, Operation: id},
		{User: "carol", Groups: []string{"release"}, At: now, Operation: "another-operation"},
	})
	patch := client.MergeFrom(app.DeepCopy())
	app.Annotations = map[string]string{v1alpha1.SyncApprovalsAnnotation: forged}
	if err := apps.Patch(t.Context(), app, patch); err != nil {
		t.Fatal(err)
	}
	app = waitStatus(t, name, "expired", opDone(v1alpha1.OperationFailed))
	if got := app.Status.OperationState.Message; got != controller.MessageApprovalExpired {
		t.Errorf("expired sync's message %q, want %q", got, controller.MessageApprovalExpired)
	}
	noConfigMap(t, dest, "expired")
	poll(t, "the approvals dropped with the expired operation", func(ctx context.Context) (bool, error) {
		var got v1alpha1.Application
		if err := apps.Get(ctx, client.ObjectKeyFromObject(app), &got); err != nil {
			return false, err
		}
		_, kept := got.Annotations[v1alpha1.SyncApprovalsAnnotation]
		return got.Operation == nil && !kept, nil
	})
	ops := appops.Service{Client: apps}
	if _, err := ops.ApproveSync(t.Context(), client.ObjectKeyFromObject(app), approval.Approver{User: "carol", Groups: []string{"release"}}, anyone); !errors.Is(err, approval.ErrNotHeld) {
		t.Errorf("approving the expired sync: %v, want %v", err, approval.ErrNotHeld)
	}
}
