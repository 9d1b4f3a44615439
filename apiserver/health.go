package apiserver

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
)

func healthz(w http.ResponseWriter, _ *http.Request) {
	writeText(w, http.StatusOK, "ok")
}

// readiness runs a ReadyFunc at most once per ttl, however many probes arrive.
type readiness struct {
	check   ReadyFunc
	ttl     time.Duration
	timeout time.Duration

	mu      sync.Mutex
	checked time.Time
	last    error
}

// get returns the cached result or runs the check. Concurrent callers wait
// for the one check in flight rather than starting their own.
func (r *readiness) get(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.checked.IsZero() && time.Since(r.checked) < r.ttl {
		return r.last
	}
	// The result is shared, so one impatient prober must not cancel it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.timeout)
	defer cancel()
	r.last = r.check(ctx)
	r.checked = time.Now()
	return r.last
}

func (r *readiness) handler(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if err := r.get(req.Context()); err != nil {
			log.DebugContext(req.Context(), "not ready", "reason", err.Error())
			writeText(w, http.StatusServiceUnavailable, "not ready: "+oneLine(err.Error()))
			return
		}
		writeText(w, http.StatusOK, "ok")
	})
}

func writeText(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body + "\n"))
}

// oneLine joins the lines of s so a reason always fits one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
