package appops

import (
	"context"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/tracing"
)

// carryTrace writes the traceparent of the request that changes app into
// its annotation (tracing.TraceparentAnnotation), so the controller's
// reconciles that serve the change join the request's trace. A request
// outside a sampled trace removes the one an earlier request left.
func carryTrace(ctx context.Context, app *v1alpha1.Application) {
	if !tracing.Enabled() {
		return
	}
	tp := tracing.Traceparent(ctx)
	if tp == "" {
		delete(app.Annotations, tracing.TraceparentAnnotation)
		return
	}
	if app.Annotations == nil {
		app.Annotations = map[string]string{}
	}
	app.Annotations[tracing.TraceparentAnnotation] = tp
}
