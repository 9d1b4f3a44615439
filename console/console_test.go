package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// built is a console build as Vite lays it out.
var built = fstest.MapFS{
	"index.html":                {Data: []byte(`<!doctype html><script type="module" src="/assets/index-B_MHbgPV.js"></script>`)},
	"assets/index-B_MHbgPV.js":  {Data: []byte("console.log(1)")},
	"assets/index-BufVio7U.css": {Data: []byte("body{}")},
	"favicon.svg":               {Data: []byte("<svg/>")},
	".gitkeep":                  {},
}

func TestHandler(t *testing.T) {
	const forever = "public, max-age=31536000, immutable"
	tests := []struct {
		name       string
		files      fstest.MapFS
		method     string
		path       string
		wantStatus int
		wantType   string
		wantCache  string
		wantBody   string
	}{
		{name: "root serves index", files: built, path: "/", wantStatus: 200, wantType: "text/html; charset=utf-8", wantCache: "no-cache", wantBody: "/assets/index-B_MHbgPV.js"},
		{name: "client route serves index", files: built, path: "/applications/guestbook", wantStatus: 200, wantType: "text/html; charset=utf-8", wantCache: "no-cache", wantBody: "<!doctype html>"},
		{name: "hashed script is immutable", files: built, path: "/assets/index-B_MHbgPV.js", wantStatus: 200, wantType: "text/javascript; charset=utf-8", wantCache: forever, wantBody: "console.log"},
		{name: "hashed stylesheet is immutable", files: built, path: "/assets/index-BufVio7U.css", wantStatus: 200, wantType: "text/css; charset=utf-8", wantCache: forever},
		{name: "unhashed file is revalidated", files: built, path: "/favicon.svg", wantStatus: 200, wantType: "image/svg+xml", wantCache: "no-cache"},
		{name: "missing asset is 404", files: built, path: "/assets/app-12345678.js", wantStatus: 404},
		{name: "hidden file is 404", files: built, path: "/.gitkeep", wantStatus: 404},
		{name: "path traversal stays inside dist", files: built, path: "/../console.go", wantStatus: 404},
		{name: "head", files: built, method: http.MethodHead, path: "/", wantStatus: 200, wantType: "text/html; charset=utf-8", wantCache: "no-cache"},
		{name: "post not allowed", files: built, method: http.MethodPost, path: "/", wantStatus: 405},
		{name: "without a build: placeholder", files: fstest.MapFS{".gitkeep": {}}, path: "/", wantStatus: 200, wantType: "text/html; charset=utf-8", wantCache: "no-cache", wantBody: "built without the web console"},
		{name: "without a build: route gets placeholder", files: fstest.MapFS{}, path: "/applications", wantStatus: 200, wantType: "text/html; charset=utf-8", wantCache: "no-cache", wantBody: "make build CONSOLE=1"},
		{name: "without a build: assets are 404", files: fstest.MapFS{}, path: "/assets/index-B_MHbgPV.js", wantStatus: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := tt.method
			if method == "" {
				method = http.MethodGet
			}
			rec := httptest.NewRecorder()
			newHandler(tt.files).ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), method, tt.path, nil))
			if diff := cmp.Diff(rec.Code, tt.wantStatus); diff != "" {
				t.Fatalf("status (-got +want):\n%s", diff)
			}
			if tt.wantStatus != http.StatusOK {
				return
			}
			if diff := cmp.Diff(rec.Header().Get("Content-Type"), tt.wantType); diff != "" {
				t.Errorf("Content-Type (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(rec.Header().Get("Cache-Control"), tt.wantCache); diff != "" {
				t.Errorf("Cache-Control (-got +want):\n%s", diff)
			}
			if !strings.Contains(rec.Body.String(), tt.wantBody) {
				t.Errorf("body %q does not contain %q", rec.Body.String(), tt.wantBody)
			}
		})
	}
}

// The embedded handler serves a page at / whether or not the binary was
// built with the console: the build or the placeholder, never a 404.
func TestHandlerEmbedded(t *testing.T) {
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET / = %d", rec.Code)
	}
	want := "built without the web console"
	if Built() {
		want = `<div id="root">`
	}
	if !strings.Contains(rec.Body.String(), want) {
		t.Errorf("GET / (built: %v) = %q, want it to contain %q", Built(), rec.Body.String(), want)
	}
}
