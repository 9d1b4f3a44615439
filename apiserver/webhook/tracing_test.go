package webhook

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appindex"
	"github.com/graphcd/graphcd/internal/tracing"
)

// traceRecorder notes the traceparent each refresh is asked in: what the
// API writes on the Application for the controller.
type traceRecorder struct {
	mu      sync.Mutex
	parents []string
}

func (r *traceRecorder) Refresh(ctx context.Context, _ types.NamespacedName, _ bool) (*v1alpha1.Application, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.parents = append(r.parents, tracing.Traceparent(ctx))
	return nil, nil
}

func TestPushRunsInASpan(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	t.Cleanup(tracing.Install(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))))
	c := pushCases[0]
	idx := appindex.New()
	matched := 0
	for _, a := range appsFor(c) {
		idx.Upsert(newApp(a.name, a.repoURL, a.target))
		if a.want {
			matched++
		}
	}
	if matched == 0 {
		t.Fatalf("case %s matches no app", c.provider)
	}
	rec := &traceRecorder{}
	h := New(Options{Apps: idx, Refresher: rec, Secrets: secretsFor(c.provider, c.secret)})
	if w := serve(h, delivery(t, c.provider, c.event, readFixture(t, c.fixture), c.secret)); w.Code != http.StatusOK {
		t.Fatalf("status %d (%s), want 200", w.Code, w.Body)
	}
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "webhook" {
		t.Fatalf("spans = %v, want one \"webhook\"", spans)
	}
	attrs := map[string]string{}
	for _, kv := range spans[0].Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	if attrs["graphcd.webhook.provider"] != c.provider || attrs["graphcd.webhook.matched"] != strconv.Itoa(matched) {
		t.Errorf("attributes = %v, want provider %s and %d matched", attrs, c.provider, matched)
	}
	// Each refresh is asked within the webhook's span.
	id := spans[0].SpanContext.SpanID().String()
	if len(rec.parents) != matched || slices.ContainsFunc(rec.parents, func(p string) bool { return !strings.Contains(p, id) }) {
		t.Errorf("refreshes' traceparents = %q, want %d naming span %s", rec.parents, matched, id)
	}
}
