package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"

	"github.com/graphcd/graphcd/internal/version"
)

var testBuild = version.Info{Version: "v1.2.3", Commit: "abc123", GoVersion: "go1.26.8"}

// newTestServer returns an httptest server for New(opts), with the test
// build information and a logger that writes to the returned buffer.
func newTestServer(t testing.TB, opts Options) (*httptest.Server, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if opts.API.Build == (version.Info{}) {
		opts.API.Build = testBuild
	}
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts, logs
}

// get performs a GET and returns the status code, body and headers.
func get(t *testing.T, url string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, req)
}

func do(t testing.TB, req *http.Request) (int, string, http.Header) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp.StatusCode, string(body), resp.Header
}

func TestHealthz(t *testing.T) {
	ts, _ := newTestServer(t, Options{})
	code, body, header := get(t, ts.URL+"/healthz")
	if diff := cmp.Diff([]any{code, body}, []any{http.StatusOK, "ok\n"}); diff != "" {
		t.Errorf("GET /healthz (-got +want):\n%s", diff)
	}
	if header.Get("X-Request-Id") == "" {
		t.Errorf("GET /healthz: no X-Request-Id header")
	}
}

func TestReadyz(t *testing.T) {
	tests := []struct {
		name     string
		check    ReadyFunc
		wantCode int
		wantBody string
	}{
		{
			name:     "ready",
			check:    func(context.Context) error { return nil },
			wantCode: http.StatusOK,
			wantBody: "ok\n",
		},
		{
			name: "not ready",
			check: func(context.Context) error {
				return errors.New("crd applications.graphcd.io not established:\nnot found")
			},
			wantCode: http.StatusServiceUnavailable,
			wantBody: "not ready: crd applications.graphcd.io not established: not found\n",
		},
		{
			name:     "no check means ready",
			wantCode: http.StatusOK,
			wantBody: "ok\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, _ := newTestServer(t, Options{Ready: tt.check})
			code, body, _ := get(t, ts.URL+"/readyz")
			if diff := cmp.Diff([]any{code, body}, []any{tt.wantCode, tt.wantBody}); diff != "" {
				t.Errorf("GET /readyz (-got +want):\n%s", diff)
			}
		})
	}
}

func TestReadyzCachesResult(t *testing.T) {
	var calls atomic.Int32
	check := func(context.Context) error { calls.Add(1); return nil }
	ts, _ := newTestServer(t, Options{Ready: check, ReadyCacheTTL: time.Hour})
	for range 5 {
		get(t, ts.URL+"/readyz")
	}
	if diff := cmp.Diff(calls.Load(), int32(1)); diff != "" {
		t.Errorf("checks for 5 probes (-got +want):\n%s", diff)
	}
}

func TestMetrics(t *testing.T) {
	ts, _ := newTestServer(t, Options{})
	get(t, ts.URL+"/healthz")
	get(t, ts.URL+"/no/such/page")
	_, body, _ := get(t, ts.URL+"/metrics")
	for _, want := range []string{
		`graphcd_http_requests_total{code="200",method="get",route="healthz"} 1`,
		`graphcd_http_requests_total{code="200",method="get",route="console"} 1`,
		`graphcd_http_request_duration_seconds_count{code="200",route="healthz"} 1`,
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /metrics lacks %q", want)
		}
	}
}

func TestNewRejectsBadListen(t *testing.T) {
	_, err := New(Options{Listen: "bad::"})
	if err == nil || !strings.Contains(err.Error(), `"bad::"`) {
		t.Errorf("New(Listen: bad::) error = %v, want one naming the address", err)
	}
}

func TestNewRejectsBadLimits(t *testing.T) {
	_, err := New(Options{MaxSelections: -1, AnonymousMaxTokens: -5})
	want := "GraphQL selection limit must be positive, got -1\nanonymous GraphQL token limit must be positive, got -5"
	if err == nil || err.Error() != want {
		t.Errorf("New with negative limits: error %v, want %q", err, want)
	}
}

func TestConsole(t *testing.T) {
	ts, _ := newTestServer(t, Options{})
	tests := []struct {
		path     string
		wantCode int
		wantType string
	}{
		{path: "/", wantCode: http.StatusOK, wantType: "text/html; charset=utf-8"},
		{path: "/applications", wantCode: http.StatusOK, wantType: "text/html; charset=utf-8"},
		{path: "/api/nothing", wantCode: http.StatusNotFound, wantType: "text/plain; charset=utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			code, body, header := get(t, ts.URL+tt.path)
			if diff := cmp.Diff([]any{code, header.Get("Content-Type")}, []any{tt.wantCode, tt.wantType}); diff != "" {
				t.Errorf("GET %s (-got +want):\n%s", tt.path, diff)
			}
			// The built console or, without Node at build time, the page
			// saying how to build it: both are graphcd's.
			if tt.wantCode == http.StatusOK && !strings.Contains(body, "<title>graphcd</title>") {
				t.Errorf("GET %s: body is not the console page: %q", tt.path, body)
			}
		})
	}
}

// runServer runs a server on a loopback port until stop, which returns
// what Run did.
func runServer(t *testing.T) (s *Server, stop func() error) {
	t.Helper()
	s, err := New(Options{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(t.Context()); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	return s, func() error {
		cancel()
		return <-done
	}
}

func TestRunServesUntilCancelled(t *testing.T) {
	s, stop := runServer(t)
	code, _, _ := get(t, "http://"+s.Addr().String()+"/healthz")
	if code != http.StatusOK {
		t.Errorf("GET /healthz = %d, want 200", code)
	}
	if err := stop(); err != nil {
		t.Errorf("Run after cancel = %v, want nil", err)
	}
	if resp, err := http.Get("http://" + s.Addr().String() + "/healthz"); err == nil {
		_ = resp.Body.Close()
		t.Errorf("server still answers after shutdown")
	}
}

// TestRunClosesSockets checks that shutting down ends websockets, which
// outlive the HTTP handler that accepted them.
func TestRunClosesSockets(t *testing.T) {
	s, stop := runServer(t)
	conn, status := dialGraphQL(t, "http://"+s.Addr().String(), "")
	if conn == nil {
		t.Fatalf("dial: HTTP %d", status)
	}
	if err := conn.WriteJSON(map[string]any{"type": "connection_init"}); err != nil {
		t.Fatal(err)
	}
	var ack map[string]any
	if err := conn.ReadJSON(&ack); err != nil || ack["type"] != "connection_ack" {
		t.Fatalf("after connection_init: %v, %v", ack, err)
	}
	if err := stop(); err != nil {
		t.Errorf("Run after cancel = %v, want nil", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute)) // a hang fails, not the timing
	for {
		_, _, err := conn.ReadMessage()
		if err == nil {
			continue // a keep-alive
		}
		if _, ok := errors.AsType[*websocket.CloseError](err); !ok {
			t.Fatalf("read = %v, want the server to close the socket", err)
		}
		return
	}
}

func TestListenTwiceFails(t *testing.T) {
	a, err := New(Options{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Listen(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.ln.Close() })
	b, err := New(Options{Listen: a.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Listen(t.Context()); err == nil || !strings.Contains(err.Error(), a.Addr().String()) {
		t.Errorf("Listen on a busy port = %v, want an error naming %s", err, a.Addr())
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// decodeJSON unmarshals body into a generic value for comparison.
func decodeJSON(t *testing.T, body string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, body)
	}
	return v
}
