package tracing

import (
	"net/http"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/stats"
)

// GRPCClientHandler returns the stats handler that puts a client span
// around each call and sends its trace context, or nil when tracing is
// off. Health checks are left out.
func GRPCClientHandler() stats.Handler {
	tp := provider()
	if tp == nil {
		return nil
	}
	return otelgrpc.NewClientHandler(grpcOptions(tp)...)
}

// GRPCServerHandler returns the stats handler that continues a caller's
// trace in a server span around each call, or nil when tracing is off.
func GRPCServerHandler() stats.Handler {
	tp := provider()
	if tp == nil {
		return nil
	}
	return otelgrpc.NewServerHandler(grpcOptions(tp)...)
}

func grpcOptions(tp trace.TracerProvider) []otelgrpc.Option {
	return []otelgrpc.Option{
		otelgrpc.WithTracerProvider(tp),
		otelgrpc.WithPropagators(Propagator),
		// Metrics are graphcd's own (Prometheus), not OpenTelemetry's.
		otelgrpc.WithMeterProvider(noop.NewMeterProvider()),
		otelgrpc.WithFilter(func(info *stats.RPCTagInfo) bool {
			return !strings.HasPrefix(info.FullMethodName, "/grpc.health.")
		}),
	}
}

// WrapKubernetes wraps a Kubernetes client's transport (rest.Config's
// WrapTransport) so that each request made within a trace gets a client
// span named after its verb, and carries the trace context. Requests
// outside a trace (informers' lists and watches) start none. When tracing
// is off it returns rt itself.
func WrapKubernetes(rt http.RoundTripper) http.RoundTripper {
	tp := provider()
	if tp == nil {
		return rt
	}
	return otelhttp.NewTransport(rt,
		otelhttp.WithTracerProvider(tp),
		otelhttp.WithPropagators(Propagator),
		otelhttp.WithMeterProvider(noop.NewMeterProvider()),
		otelhttp.WithFilter(func(r *http.Request) bool {
			return trace.SpanContextFromContext(r.Context()).IsValid()
		}),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			return "kubernetes " + r.Method
		}),
	)
}
