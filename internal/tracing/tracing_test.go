package tracing

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/graphcd/graphcd/internal/testenv/otlpsink"
)

// record installs a tracer provider that samples as sampler and keeps its
// spans in memory, until the test ends.
func record(t *testing.T, sampler sdktrace.Sampler) *tracetest.InMemoryExporter {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sampler))
	t.Cleanup(Install(tp))
	return exp
}

func TestStartWithoutAddressIsOff(t *testing.T) {
	shutdown, err := Start(t.Context(), Options{SamplingRatio: 5})
	if err != nil {
		t.Fatal(err)
	}
	if Enabled() {
		t.Error("Enabled() = true without an address")
	}
	ctx, span := NewTracer("test").Start(t.Context(), "x")
	if span.IsRecording() || ctx != t.Context() {
		t.Error("a span started while tracing is off records or changes the context")
	}
	span.End()
	if err := shutdown(t.Context()); err != nil {
		t.Error(err)
	}
}

func TestStartRejectsBadRatio(t *testing.T) {
	_, err := Start(t.Context(), Options{Address: "127.0.0.1:4317", SamplingRatio: 1.5})
	if err == nil || !strings.Contains(err.Error(), "between 0 and 1") {
		t.Fatalf("err = %v, want a sampling ratio error", err)
	}
	if Enabled() {
		t.Error("tracing is on after a failed Start")
	}
}

func TestTraceparentCarriesTheTrace(t *testing.T) {
	exp := record(t, Sampler(1))
	tr := NewTracer("test")
	ctx, parent := tr.Start(t.Context(), "mutation")
	tp := Traceparent(ctx)
	parent.End()
	if tp == "" {
		t.Fatal("Traceparent of a sampled span is empty")
	}
	// Another process (the controller) reads it from the annotation.
	_, child := tr.Start(WithTraceparent(context.Background(), tp), "reconcile")
	child.End()
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("got %d spans, want 2", len(spans))
	}
	m, r := spans[0], spans[1]
	if r.Parent.SpanID() != m.SpanContext.SpanID() || r.SpanContext.TraceID() != m.SpanContext.TraceID() || !r.Parent.IsRemote() {
		t.Errorf("reconcile's parent = %v in trace %v, want the mutation %v in trace %v",
			r.Parent.SpanID(), r.SpanContext.TraceID(), m.SpanContext.SpanID(), m.SpanContext.TraceID())
	}
}

func TestTraceparentIgnoresWhatIsNotATrace(t *testing.T) {
	record(t, Sampler(1))
	if got := Traceparent(t.Context()); got != "" {
		t.Errorf("Traceparent without a span = %q, want \"\"", got)
	}
	for _, bad := range []string{"", "garbage", "00-00000000000000000000000000000000-0000000000000000-01"} {
		ctx := WithTraceparent(t.Context(), bad)
		if trace.SpanContextFromContext(ctx).IsValid() {
			t.Errorf("WithTraceparent(%q) gave a valid span context", bad)
		}
	}
}

func TestSamplerFollowsTheParent(t *testing.T) {
	exp := record(t, Sampler(0))
	tr := NewTracer("test")
	_, root := tr.Start(t.Context(), "root")
	root.End()
	if got := len(exp.GetSpans()); got != 0 {
		t.Fatalf("ratio 0 sampled %d root spans", got)
	}
	sampled := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	_, child := tr.Start(WithTraceparent(t.Context(), sampled), "child")
	child.End()
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("spans = %v, want the child of the sampled remote parent", spans)
	}
}

func TestLogHandlerAddsIDs(t *testing.T) {
	record(t, Sampler(1))
	var buf bytes.Buffer
	log := slog.New(NewLogHandler(slog.NewJSONHandler(&buf, nil))).With("role", "test")
	ctx, span := NewTracer("test").Start(WithRequestID(t.Context(), "req-1"), "op")
	defer span.End()
	log.InfoContext(ctx, "traced")
	log.InfoContext(ctx, "named", "request_id", "own")
	log.Info("plain")

	var lines []map[string]any
	for l := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		delete(m, "time")
		lines = append(lines, m)
	}
	sc := span.SpanContext()
	want := []map[string]any{
		{"level": "INFO", "msg": "traced", "role": "test", "trace_id": sc.TraceID().String(), "span_id": sc.SpanID().String(), "request_id": "req-1"},
		{"level": "INFO", "msg": "named", "role": "test", "trace_id": sc.TraceID().String(), "span_id": sc.SpanID().String(), "request_id": "own"},
		{"level": "INFO", "msg": "plain", "role": "test"},
	}
	if diff := cmp.Diff(lines, want); diff != "" {
		t.Errorf("log lines (-got +want):\n%s", diff)
	}
}

func TestParsePairs(t *testing.T) {
	got, err := ParsePairs(" authorization=Bearer x=y , tenant=a,", "=")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, map[string]string{"authorization": "Bearer x=y", "tenant": "a"}); diff != "" {
		t.Errorf("headers (-got +want):\n%s", diff)
	}
	got, err = ParsePairs("deployment.environment:prod,url=https://x:1", ":=")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, map[string]string{"deployment.environment": "prod", "url": "https://x:1"}); diff != "" {
		t.Errorf("attributes (-got +want):\n%s", diff)
	}
	_, err = ParsePairs("authorization:Bearer s3cret", "=")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("err = %v, want an error that does not repeat the value", err)
	}
}

func TestWrapKubernetesTracesRequestsInATrace(t *testing.T) {
	exp := record(t, Sampler(1))
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Traceparent"))
	}))
	defer srv.Close()
	client := &http.Client{Transport: WrapKubernetes(http.DefaultTransport)}
	get := func(ctx context.Context) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/namespaces", nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
	}
	get(t.Context()) // an informer's list: no trace, no span
	ctx, parent := NewTracer("test").Start(t.Context(), "sync")
	get(ctx)
	parent.End()

	spans := exp.GetSpans()
	if len(spans) != 2 || spans[0].Name != "kubernetes GET" {
		t.Fatalf("spans = %v, want the request's and its parent's", spans)
	}
	if spans[0].Parent.SpanID() != spans[1].SpanContext.SpanID() {
		t.Error("the request's span is not a child of the span it was made in")
	}
	if len(got) != 2 || got[0] != "" || !strings.Contains(got[1], spans[0].SpanContext.TraceID().String()) {
		t.Errorf("traceparent headers = %q, want none, then the trace's", got)
	}
}

// Start sends over OTLP/gRPC: the Collector's own receiver gets the span,
// with the service's name, once shutdown has flushed.
func TestStartExportsToACollector(t *testing.T) {
	sink, err := otlpsink.Start(t.Context(), otlpsink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sink.Close(context.WithoutCancel(t.Context())) }()
	shutdown, err := Start(t.Context(), Options{
		Address: sink.Addr, Insecure: true, SamplingRatio: 1, Service: "graphcd-test", Version: "v0.0.1",
		Headers: map[string]string{"x-tenant": "a"}, Attributes: map[string]string{"deployment.environment": "test"},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, span := NewTracer("test").Start(t.Context(), "work")
	span.End()
	if err := shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if Enabled() {
		t.Error("tracing is still on after shutdown")
	}
	spans := sink.Spans()
	if len(spans) != 1 || spans[0].Name != "work" || spans[0].Service != "graphcd-test" {
		t.Fatalf("received %+v, want one span \"work\" of graphcd-test", spans)
	}
}
