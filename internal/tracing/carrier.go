package tracing

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TraceparentAnnotation carries the W3C traceparent of the request that
// wrote an Application's operation (a sync mutation), so that the
// controller's reconciles of that operation join its trace. The API
// writes it with the operation; the controller removes it with the
// finished operation.
const TraceparentAnnotation = "graphcd.io/traceparent"

// Traceparent returns the W3C traceparent of the span in ctx, or "" when
// there is no sampled span (or tracing is off): only a trace that is
// exported is worth carrying.
func Traceparent(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !Enabled() || !sc.IsValid() || !sc.IsSampled() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}

// WithTraceparent returns ctx with the remote span traceparent names as
// its parent, or ctx unchanged when tracing is off, ctx already has a
// span, or traceparent is empty or malformed.
func WithTraceparent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" || !Enabled() || trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
}
