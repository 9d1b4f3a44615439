package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHandler(t *testing.T) {
	tests := []struct {
		name       string
		method     string
		path       string
		wantStatus int
		wantType   string
		wantBody   string
	}{
		{name: "root serves index", method: http.MethodGet, path: "/", wantStatus: http.StatusOK, wantType: "text/html; charset=utf-8", wantBody: "the console is coming"},
		{name: "index.html", method: http.MethodGet, path: "/index.html", wantStatus: http.StatusOK, wantType: "text/html; charset=utf-8", wantBody: "/api/graphql"},
		{name: "client route serves index", method: http.MethodGet, path: "/applications/guestbook", wantStatus: http.StatusOK, wantType: "text/html; charset=utf-8", wantBody: "the console is coming"},
		{name: "missing asset is 404", method: http.MethodGet, path: "/assets/app.js", wantStatus: http.StatusNotFound},
		{name: "path traversal stays inside dist", method: http.MethodGet, path: "/../console.go", wantStatus: http.StatusNotFound},
		{name: "head", method: http.MethodHead, path: "/", wantStatus: http.StatusOK, wantType: "text/html; charset=utf-8"},
		{name: "post not allowed", method: http.MethodPost, path: "/", wantStatus: http.StatusMethodNotAllowed},
	}
	h := Handler()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), tt.method, tt.path, nil))
			if diff := cmp.Diff(rec.Code, tt.wantStatus); diff != "" {
				t.Fatalf("status (-got +want):\n%s", diff)
			}
			if tt.wantStatus != http.StatusOK {
				return
			}
			if diff := cmp.Diff(rec.Header().Get("Content-Type"), tt.wantType); diff != "" {
				t.Errorf("Content-Type (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(rec.Header().Get("Cache-Control"), "no-cache"); diff != "" {
				t.Errorf("Cache-Control (-got +want):\n%s", diff)
			}
			if !strings.Contains(rec.Body.String(), tt.wantBody) {
				t.Errorf("body %q does not contain %q", rec.Body.String(), tt.wantBody)
			}
		})
	}
}
