package apiserver

import (
	"context"
	"crypto/sha256"
	"encoding/json"
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

	"github.com/graphcd/graphcd/internal/tracing"
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

func TestGraphQLIntrospection(t *testing.T) {
	q := jsonQuery(`{ __type(name: "Version") { fields { name } } }`)
	ts, _ := newTestServer(t, Options{})
	code, body := postGraphQL(t, ts.URL, q)
	want := `{"data":{"__type":{"fields":[{"name":"version"},{"name":"commit"},{"name":"goVersion"}]}}}`
	if diff := cmp.Diff([]any{code, decodeJSON(t, body)}, []any{http.StatusOK, decodeJSON(t, want)}); diff != "" {
		t.Errorf("introspection (-got +want):\n%s", diff)
	}
	off, _ := newTestServer(t, Options{DisableIntrospection: true})
	if _, body := postGraphQL(t, off.URL, q); !strings.Contains(body, `introspection is disabled on this server","extensions":{"code":"FORBIDDEN"}`) {
		t.Errorf("with introspection off: %s", body)
	}
}

// TestGraphQLLimits checks that hostile requests are refused by a limit,
// with a clear code, before any resolver runs.
func TestGraphQLLimits(t *testing.T) {
	ts, _ := newTestServer(t, Options{MaxDepth: 4, MaxComplexity: 100, MaxTokens: 500})
	deep := "{ applications { edges { node { spec { source { helm { parameters { name } } } } } } } }"
	wide := "{ " + strings.Repeat("version { version } ", 150) + "}"
	aliases := "{ "
	for i := range 60 {
		aliases += fmt.Sprintf("v%d: version { version } ", i)
	}
	aliases += "}"
	tests := []struct {
		name     string
		body     string
		wantCode int    // 0: any
		want     string // substring of the body
	}{
		{"too deep", jsonQuery(deep), 0, `"code":"BAD_USER_INPUT"`},
		{"too many tokens", jsonQuery(wide), http.StatusUnprocessableEntity, "token limit"},
		{"too complex", jsonQuery(aliases), 0, "COMPLEXITY_LIMIT_EXCEEDED"},
		{"page size counts", jsonQuery("{ applications(first: 150) { nodes { name namespace } } }"), 0, "COMPLEXITY_LIMIT_EXCEEDED"},
		{"small page passes", jsonQuery("{ applications(first: 10) { nodes { name namespace } } }"), http.StatusOK, `"nodes":[]`},
		{"no suggestions", jsonQuery("{ versio { version } }"), http.StatusUnprocessableEntity, `Cannot query field \"versio\" on type \"Query\".","`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := postGraphQL(t, ts.URL, tt.body)
			if (tt.wantCode != 0 && code != tt.wantCode) || !strings.Contains(body, tt.want) || (tt.wantCode != http.StatusOK && strings.Contains(body, `"data":{`)) {
				t.Errorf("got HTTP %d %s\nwant HTTP %d with %s", code, body, tt.wantCode, tt.want)
			}
		})
	}
}

// TestGraphQLOnlyJSONPosts checks that queries cannot arrive by GET, form
// or text/plain bodies (which browsers send cross-site without asking).
func TestGraphQLOnlyJSONPosts(t *testing.T) {
	ts, _ := newTestServer(t, Options{})
	q := url.QueryEscape("{ version { version } }")
	if code, body, _ := get(t, ts.URL+"/api/graphql?query="+q); code == http.StatusOK || strings.Contains(body, "v1.2.3") {
		t.Errorf("GET answered: HTTP %d %s", code, body)
	}
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.URL+"/api/graphql", strings.NewReader(jsonQuery("{ version { version } }")))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", ct)
		if code, body, _ := do(t, req); code == http.StatusOK || strings.Contains(body, "v1.2.3") {
			t.Errorf("POST %s answered: HTTP %d %s", ct, code, body)
		}
	}
}

func TestGraphQLPersistedQueries(t *testing.T) {
	ts, _ := newTestServer(t, Options{})
	const q = "{ version { version } }"
	sum := sha256.Sum256([]byte(q))
	ext := fmt.Sprintf(`"extensions":{"persistedQuery":{"version":1,"sha256Hash":"%x"}}`, sum)
	// Unknown hash: the client is told to send the query.
	if _, body := postGraphQL(t, ts.URL, "{"+ext+"}"); !strings.Contains(body, "PERSISTED_QUERY_NOT_FOUND") {
		t.Fatalf("unknown hash: %s", body)
	}
	if _, body := postGraphQL(t, ts.URL, `{"query":"`+q+`",`+ext+"}"); !strings.Contains(body, "v1.2.3") {
		t.Fatalf("register: %s", body)
	}
	if _, body := postGraphQL(t, ts.URL, "{"+ext+"}"); !strings.Contains(body, "v1.2.3") {
		t.Errorf("by hash: %s", body)
	}
}

// jsonQuery returns a JSON request body for q.
func jsonQuery(q string) string {
	b, _ := json.Marshal(map[string]string{"query": q})
	return string(b)
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
	// Larger than the socket's read buffer, which it is read through.
	query := "{ version {" + strings.Repeat(" ", 3*websocketReadBuffer) + "version } }"
	send(message{ID: "1", Type: "subscribe", Payload: map[string]any{"query": query}})
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
			ctx := tracing.WithRequestID(t.Context(), "req-1")
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

// TestJSONPOST checks the transport's answers for bodies that are not
// GraphQL requests, and for answers with both data and errors.
func TestJSONPOST(t *testing.T) {
	ts, _ := newTestServer(t, Options{})
	tests := []struct {
		name     string
		body     string
		wantCode int
		want     string // JSON
	}{
		{"not JSON", `{"query": "{ version`, http.StatusBadRequest,
			`{"errors":[{"message":"request body is not a GraphQL JSON request: unexpected EOF"}],"data":null}`},
		{"variables of the wrong type", `{"query":"{ version { version } }","variables":[1]}`, http.StatusBadRequest,
			`{"errors":[{"message":"request body is not a GraphQL JSON request: json: cannot unmarshal array into Go struct field RawParams.variables of type map[string]interface {}"}],"data":null}`},
		{"data and errors", `{"query":"{ version { version } node(id: \"x\") { id } }"}`, http.StatusOK,
			`{"errors":[{"message":"invalid ID \"x\"","path":["node"],"locations":[{"line":1,"column":23}],"extensions":{"code":"BAD_USER_INPUT"}}],"data":{"version":{"version":"v1.2.3"},"node":null}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := postGraphQL(t, ts.URL, tt.body)
			if diff := cmp.Diff([]any{code, decodeJSON(t, body)}, []any{tt.wantCode, decodeJSON(t, tt.want)}); diff != "" {
				t.Errorf("response (-got +want):\n%s", diff)
			}
		})
	}
}
