package controller

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/tracing"
)

var tracer = tracing.NewTracer("github.com/graphcd/graphcd/controller")

// trace starts the reconcile's span once the app is loaded. A reconcile
// that serves an operation or a refresh requested through the API joins
// the request's trace: the API left its traceparent on the app
// (tracing.TraceparentAnnotation), and clearOperation or clearRefresh
// removes it with the request. Without tracing it does nothing.
func (p *pass) trace(ctx context.Context) (bool, error) {
	if !tracing.Enabled() {
		return false, nil
	}
	if tp := p.app.Annotations[tracing.TraceparentAnnotation]; tp != "" && (p.app.Operation != nil || refreshMode(&p.app) != "") {
		ctx = tracing.WithTraceparent(ctx, tp)
	}
	p.ctx, p.span = tracer.Start(ctx, "reconcile", trace.WithAttributes(appAttrs(&p.app)...))
	return false, nil
}

// context is the context the steps run in: the reconcile's span's, once
// trace started it.
func (p *pass) context(ctx context.Context) context.Context {
	if p.ctx != nil {
		return p.ctx
	}
	return ctx
}

// endSpan ends the reconcile's span, marked failed by err.
func (p *pass) endSpan(err error) {
	if p.span == nil {
		return
	}
	if err != nil {
		p.span.SetStatus(codes.Error, err.Error())
	}
	p.span.End()
}

// startSyncSpan starts the span of one step of the sync st.
func startSyncSpan(ctx context.Context, app *v1alpha1.Application, st *v1alpha1.OperationState) (context.Context, trace.Span) {
	if !tracing.Enabled() {
		return ctx, trace.SpanFromContext(ctx)
	}
	attrs := appAttrs(app)
	if s := st.Operation.Sync; s != nil {
		attrs = append(attrs, attribute.String("graphcd.sync.revision", s.Revision), attribute.Bool("graphcd.sync.dry_run", s.DryRun))
	}
	attrs = append(attrs, attribute.Bool("graphcd.operation.automated", st.Operation.InitiatedBy.Automated))
	return tracer.Start(ctx, "sync", trace.WithAttributes(attrs...))
}

// endSyncSpan records where the step left the operation and ends span.
func endSyncSpan(span trace.Span, st *v1alpha1.OperationState) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String("graphcd.operation.phase", string(st.Phase)))
	if st.Phase == v1alpha1.OperationFailed || st.Phase == v1alpha1.OperationError {
		span.SetStatus(codes.Error, st.Message)
	}
	span.End()
}

func appAttrs(app *v1alpha1.Application) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("graphcd.app.namespace", app.Namespace),
		attribute.String("graphcd.app.name", app.Name),
		attribute.String("graphcd.app.project", app.Spec.Project),
	}
}
