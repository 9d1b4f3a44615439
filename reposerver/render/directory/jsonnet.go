package directory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/google/go-jsonnet"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/reposerver/render"
)

// evaluate runs the Jsonnet file p (relative to the repository root) and
// decodes its output.
func (r *renderer) evaluate(ctx context.Context, p string) ([]*unstructured.Unstructured, error) {
	imp, err := r.importer(ctx)
	if err != nil {
		return nil, err
	}
	vm := jsonnet.MakeVM()
	vm.Importer(imp)
	env := r.req.BuildEnv()
	for _, v := range r.opts.Jsonnet.ExtVars {
		if v.Code {
			vm.ExtCode(v.Name, env.Expand(v.Value))
		} else {
			vm.ExtVar(v.Name, env.Expand(v.Value))
		}
	}
	for _, v := range r.opts.Jsonnet.TLAs {
		if v.Code {
			vm.TLACode(v.Name, env.Expand(v.Value))
		} else {
			vm.TLAVar(v.Name, env.Expand(v.Value))
		}
	}

	type result struct {
		out string
		err error
	}
	done := make(chan result, 1) // buffered: an abandoned evaluation must not block
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- result{err: fmt.Errorf("jsonnet panicked: %v", v)}
			}
		}()
		out, err := vm.EvaluateFile(p)
		done <- result{out: out, err: err}
	}()
	var res result
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("evaluate %s: %w", p, ctx.Err())
	case res = <-done:
	}
	if err := imp.failure(); err != nil {
		return nil, fmt.Errorf("evaluate %s: %w", p, err)
	}
	if res.err != nil {
		return nil, fmt.Errorf("evaluate %s: %w", p, res.err)
	}
	if n := int64(len(res.out)); n > r.limits.MaxCombinedSize-r.used {
		return nil, fmt.Errorf("%s: output of %d bytes exceeds the %d left of the limit for one render: %w", p, n, max(r.limits.MaxCombinedSize-r.used, 0), render.ErrTooLarge)
	}
	r.used += int64(len(res.out))
	return render.Decode(p, []byte(res.out), r.limits)
}

// importer builds the confined importer for one evaluation, checking the
// library paths first.
func (r *renderer) importer(ctx context.Context) (*importer, error) {
	imp := &importer{
		ctx:      ctx,
		root:     r.root,
		realRoot: r.realRoot,
		limit:    r.limits.MaxCombinedSize,
		cache:    map[string]jsonnet.Contents{},
	}
	// Argo CD searches its library paths [app dir, libs...] last first.
	for i := len(r.opts.Jsonnet.Libs) - 1; i >= 0; i-- {
		// A leading "/" means the repository root, as in Argo CD.
		lib := strings.TrimLeft(filepath.ToSlash(r.opts.Jsonnet.Libs[i]), "/")
		if _, err := render.ResolveInRoot(r.realRoot, lib); err != nil {
			return nil, fmt.Errorf("directory.jsonnet.libs %q: %w", r.opts.Jsonnet.Libs[i], err)
		}
		imp.search = append(imp.search, path.Clean(lib))
	}
	imp.search = append(imp.search, r.appRel)
	return imp, nil
}

// importer serves Jsonnet imports from inside the repository only. The
// paths it reports (foundAt) are relative to the repository root, so they
// are also what Jsonnet's error traces show.
type importer struct {
	ctx      context.Context
	root     *os.Root
	realRoot string
	search   []string // library directories, relative to the root
	limit    int64    // bytes of one imported file

	mu     sync.Mutex
	cache  map[string]jsonnet.Contents // by foundAt; missing files are absent
	denied error                       // first refusal, reported over Jsonnet's own error
}

// Import implements jsonnet.Importer.
func (im *importer) Import(importedFrom, importedPath string) (jsonnet.Contents, string, error) {
	im.mu.Lock()
	defer im.mu.Unlock()
	if err := im.ctx.Err(); err != nil {
		return jsonnet.Contents{}, "", err
	}
	from := importedFrom
	if from == "" {
		from = "the repository root"
	}
	if importedPath == "" {
		return jsonnet.Contents{}, "", fmt.Errorf("empty import path in %s", from)
	}
	if path.IsAbs(importedPath) || filepath.IsAbs(importedPath) {
		return jsonnet.Contents{}, "", im.deny(fmt.Errorf("import %q in %s: absolute import paths are not allowed: %w", importedPath, from, render.ErrOutsideRoot))
	}
	dirs := []string{path.Dir(importedFrom)}
	if importedFrom == "" {
		dirs[0] = "."
	}
	dirs = append(dirs, im.search...)
	for _, dir := range dirs {
		candidate := path.Join(dir, filepath.ToSlash(importedPath))
		if candidate == ".." || strings.HasPrefix(candidate, "../") {
			return jsonnet.Contents{}, "", im.deny(fmt.Errorf("import %q in %s: %w", importedPath, from, render.ErrOutsideRoot))
		}
		contents, found, err := im.load(candidate)
		if err != nil {
			return jsonnet.Contents{}, "", im.deny(fmt.Errorf("import %q in %s: %w", importedPath, from, err))
		}
		if found {
			return contents, candidate, nil
		}
	}
	return jsonnet.Contents{}, "", fmt.Errorf("import %q in %s: not found next to it or in the library paths", importedPath, from)
}

// load reads candidate (relative to the root) once; found is false when
// it does not exist.
func (im *importer) load(candidate string) (jsonnet.Contents, bool, error) {
	if c, ok := im.cache[candidate]; ok {
		return c, true, nil
	}
	resolved, err := render.ResolveInRoot(im.realRoot, candidate)
	if err != nil {
		return jsonnet.Contents{}, false, err
	}
	rel, err := filepath.Rel(im.realRoot, resolved)
	if err != nil {
		return jsonnet.Contents{}, false, err
	}
	f, err := im.root.Open(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return jsonnet.Contents{}, false, nil
	}
	if err != nil {
		return jsonnet.Contents{}, false, render.Bare(err)
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return jsonnet.Contents{}, false, render.Bare(err)
	}
	if !fi.Mode().IsRegular() {
		return jsonnet.Contents{}, false, nil
	}
	data, err := readBounded(f, fi.Size(), im.limit, -1)
	if err != nil {
		return jsonnet.Contents{}, false, err
	}
	c := jsonnet.MakeContentsRaw(data)
	im.cache[candidate] = c
	return c, true, nil
}

// deny records the first refusal so that Render reports it, with
// errors.Is working, instead of Jsonnet's flattened text.
func (im *importer) deny(err error) error {
	if im.denied == nil && (errors.Is(err, render.ErrOutsideRoot) || errors.Is(err, render.ErrTooLarge)) {
		im.denied = err
	}
	return err
}

func (im *importer) failure() error {
	im.mu.Lock()
	defer im.mu.Unlock()
	return im.denied
}
