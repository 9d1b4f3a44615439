// Package directory renders an Argo CD "Directory" source: the plain YAML
// and JSON manifests of a directory, and the objects its Jsonnet files
// evaluate to, all in-process.
//
// What is read follows Argo CD:
//
//   - Files ending in .yaml, .yml, .json or .jsonnet directly in the app's
//     directory; in its subdirectories too when directory.recurse is set.
//   - directory.include and directory.exclude are globs (or {a,b} lists of
//     globs) matched against each file's path relative to the app
//     directory, where "*" also matches "/". A file must match include
//     (when set) and not match exclude; exclude wins.
//   - Hidden files and directories (a name starting with ".", like .git or
//     .github) are skipped.
//   - A YAML file that does not parse and does not look like a manifest
//     (no "apiVersion:", "kind:" and "metadata:") is ignored, as is any
//     file containing "+argocd:skip-file-rendering".
//   - Symlinks are followed only to files inside the repository; a link
//     leaving it fails the render with render.ErrOutsideRoot. Symlinked
//     directories are never descended into.
//
// Files are read in lexical order of their paths, and objects come out in
// file order, then document order.
//
// Jsonnet files are evaluated with github.com/google/go-jsonnet. Their
// output may be an object, an array of objects or a List. directory.jsonnet
// extVars and tlas are passed as strings or, with code set, as Jsonnet
// code, after Argo CD's build-environment substitution ($ARGOCD_APP_NAME,
// $ARGOCD_APP_NAMESPACE, $KUBE_VERSION, ...; unknown variables become
// empty, "$$" is a literal "$"). Imports are searched next to the importing
// file, then in directory.jsonnet.libs (paths relative to the repository
// root, the last listed first), then in the app directory; no import may
// leave the repository.
//
// Jsonnet cannot be interrupted: when ctx ends during an evaluation, Render
// returns ctx's error at once, and the evaluating goroutine runs on in the
// background until the evaluation finishes (its imports fail fast from then
// on), its result discarded.
package directory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
)

// skipMarker in a file keeps Argo CD, and so us, from rendering it.
const skipMarker = "+argocd:skip-file-rendering"

// Render reads and evaluates the manifests of req.Path as described in the
// package documentation.
func Render(ctx context.Context, req render.Request) ([]*unstructured.Unstructured, error) {
	r, files, err := open(ctx, req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.root.Close() }()
	var objs []*unstructured.Unstructured
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var got []*unstructured.Unstructured
		if strings.HasSuffix(f, ".jsonnet") {
			got, err = r.evaluate(ctx, f)
		} else {
			got, err = r.decodeFile(f)
		}
		if err != nil {
			return nil, err
		}
		objs = append(objs, got...)
	}
	return objs, nil
}

// Jsonnet reports whether Render would evaluate a Jsonnet file of req:
// without one a render only reads files, within req.Limits.
func Jsonnet(ctx context.Context, req render.Request) (bool, error) {
	r, files, err := open(ctx, req)
	if err != nil {
		return false, err
	}
	_ = r.root.Close()
	return slices.ContainsFunc(files, func(f string) bool { return strings.HasSuffix(f, ".jsonnet") }), nil
}

// open checks req's options and app path and lists the files to render;
// the caller closes the renderer's root.
func open(ctx context.Context, req render.Request) (*renderer, []string, error) {
	var opts v1alpha1.ApplicationSourceDirectory
	if req.Source.Directory != nil {
		opts = *req.Source.Directory
	}
	include, err := compileGlob(opts.Include)
	if err != nil {
		return nil, nil, fmt.Errorf("directory.include %q: %w", opts.Include, err)
	}
	exclude, err := compileGlob(opts.Exclude)
	if err != nil {
		return nil, nil, fmt.Errorf("directory.exclude %q: %w", opts.Exclude, err)
	}

	realRoot, err := render.ResolveInRoot(req.RepoRoot, ".")
	if err != nil {
		return nil, nil, err
	}
	appPath := req.Path
	if appPath == "" {
		appPath = "."
	}
	appAbs, err := render.ResolveInRoot(realRoot, appPath)
	if err != nil {
		return nil, nil, fmt.Errorf("app path: %w", err)
	}
	appRel, err := filepath.Rel(realRoot, appAbs)
	if err != nil {
		return nil, nil, fmt.Errorf("app path %q: %w", appPath, err)
	}
	appRel = filepath.ToSlash(appRel)

	root, err := os.OpenRoot(realRoot)
	if err != nil {
		return nil, nil, fmt.Errorf("open repository: %w", render.Bare(err))
	}
	fail := func(err error) (*renderer, []string, error) {
		_ = root.Close()
		return nil, nil, err
	}
	if fi, err := root.Stat(appRel); err != nil {
		return fail(fmt.Errorf("app path %q: %w", appPath, render.Bare(err)))
	} else if !fi.IsDir() {
		return fail(fmt.Errorf("app path %q is not a directory", appPath))
	}

	r := &renderer{
		req:      req,
		opts:     opts,
		limits:   req.Limits.WithDefaults(),
		root:     root,
		realRoot: realRoot,
		appRel:   appRel,
	}
	files, err := r.find(ctx, include, exclude)
	if err != nil {
		return fail(err)
	}
	return r, files, nil
}

type renderer struct {
	req      render.Request
	opts     v1alpha1.ApplicationSourceDirectory
	limits   render.Limits
	root     *os.Root
	realRoot string
	appRel   string // the app directory, slash-separated, relative to realRoot
	used     int64  // bytes read or produced so far, against MaxCombinedSize
}

func isManifestName(name string) bool {
	for _, ext := range []string{".yaml", ".yml", ".json", ".jsonnet"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// find lists the files to render, relative to the repository root, sorted.
func (r *renderer) find(ctx context.Context, include, exclude *glob) ([]string, error) {
	var files []string
	err := fs.WalkDir(r.root.FS(), r.appRel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read %s: %w", p, render.Bare(err))
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == r.appRel {
			return nil
		}
		name := d.Name()
		if strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if !r.opts.Recurse {
				return fs.SkipDir
			}
			return nil
		}
		rel := strings.TrimPrefix(p, r.appRel+"/")
		if r.appRel == "." {
			rel = p
		}
		wanted := isManifestName(name) &&
			(include == nil || include.match(rel)) &&
			(exclude == nil || !exclude.match(rel))
		switch {
		case d.Type().IsRegular():
			if wanted {
				files = append(files, p)
			}
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			// A link that would be read, or descended into, must stay inside.
			if !wanted && !r.opts.Recurse {
				return nil
			}
			if _, err := render.ResolveInRoot(r.realRoot, p); err != nil {
				return err
			}
			fi, err := r.root.Stat(p)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // dangling: Argo CD skips it too
				}
				return fmt.Errorf("stat %s: %w", p, render.Bare(err))
			}
			if wanted && fi.Mode().IsRegular() {
				files = append(files, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	return files, nil
}

// decodeFile reads and decodes one YAML or JSON file.
func (r *renderer) decodeFile(p string) ([]*unstructured.Unstructured, error) {
	data, err := r.read(p, !strings.HasSuffix(p, ".json"))
	if err != nil {
		return nil, err
	}
	if bytes.Contains(data, []byte(skipMarker)) {
		return nil, nil
	}
	objs, err := render.Decode(p, data, r.limits)
	if err != nil && !errors.Is(err, render.ErrTooLarge) && !strings.HasSuffix(p, ".json") && !looksLikeManifest(data) {
		// Some other YAML file (values, CI config): Argo CD ignores it.
		return nil, nil
	}
	return objs, err
}

func looksLikeManifest(data []byte) bool {
	return bytes.Contains(data, []byte("apiVersion:")) &&
		bytes.Contains(data, []byte("kind:")) &&
		bytes.Contains(data, []byte("metadata:"))
}

// read returns the contents of p (relative to the repository root) and
// counts them against the combined limit. Reading stops as soon as the
// file is known to be too large: at its size for the combined limit and,
// for YAML, once one document has grown past the manifest limit.
func (r *renderer) read(p string, yamlDocs bool) ([]byte, error) {
	f, err := r.root.Open(p)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", p, render.Bare(err))
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", p, render.Bare(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	remaining := r.limits.MaxCombinedSize - r.used
	docMax := int64(-1)
	if yamlDocs {
		docMax = r.limits.MaxManifestSize
	}
	data, err := readBounded(f, fi.Size(), remaining, docMax)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	r.used += int64(len(data))
	return data, nil
}

// readBounded reads at most limit bytes of a file of the given size. With
// docMax >= 0 it also fails once the text after the last line starting
// with "---" or "..." (a YAML document boundary, or something that only
// looks like one, so the estimate never exceeds the real document) passes
// docMax; a file that starts as JSON is not checked that way.
func readBounded(rd io.Reader, size, limit, docMax int64) ([]byte, error) {
	if size > limit {
		return nil, fmt.Errorf("%d bytes exceed the %d left of the limit for one render: %w", size, max(limit, 0), render.ErrTooLarge)
	}
	const chunk = 64 << 10
	initial := min(size, limit)
	if docMax >= 0 {
		// Start small enough that an oversized document fails before its
		// whole file is in memory.
		initial = min(initial, docMax+chunk)
	}
	buf := make([]byte, 0, initial+1)
	docStart, scanned, decided := 0, 0, docMax < 0
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, chunk)
		}
		n, err := rd.Read(buf[len(buf):min(cap(buf), len(buf)+chunk)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, fmt.Errorf("more than the %d bytes left of the limit for one render: %w", limit, render.ErrTooLarge)
		}
		if !decided {
			if t := bytes.TrimLeft(buf, " \t\r\n\xef\xbb\xbf"); len(t) > 0 {
				decided = true
				if t[0] == '{' || t[0] == '[' {
					docMax = -1
				}
			}
		}
		if docMax >= 0 {
			from := max(scanned-3, docStart)
			for _, marker := range []string{"\n---", "\n..."} {
				if i := bytes.LastIndex(buf[from:], []byte(marker)); i >= 0 && from+i > docStart {
					docStart = from + i
				}
			}
			scanned = len(buf)
			if int64(len(buf)-docStart) > docMax+1 {
				return nil, fmt.Errorf("a document passes the limit of %d bytes for one manifest: %w", docMax, render.ErrTooLarge)
			}
		}
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, render.Bare(err)
		}
	}
}
