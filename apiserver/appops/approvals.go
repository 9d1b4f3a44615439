package appops

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/approval"
)

// ApproveSync records a's approval of the sync the app at key holds (see
// approval.Add; its errors end ApproveSync without writing), after
// mayApprove judged the app as read for this very write. The approvals
// go into v1alpha1.SyncApprovalsAnnotation, written with the app's
// resourceVersion, where the controller counts them. Approving twice
// writes nothing new.
func (s Service) ApproveSync(ctx context.Context, key types.NamespacedName, a approval.Approver, mayApprove func(*v1alpha1.Application) error) (*v1alpha1.Application, error) {
	return s.update(ctx, key, func(cur *v1alpha1.Application) error {
		if err := mayApprove(cur); err != nil {
			return err
		}
		// Approvals that cannot be read count for nothing (the
		// controller reads them the same way): start again.
		records, _ := approval.Parse(cur.Annotations[v1alpha1.SyncApprovalsAnnotation])
		next, _, err := approval.Add(records, cur.Status.OperationState, a, time.Now())
		if err != nil {
			return err
		}
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		cur.Annotations[v1alpha1.SyncApprovalsAnnotation] = approval.Encode(next)
		return nil
	})
}

// keptApprovals is an app's approvals annotation, to give back after an
// edit: only ApproveSync records approvals, so no edit of an application
// (a create, an upsert, a patch, a new spec) can forge one.
type keptApprovals struct {
	value string
	ok    bool
}

// approvalsOf keeps app's approvals annotation; app may be nil (none).
func approvalsOf(app *v1alpha1.Application) keptApprovals {
	if app == nil {
		return keptApprovals{}
	}
	v, ok := app.Annotations[v1alpha1.SyncApprovalsAnnotation]
	return keptApprovals{value: v, ok: ok}
}

// restore puts the kept annotation on app, or removes app's when none
// was kept.
func (k keptApprovals) restore(app *v1alpha1.Application) {
	if !k.ok {
		delete(app.Annotations, v1alpha1.SyncApprovalsAnnotation)
		return
	}
	if app.Annotations == nil {
		app.Annotations = map[string]string{}
	}
	app.Annotations[v1alpha1.SyncApprovalsAnnotation] = k.value
}
