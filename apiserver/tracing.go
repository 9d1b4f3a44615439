package apiserver

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/graphcd/graphcd/internal/tracing"
)

var tracer = tracing.NewTracer("github.com/graphcd/graphcd/apiserver")

// traceOperation runs a query or mutation in a span named after it
// ("mutation syncApplication"), with its type and name as attributes.
// The variables are left out: they may hold secrets (a repository's
// password, a cluster's token). A subscription gets none: it lives as
// long as its socket.
func traceOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if !tracing.Enabled() || oc.Operation == nil || oc.Operation.Operation == ast.Subscription {
		return next(ctx)
	}
	typ := string(oc.Operation.Operation)
	name := typ
	if oc.OperationName != "" {
		name += " " + oc.OperationName
	}
	ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		attribute.String("graphql.operation.type", typ),
		attribute.String("graphql.operation.name", oc.OperationName),
	))
	if id := requestID(ctx); id != "" {
		span.SetAttributes(attribute.String("graphcd.request_id", id))
	}
	responses := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		resp := responses(ctx)
		if resp != nil && len(resp.Errors) > 0 {
			span.SetStatus(codes.Error, "the response has errors")
			span.SetAttributes(attribute.Int("graphql.errors", len(resp.Errors)))
		}
		span.End()
		return resp
	}
}
