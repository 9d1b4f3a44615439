package apiserver

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// FuzzGraphQLRequest posts arbitrary documents, variables and operation
// names, anonymously and as a signed-in user, to the real handler (with
// its document limits, complexity and validation; resolvers without a
// cluster): every answer is a GraphQL JSON response with a 200, 400, 413
// or 422 status, and no resolver panics.
//
//	go test -run '^$' -fuzz FuzzGraphQLRequest ./apiserver/
func FuzzGraphQLRequest(f *testing.F) {
	logs := &syncBuffer{}
	url, token, _ := newAuthTestServer(f, Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	f.Add(`query Q($n: Int) { version { version } applications(first: $n) { totalCount } }`, []byte(`{"n": 1e400}`), "Q", false)
	f.Add(`fragment F on Query { ...G } fragment G on Query { ...F } { ...F }`, []byte(`null`), "", true)
	f.Add(`{ a: version { version } b: version { version } __typename }`, []byte(`{"x": [[[[[]]]]]}`), "", true)
	f.Add(`mutation M($i: SyncInput!) { sync(input: $i) { name } }`, []byte(`{"i": {"name": "\u0000", "resources": [{}]}}`), "M", true)
	f.Add(`subscription { applicationEvents { name } }`, []byte(`{}`), "S", false)
	f.Add(`{ __schema { types { fields { type { ofType { ofType { name } } } } } } }`, []byte(``), "", false)
	f.Fuzz(func(t *testing.T, query string, variables []byte, operation string, signedIn bool) {
		var vars json.RawMessage
		if json.Valid(variables) {
			vars = variables
		}
		body, err := json.Marshal(map[string]any{"query": query, "variables": vars, "operationName": operation})
		if err != nil {
			return // invalid UTF-8 marshals; anything else is the fuzzer's
		}
		bearer := ""
		if signedIn {
			bearer = token
		}
		status, res := postBodyAs(t, url, bearer, string(body)) // fails on a body that is no JSON
		switch status {
		case http.StatusOK, http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		default:
			t.Fatalf("status %d for %s: %+v", status, body, res)
		}
		if res.Data == nil && res.Errors == nil {
			t.Fatalf("neither data nor errors for %s", body)
		}
		if strings.Contains(logs.String(), "panicked") {
			t.Fatalf("a resolver panicked on %s: %s", body, logs.String())
		}
	})
}
