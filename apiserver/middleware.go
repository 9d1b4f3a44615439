package apiserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"

	"github.com/felixge/httpsnoop"
	"go.opentelemetry.io/otel/propagation"

	"github.com/graphcd/graphcd/internal/tracing"
)

// requestIDHeader carries the request id in both directions: a proxy may set
// it, and every response reports it so users can quote it in bug reports.
const requestIDHeader = "X-Request-Id"

// requestID returns the id of the request ctx belongs to, or "".
func requestID(ctx context.Context) string { return tracing.RequestID(ctx) }

// handle registers h on mux under pattern, wrapped with a request id, a
// debug log line and metrics labelled with the route name.
func (s *Server) handle(mux *http.ServeMux, m *metrics, pattern, route string, h http.Handler) {
	h = m.instrument(route, h)
	mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := incomingRequestID(r.Header.Get(requestIDHeader))
		if id == "" {
			id = newRequestID()
		}
		w.Header().Set(requestIDHeader, id)
		ctx := tracing.WithRequestID(r.Context(), id)
		if tracing.Enabled() {
			// A caller's traceparent makes its trace ours.
			ctx = tracing.Propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
		}
		r = r.WithContext(ctx)
		// httpsnoop keeps Hijacker and Flusher, which websockets need.
		res := httpsnoop.CaptureMetrics(h, w, r)
		s.log.LogAttrs(ctx, slog.LevelDebug, "http request",
			slog.String("route", route),
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", res.Code),
			slog.Int64("bytes", res.Written),
			slog.Duration("duration", res.Duration),
			slog.String("request_id", id),
		)
	}))
}

// incomingRequestID accepts an id from a proxy only if it is short and
// plain, so it cannot inject into logs.
func incomingRequestID(id string) string {
	if len(id) == 0 || len(id) > 64 {
		return ""
	}
	for _, c := range id {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			return ""
		}
	}
	return id
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails.
	return hex.EncodeToString(b[:])
}
