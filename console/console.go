// Package console serves the graphcd web console.
//
// The console is a single-page application (console/web) whose production
// build `make console` copies into dist/, which is embedded in the binary.
// A binary built without it serves placeholder.html instead, a page that
// says how to build the console.
//
// Paths without a file extension are client-side routes and get index.html;
// paths with an extension are files and 404 when missing, so a broken asset
// link fails loudly instead of returning HTML. index.html is revalidated on
// every load (no-cache), while the content-hashed files under assets/ never
// change and are cached for a year.
package console

import (
	"bytes"
	"embed"
	"errors"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strings"
	"time"
)

//go:embed all:dist
var dist embed.FS

//go:embed placeholder.html
var placeholderDir embed.FS

// Handler returns an http.Handler that serves the embedded console, or the
// placeholder page when the binary was built without it.
func Handler() http.Handler {
	files, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // "dist" is embedded at build time; fs.Sub cannot fail here.
	}
	return newHandler(files)
}

// Built reports whether the binary embeds the console's build.
func Built() bool {
	_, err := fs.Stat(dist, "dist/index.html")
	return err == nil
}

// newHandler serves files, or the placeholder when files has no index.html.
func newHandler(files fs.FS) http.Handler {
	if _, err := fs.Stat(files, "index.html"); err != nil {
		return &handler{files: placeholderFS{}}
	}
	return &handler{files: files}
}

type handler struct {
	files fs.FS
}

// placeholderFS holds only index.html: the placeholder page.
type placeholderFS struct{}

func (placeholderFS) Open(name string) (fs.File, error) {
	if name != "index.html" {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return fs.FS(placeholderDir).Open("placeholder.html")
}

// hashed matches the names Vite gives the files it fingerprints,
// assets/<name>-<8-character hash>.<ext>.
var hashed = regexp.MustCompile(`^assets/[^/]+-[A-Za-z0-9_-]{8,}\.[A-Za-z0-9]+$`)

const (
	cacheForever = "public, max-age=31536000, immutable"
	revalidate   = "no-cache"
)

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
	if strings.HasPrefix(path.Base(name), ".") {
		http.NotFound(w, r)
		return
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
	if hashed.MatchString(name) {
		w.Header().Set("Cache-Control", cacheForever)
	} else {
		w.Header().Set("Cache-Control", revalidate)
	}
	// ServeContent sets Content-Type from the extension when unset and
	// handles HEAD and Range requests.
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
}
