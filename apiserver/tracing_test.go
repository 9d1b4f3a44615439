package apiserver

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/graphcd/graphcd/internal/tracing"
)

func TestGraphQLOperationSpan(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	t.Cleanup(tracing.Install(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))))
	ts, _ := newTestServer(t, Options{})

	// The caller's trace: the operation's span is its child.
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	body := `{"query":"query Build($v: Boolean!) { version @include(if: $v) { version } }","operationName":"Build","variables":{"v":true}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.URL+"/api/graphql", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Traceparent", parent)
	req.Header.Set(requestIDHeader, "req-7")
	if code, body, _ := do(t, req); code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}

	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("got %d spans, want 1: %v", len(spans), spans)
	}
	s := spans[0]
	if s.Name != "query Build" {
		t.Errorf("name = %q, want %q", s.Name, "query Build")
	}
	if s.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || s.Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("span in trace %s under %s, want the caller's", s.SpanContext.TraceID(), s.Parent.SpanID())
	}
	got := map[string]string{}
	for _, kv := range s.Attributes {
		got[string(kv.Key)] = kv.Value.String()
	}
	// Exactly these: no variables (they may hold secrets).
	want := map[string]string{"graphql.operation.type": "query", "graphql.operation.name": "Build", "graphcd.request_id": "req-7"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("attributes (-got +want):\n%s", diff)
	}
}
