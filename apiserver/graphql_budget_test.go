package apiserver

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/auth/session"
	"github.com/graphcd/graphcd/resolvers"
)

// newAuthTestServer serves the real handler with real sessions and RBAC:
// requests without a token are anonymous and may ask only the public
// fields. It returns a valid token of the user alice.
func newAuthTestServer(t testing.TB, opts Options) (ts string, token string, authz *auth.Authorizer) {
	t.Helper()
	issuer := session.NewIssuer(session.StaticKeys{Current: session.GenerateKey()}, session.Options{})
	token, _, err := issuer.Issue(t.Context(), session.Template{Subject: "alice", Kind: session.KindSSO})
	if err != nil {
		t.Fatal(err)
	}
	authz = auth.NewAuthorizer()
	opts.API = resolvers.Config{Build: testBuild, Authz: authz}
	opts.Authenticator = &auth.Sessions{Issuer: issuer}
	srv, _ := newTestServer(t, opts)
	return srv.URL, token, authz
}

// graphQLResult is a decoded GraphQL response.
type graphQLResult struct {
	Data   map[string]any `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

// postAs posts query to baseURL with token as bearer (none if "").
func postAs(t testing.TB, baseURL, token, query string) (int, graphQLResult) {
	t.Helper()
	return postBodyAs(t, baseURL, token, jsonQuery(query))
}

// postBodyAs posts a JSON request body to baseURL with token as bearer
// (none if "").
func postBodyAs(t testing.TB, baseURL, token, body string) (int, graphQLResult) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, baseURL+"/api/graphql", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	code, body, _ := do(t, req)
	var res graphQLResult
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatalf("HTTP %d, body not JSON: %s", code, body)
	}
	return code, res
}

// refusal returns the message of res's only error when res is a refusal
// with BAD_USER_INPUT and no data, else a description of what res is.
func refusal(res graphQLResult) (string, bool) {
	if len(res.Errors) != 1 || res.Data != nil || res.Errors[0].Extensions["code"] != string(resolvers.CodeBadUserInput) {
		b, _ := json.Marshal(res)
		return string(b), false
	}
	return res.Errors[0].Message, true
}

// TestGraphQLFragmentBomb is the reproduction of issue 19, hole 2: a
// 1.2 KB document of 30 fragments, each spreading the next twice, held a
// core for more than ten minutes, logged in or not. It is refused with a
// clear error, over POST and the websocket, and the server answers other
// requests while and after it refuses bombs.
func TestGraphQLFragmentBomb(t *testing.T) {
	url, token, _ := newAuthTestServer(t, Options{})
	bomb := fragmentBomb(30)
	tests := []struct {
		name, token, want string
	}{
		{"without a token", "", "document expands to more than 200 selections once its fragment spreads are expanded " +
			"(the limit for callers without a session: log in first)"},
		{"with a token", token, "document expands to more than 5000 selections once its fragment spreads are expanded"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" over POST", func(t *testing.T) {
			code, res := postAs(t, url, tt.token, bomb)
			if msg, ok := refusal(res); !ok || msg != tt.want || code != http.StatusOK {
				t.Errorf("HTTP %d %s\nwant HTTP 200 refusing with %q", code, msg, tt.want)
			}
		})
		t.Run(tt.name+" over the websocket", func(t *testing.T) {
			got := subscribeOnce(t, url, tt.token, bomb)
			if !strings.Contains(got, `"data":null`) || !strings.Contains(got, `"message":"`+tt.want+`","extensions":{"code":"BAD_USER_INPUT"}`) {
				t.Errorf("socket answered %s\nwant no data and an error with %q", got, tt.want)
			}
		})
	}

	// Bombs keep coming while others ask what they need.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if body, err := postRaw(t.Context(), url, bomb); err != nil || !strings.Contains(body, "expands to more than") {
					t.Errorf("a bomb got %s (%v)", body, err)
					return
				}
			}
		})
	}
	for i := range 20 {
		if _, res := postAs(t, url, token, "{ me { loggedIn username } version { version } }"); len(res.Errors) > 0 ||
			fmt.Sprint(res.Data) != "map[me:map[loggedIn:true username:alice] version:map[version:v1.2.3]]" {
			t.Fatalf("query %d as alice during bombs: %+v", i, res)
		}
		if _, res := postAs(t, url, "", "{ me { loggedIn } version { version } }"); len(res.Errors) > 0 ||
			fmt.Sprint(res.Data) != "map[me:map[loggedIn:false] version:map[version:v1.2.3]]" {
			t.Fatalf("anonymous query %d during bombs: %+v", i, res)
		}
	}
	close(stop)
	wg.Wait()
	if _, res := postAs(t, url, token, "{ version { version } }"); len(res.Errors) > 0 {
		t.Errorf("after the bombs: %+v", res)
	}
}

// postRaw posts query without a token and returns the body; it is safe
// to call from any goroutine.
func postRaw(ctx context.Context, baseURL, query string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/api/graphql", strings.NewReader(jsonQuery(query)))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

// subscribeOnce sends query over a graphql-transport-ws socket (with
// token in connection_init unless "") and returns the first answer to it
// as JSON.
func subscribeOnce(t *testing.T, baseURL, token, query string) string {
	t.Helper()
	ctx := t.Context()
	conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(baseURL, "http")+"/api/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer func() { _ = conn.CloseNow() }()
	conn.SetReadLimit(1 << 20)
	init := map[string]any{"type": "connection_init"}
	if token != "" {
		init["payload"] = map[string]any{"token": token}
	}
	for _, m := range []map[string]any{init, {"id": "1", "type": "subscribe", "payload": map[string]any{"query": query}}} {
		if err := wsjson.Write(ctx, conn, m); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	for {
		var m json.RawMessage
		if err := wsjson.Read(ctx, conn, &m); err != nil {
			t.Fatalf("read: %v", err)
		}
		if strings.Contains(string(m), `"id":"1"`) {
			return string(m)
		}
	}
}

// TestGraphQLAnonymousBudget checks that callers who may ask only the
// public fields have a smaller budget, that what they may ask fits it,
// and that logging in (or anonymous access being on) lifts it.
func TestGraphQLAnonymousBudget(t *testing.T) {
	url, token, authz := newAuthTestServer(t, Options{})
	var aliases strings.Builder
	aliases.WriteString("{")
	for i := range 120 {
		fmt.Fprintf(&aliases, " v%d: version { version }", i)
	}
	aliases.WriteString(" }")
	big := aliases.String() // 722 tokens, 240 selections

	if _, res := postAs(t, url, "", "query Session { me { loggedIn username groups } version { version commit goVersion } }"); len(res.Errors) > 0 {
		t.Errorf("public query without a token: %+v", res)
	}
	_, res := postAs(t, url, "", big)
	if msg, ok := refusal(res); !ok || msg != "document has more than 500 tokens (the limit for callers without a session: log in first)" {
		t.Errorf("big document without a token: %s", msg)
	}
	if _, res := postAs(t, url, token, big); len(res.Errors) > 0 || len(res.Data) != 120 {
		t.Errorf("big document with a token: %d fields, errors %+v", len(res.Data), res.Errors)
	}
	// A document registered as a persisted query by a user is measured
	// again, against the caller's budget, when asked for by its hash.
	ext := fmt.Sprintf(`"extensions":{"persistedQuery":{"version":1,"sha256Hash":"%x"}}`, sha256.Sum256([]byte(big)))
	if _, res := postBodyAs(t, url, token, fmt.Sprintf(`{"query":%q,%s}`, big, ext)); len(res.Errors) > 0 {
		t.Fatalf("register the big document: %+v", res.Errors)
	}
	_, res = postBodyAs(t, url, "", "{"+ext+"}")
	if msg, ok := refusal(res); !ok || !strings.Contains(msg, "more than 500 tokens") {
		t.Errorf("big persisted document without a token: %s", msg)
	}
	// Few tokens, long text: one string literal. Refused before any cache
	// keeps its text, for a caller without a session at 8 KiB and for
	// everybody at 128 KiB.
	long := func(n int) string { return `{ version { version } } # ` + strings.Repeat("x", n) }
	_, res = postAs(t, url, "", long(9<<10))
	if msg, ok := refusal(res); !ok || msg != "document is longer than 8192 bytes (the limit for callers without a session: log in first)" {
		t.Errorf("long document without a token: %s", msg)
	}
	if _, res := postAs(t, url, token, long(9<<10)); len(res.Errors) > 0 {
		t.Errorf("long document with a token: %+v", res.Errors)
	}
	_, res = postAs(t, url, token, long(129<<10))
	if msg, ok := refusal(res); !ok || msg != "document is longer than 131072 bytes" {
		t.Errorf("very long document with a token: %s", msg)
	}
	// With anonymous access on, callers without a token may ask
	// everything, and have the budget of everybody.
	authz.SetAnonymous(true)
	if _, res := postAs(t, url, "", big); len(res.Errors) > 0 || len(res.Data) != 120 {
		t.Errorf("big document with anonymous access on: %d fields, errors %+v", len(res.Data), res.Errors)
	}
}

// BenchmarkGraphQLFragmentBomb times the refusal of issue 19's fragment
// bomb by the real handler, from sending it to reading the answer; each
// request sends a new document (a comment differs), so nothing is
// answered from a cache.
func BenchmarkGraphQLFragmentBomb(b *testing.B) {
	url, token, _ := newAuthTestServer(b, Options{})
	bomb := fragmentBomb(30)
	for _, bt := range []struct{ name, token string }{{"anonymous", ""}, {"with-token", token}} {
		b.Run(bt.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				if _, res := postAs(b, url, bt.token, fmt.Sprintf("%s# %d\n", bomb, i)); len(res.Errors) != 1 {
					b.Fatalf("bomb answered: %+v", res)
				}
			}
		})
	}
}
