// Package console serves the graphcd web console.
//
// The console is a single-page application built into dist/ and embedded in
// the binary. Until the real console lands, dist/ holds a placeholder page.
// Paths without a file extension are client-side routes and get index.html;
// paths with an extension are files and 404 when missing, so a broken asset
// link fails loudly instead of returning HTML.
package console

import (
	"bytes"
	"embed"
	"errors"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed dist
var dist embed.FS

// Handler returns an http.Handler that serves the embedded console.
func Handler() http.Handler {
	files, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // "dist" is embedded at build time; fs.Sub cannot fail here.
	}
	return &handler{files: files}
}

type handler struct {
	files fs.FS
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" || path.Ext(name) == "" {
		name = "index.html"
	}
	data, err := fs.ReadFile(h.files, name)
	if errors.Is(err, fs.ErrNotExist) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if name == "index.html" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	w.Header().Set("Cache-Control", "no-cache")
	// ServeContent sets Content-Type from the extension when unset and
	// handles HEAD and Range requests.
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
}
