package inproc

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/internal/tracing"
	"github.com/graphcd/graphcd/reposerver"
)

var tracer = tracing.NewTracer("github.com/graphcd/graphcd/reposerver/inproc")

// startRenderSpan starts the span of one GenerateManifests: the source's
// repository (credentials redacted), path, chart and target revision.
func startRenderSpan(ctx context.Context, req reposerver.ManifestRequest) (context.Context, trace.Span) {
	if !tracing.Enabled() {
		return ctx, trace.SpanFromContext(ctx)
	}
	return tracer.Start(ctx, "render", trace.WithAttributes(
		attribute.String("graphcd.repo.url", repourl.Redact(req.Repo.URL)),
		attribute.String("graphcd.source.path", req.Source.Path),
		attribute.String("graphcd.source.chart", req.Source.Chart),
		attribute.String("graphcd.source.target_revision", req.Source.TargetRevision),
		attribute.String("graphcd.app.name", req.AppName),
	))
}

// renderRevision records the revision the target revision resolved to.
func renderRevision(span trace.Span, revision string) {
	if span.IsRecording() {
		span.SetAttributes(attribute.String("graphcd.render.revision", revision))
	}
}

// renderFrom records where the manifests came from: "cache", "render",
// or "shared" (an identical render in progress).
func renderFrom(span trace.Span, from string) {
	if span.IsRecording() {
		span.SetAttributes(attribute.String("graphcd.render.from", from))
	}
}

// endRenderSpan ends span, marked failed by err. The error's text is
// what the API shows users too: it carries no credentials.
func endRenderSpan(span trace.Span, err error) {
	if !span.IsRecording() {
		return
	}
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
