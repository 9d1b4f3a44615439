package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/google/go-cmp/cmp"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/graphcd/graphcd/resolvers"
)

// postGraphQL posts a JSON body to /api/graphql.
func postGraphQL(t *testing.T, baseURL, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, baseURL+"/api/graphql", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	code, respBody, _ := do(t, req)
	return code, respBody
}

func TestGraphQL(t *testing.T) {
	ts, _ := newTestServer(t, Options{MaxBodyBytes: 4096})
	tests := []struct {
		name     string
		body     string
		wantCode int
		want     string // JSON
	}{
		{
			name:     "version",
			body:     `{"query":"{ version { version commit goVersion } }"}`,
			wantCode: http.StatusOK,
			want:     `{"data":{"version":{"version":"v1.2.3","commit":"abc123","goVersion":"go1.26.8"}}}`,
		},
		{
			name:     "unknown field",
			body:     `{"query":"{ nope }"}`,
			wantCode: http.StatusUnprocessableEntity,
			want: `{"data":null,"errors":[{"message":"Cannot query field \"nope\" on type \"Query\".",
				"locations":[{"line":1,"column":3}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}`,
		},
		{
			name:     "oversized body",
			body:     `{"query":"{ version { version } }","variables":{"pad":"` + strings.Repeat("x", 4096) + `"}}`,
			wantCode: http.StatusRequestEntityTooLarge,
			want:     `{"errors":[{"message":"request body larger than 4096 bytes","extensions":{"code":"BAD_USER_INPUT"}}],"data":null}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := postGraphQL(t, ts.URL, tt.body)
			if diff := cmp.Diff(code, tt.wantCode); diff != "" {
				t.Errorf("status (-got +want):\n%s\nbody: %s", diff, body)
			}
			if diff := cmp.Diff(decodeJSON(t, body), decodeJSON(t, tt.want)); diff != "" {
				t.Errorf("response (-got +want):\n%s", diff)
			}
		})
	}
}

func TestGraphQLGetAndIntrospection(t *testing.T) {
	ts, _ := newTestServer(t, Options{})
	q := url.QueryEscape(`{ __type(name: "Version") { fields { name } } }`)
	code, body, _ := get(t, ts.URL+"/api/graphql?query="+q)
	want := `{"data":{"__type":{"fields":[{"name":"version"},{"name":"commit"},{"name":"goVersion"}]}}}`
	if diff := cmp.Diff([]any{code, decodeJSON(t, body)}, []any{http.StatusOK, decodeJSON(t, want)}); diff != "" {
		t.Errorf("GET /api/graphql (-got +want):\n%s", diff)
	}
}

func TestGraphQLWebsocket(t *testing.T) {
	ts, _ := newTestServer(t, Options{})
	ctx := t.Context()
	conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http")+"/api/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer func() { _ = conn.CloseNow() }()

	type message struct {
		ID      string         `json:"id,omitempty"`
		Type    string         `json:"type"`
		Payload map[string]any `json:"payload,omitempty"`
	}
	send := func(m message) {
		t.Helper()
		if err := wsjson.Write(ctx, conn, m); err != nil {
			t.Fatalf("write %s: %v", m.Type, err)
		}
	}
	read := func() message {
		t.Helper()
		var m message
		if err := wsjson.Read(ctx, conn, &m); err != nil {
			t.Fatalf("read: %v", err)
		}
		return m
	}

	send(message{Type: "connection_init"})
	if got := read(); got.Type != "connection_ack" {
		t.Fatalf("after connection_init got %q, want connection_ack", got.Type)
	}
	send(message{ID: "1", Type: "subscribe", Payload: map[string]any{"query": "{ version { version } }"}})
	var got []message
	for m := read(); ; m = read() {
		if m.Type == "ka" || m.Type == "ping" {
			continue
		}
		got = append(got, m)
		if m.Type == "complete" {
			break
		}
	}
	want := []message{
		{ID: "1", Type: "next", Payload: map[string]any{"data": map[string]any{"version": map[string]any{"version": "v1.2.3"}}}},
		{ID: "1", Type: "complete"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("messages (-got +want):\n%s", diff)
	}
}

func TestPresentError(t *testing.T) {
	secret := errors.New("dial tcp 10.0.0.1:6379: secret detail")
	tests := []struct {
		name    string
		err     error
		want    *gqlerror.Error
		wantLog string
	}{
		{
			name: "safe error keeps message and code",
			err:  &resolvers.Error{Code: resolvers.CodeNotFound, Message: `application "guestbook" not found`, Err: secret},
			want: &gqlerror.Error{Message: `application "guestbook" not found`, Extensions: map[string]any{"code": "NOT_FOUND"}},
		},
		{
			name: "wrapped safe error",
			err:  fmt.Errorf("get app: %w", resolvers.Errorf(resolvers.CodeForbidden, "permission denied")),
			want: &gqlerror.Error{Message: "permission denied", Extensions: map[string]any{"code": "FORBIDDEN"}},
		},
		{
			name:    "other error becomes internal error",
			err:     fmt.Errorf("load app: %w", secret),
			want:    &gqlerror.Error{Message: "internal error", Extensions: map[string]any{"code": "INTERNAL", "requestId": "req-1"}},
			wantLog: "secret detail",
		},
		{
			name: "engine error passes",
			err:  gqlerror.Errorf("Cannot query field"),
			want: &gqlerror.Error{Message: "Cannot query field"},
		},
		{
			name: "panic becomes internal error",
			err:  recoverPanic(slog.New(slog.DiscardHandler))(context.Background(), "boom"),
			want: &gqlerror.Error{Message: "internal error", Extensions: map[string]any{"code": "INTERNAL", "requestId": "req-1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &syncBuffer{}
			log := slog.New(slog.NewTextHandler(logs, nil))
			ctx := context.WithValue(t.Context(), requestIDKey{}, "req-1")
			got := presentError(log)(ctx, tt.err)
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("presented (-got +want):\n%s", diff)
			}
			if !strings.Contains(logs.String(), tt.wantLog) {
				t.Errorf("log %q lacks %q", logs.String(), tt.wantLog)
			}
		})
	}
}

func TestRecoverPanicLogs(t *testing.T) {
	logs := &syncBuffer{}
	err := recoverPanic(slog.New(slog.NewTextHandler(logs, nil)))(t.Context(), "boom")
	if diff := cmp.Diff(err.Error(), "internal error"); diff != "" {
		t.Errorf("error (-got +want):\n%s", diff)
	}
	for _, want := range []string{"panicked", "boom", "stack="} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log %q lacks %q", logs.String(), want)
		}
	}
}
