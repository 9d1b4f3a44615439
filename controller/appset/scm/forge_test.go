package scm

// GitHub, GitLab and Bitbucket cannot run on this machine, so their
// tests are narrow units against httptest servers that answer as those
// forges' documented APIs do. Gitea is tested end to end against a real
// Gitea by the generator's tests in controller/appset; its tests here are
// as narrow.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// answer is a fake forge's response to one request.
type answer struct {
	status int
	header map[string]string
	body   any // JSON-encoded unless a string
}

// fakeForge answers GET requests by "escaped-path?query", else by
// escaped path; anything else is a 404. It records the Authorization
// header of each request, by path.
type fakeForge struct {
	*httptest.Server
	answers map[string]answer

	mu   sync.Mutex
	auth map[string]string
}

func newFakeForge(t *testing.T, answers map[string]answer) *fakeForge {
	t.Helper()
	f := &fakeForge{answers: answers, auth: map[string]string{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeForge) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.auth[r.URL.EscapedPath()] = r.Header.Get("Authorization")
	f.mu.Unlock()
	a, ok := f.answers[r.URL.EscapedPath()+"?"+r.URL.RawQuery]
	if !ok {
		a, ok = f.answers[r.URL.EscapedPath()]
	}
	if !ok {
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return
	}
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	if a.status != 0 {
		w.WriteHeader(a.status)
	}
	body, ok := a.body.(string)
	if !ok {
		b, _ := json.Marshal(a.body)
		body = string(b)
	}
	_, _ = fmt.Fprint(w, body)
}

// authOf is the Authorization header the forge saw at path.
func (f *fakeForge) authOf(path string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.auth[path]
}

// secrets holds "name/key" values.
func secrets(values map[string]string) Secrets {
	return func(_ context.Context, name, key string) (string, error) {
		v, ok := values[name+"/"+key]
		if !ok {
			return "", fmt.Errorf("secret %s has no key %s", name, key)
		}
		return v, nil
	}
}

// spec is a generator's JSON.
func spec(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type obj = map[string]any

const (
	sha1 = "0123456789abcdef0123456789abcdef01234567"
	sha2 = "fedcba9876543210fedcba9876543210fedcba98"
)
