// Package tracing sets up OpenTelemetry tracing for a graphcd process:
// an OTLP/gRPC exporter, W3C trace-context and baggage propagation and a
// parent-based ratio sampler. Without an address nothing is set up, and the
// global tracer stays OpenTelemetry's no-op one.
package tracing

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// DefaultSamplingRatio samples every trace a process starts, as Argo CD
// does (it has no sampling setting); a span whose parent was sampled is
// always sampled.
const DefaultSamplingRatio = 1.0

// Options configure tracing for one process.
type Options struct {
	// Address is the OTLP/gRPC collector's host:port; empty turns tracing off.
	Address string
	// Insecure sends without TLS.
	Insecure bool
	// SamplingRatio is the share (0 to 1) of the traces started here that
	// are sampled.
	SamplingRatio float64
	// Headers are sent with every export (say, an authorization header of
	// a hosted collector). Their values never appear in logs or errors.
	Headers map[string]string
	// Attributes are added to the resource of every span.
	Attributes map[string]string
	// Service is the service.name of the spans (graphcd-server, ...).
	Service string
	// Version is the service.version.
	Version string
}

// current is the tracer provider spans go to; nil while tracing is off.
var current atomic.Pointer[installed]

type installed struct{ tp trace.TracerProvider }

// Enabled reports whether this process exports spans: code that would do
// work only to describe a span asks first.
func Enabled() bool { return current.Load() != nil }

// Start sets up tracing as o says and returns the function that flushes
// the spans not yet exported and stops; call it before the process exits.
// With no address it sets nothing up and the returned function does
// nothing.
func Start(ctx context.Context, o Options) (shutdown func(context.Context) error, err error) {
	noop := func(context.Context) error { return nil }
	if o.Address == "" {
		return noop, nil
	}
	if o.SamplingRatio < 0 || o.SamplingRatio > 1 {
		return nil, fmt.Errorf("sampling ratio must be between 0 and 1, got %g", o.SamplingRatio)
	}
	exp, err := otlptracegrpc.New(ctx, exporterOptions(o)...)
	if err != nil {
		return nil, fmt.Errorf("OTLP exporter for %s: %w", o.Address, err)
	}
	attrs := []attribute.KeyValue{
		attribute.String("service.name", o.Service),
		attribute.String("service.version", o.Version),
	}
	for k, v := range o.Attributes {
		attrs = append(attrs, attribute.String(k, v))
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attrs...)),
		sdktrace.WithSampler(Sampler(o.SamplingRatio)),
	)
	uninstall := Install(tp)
	return func(ctx context.Context) error {
		uninstall()
		return tp.Shutdown(ctx)
	}, nil
}

func exporterOptions(o Options) []otlptracegrpc.Option {
	opts := []otlptracegrpc.Option{
		otlptracegrpc.WithEndpoint(o.Address),
		// The SDK's own retry, bounded: spans are dropped rather than
		// held without end when the collector is away.
		otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{
			Enabled: true, InitialInterval: time.Second, MaxInterval: 5 * time.Second, MaxElapsedTime: 30 * time.Second,
		}),
	}
	if o.Insecure {
		opts = append(opts, otlptracegrpc.WithInsecure())
	}
	if len(o.Headers) > 0 {
		opts = append(opts, otlptracegrpc.WithHeaders(o.Headers))
	}
	return opts
}

// Sampler samples a share ratio of the traces that start here, and every
// span whose parent (local or from a traceparent received) was sampled.
func Sampler(ratio float64) sdktrace.Sampler {
	return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))
}

// Install makes tp the process's tracer provider, with W3C trace-context
// and baggage propagation, until the returned function is called. Tests
// install one with an in-memory exporter.
func Install(tp trace.TracerProvider) (uninstall func()) {
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(Propagator)
	in := &installed{tp: tp}
	current.Store(in)
	return func() { current.CompareAndSwap(in, nil) }
}

// Propagator carries W3C trace context and baggage.
var Propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// provider returns the installed tracer provider, or nil.
func provider() trace.TracerProvider {
	if in := current.Load(); in != nil {
		return in.tp
	}
	return nil
}

// A Tracer starts the spans of one graphcd package. Unlike a tracer of
// OpenTelemetry's global provider, it follows the provider installed at
// the time of each span, and costs one atomic load while tracing is off.
type Tracer struct {
	name  string
	bound atomic.Pointer[boundTracer]
}

type boundTracer struct {
	in *installed
	t  trace.Tracer
}

// NewTracer returns the tracer of a graphcd package, named after its
// import path.
func NewTracer(pkg string) *Tracer { return &Tracer{name: pkg} }

// noSpan is what Start returns while tracing is off; ending it does
// nothing.
var noSpan = trace.SpanFromContext(context.Background())

// Start starts a span as trace.Tracer's Start does. While tracing is off
// it returns ctx unchanged and a span that records nothing.
func (t *Tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	in := current.Load()
	if in == nil {
		return ctx, noSpan
	}
	b := t.bound.Load()
	if b == nil || b.in != in {
		b = &boundTracer{in: in, t: in.tp.Tracer(t.name)}
		t.bound.Store(b)
	}
	return b.t.Start(ctx, name, opts...)
}

// ParsePairs parses pairs separated by commas, each a key, a separator
// (the first of seps in it) and a value: "k=v,k2=v2" with seps "=" (the
// form of --otlp-headers and OTEL_EXPORTER_OTLP_HEADERS), or Argo CD's
// "k:v" form of --otlp-attrs with seps ":=".
func ParsePairs(s, seps string) (map[string]string, error) {
	out := map[string]string{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		i := strings.IndexAny(part, seps)
		if i <= 0 {
			// Not the pair itself: it may be a secret header value.
			return nil, fmt.Errorf("want key%cvalue pairs separated by commas", seps[0])
		}
		out[strings.TrimSpace(part[:i])] = strings.TrimSpace(part[i+1:])
	}
	return out, nil
}
