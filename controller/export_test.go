package controller

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// StatusWrites exposes a Reconciler's queue of status writes to the
// package's external tests.
type StatusWrites struct{ w *statusWrites }

func StatusWritesOf(r *Reconciler) StatusWrites { return StatusWrites{r.writes} }

func (s StatusWrites) Start(ctx context.Context) error { return s.w.Start(ctx) }

func (s StatusWrites) Enqueue(app *v1alpha1.Application, status *v1alpha1.ApplicationStatus) bool {
	return s.w.enqueue(app, status, nil, metav1.Now())
}

func (s StatusWrites) Flush(ctx context.Context, key types.NamespacedName) error {
	return s.w.flush(ctx, key)
}

// WriteStatus writes status into app as a reconcile at now does.
func WriteStatus(ctx context.Context, r *Reconciler, app *v1alpha1.Application, status *v1alpha1.ApplicationStatus, now metav1.Time) error {
	return r.writeStatus(ctx, app, status, now)
}
