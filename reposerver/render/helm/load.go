package helm

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/graphcd/graphcd/reposerver/render"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/ignore"
)

// Bounds on loading one chart directory into memory.
const (
	maxChartFiles     = 10000
	maxChartDirDepth  = 64
	maxChartLoadBytes = DefaultMaxDecompressedSize
)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// tree is a directory tree nothing may be read outside of: the checkout
// for a chart in Git, the unpacked chart for a pulled one.
type tree struct {
	path string   // absolute, symlinks resolved
	root *os.Root // opened at path
}

func openTree(dir string) (*tree, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", filepath.Base(dir), err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("open chart tree: %w", render.Bare(err))
	}
	r, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("open chart tree: %w", render.Bare(err))
	}
	return &tree{path: real, root: r}, nil
}

func (t *tree) close() { _ = t.root.Close() }

// resolve turns a slash path relative to the tree into a cleaned relative
// path with every symlink resolved, or fails with render.ErrOutsideRoot.
func (t *tree) resolve(rel string) (string, error) {
	abs, err := render.ResolveInRoot(t.path, filepath.FromSlash(rel))
	if err != nil {
		return "", err
	}
	out, err := filepath.Rel(t.path, abs)
	if err != nil || !filepath.IsLocal(out) && out != "." {
		return "", fmt.Errorf("resolve %q: %w", rel, render.ErrOutsideRoot)
	}
	return out, nil
}

// readFile reads a file (relative, already resolved) of at most limit
// bytes through the os.Root, which refuses any escape a second time.
func (t *tree) readFile(rel string, limit int64) ([]byte, error) {
	fi, err := t.root.Stat(rel)
	if err != nil {
		return nil, render.Bare(err)
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%d bytes is more than %d: %w", fi.Size(), limit, render.ErrTooLarge)
	}
	data, err := t.root.ReadFile(rel)
	if err != nil {
		return nil, render.Bare(err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("more than %d bytes: %w", limit, render.ErrTooLarge)
	}
	return data, nil
}

// loadChart reads the chart directory dir (relative to the tree) into
// memory the way Helm's loader.LoadDir does (.helmignore honoured,
// symlinks followed), except that nothing outside the tree is read and
// sizes and file counts are bounded.
func (t *tree) loadChart(dir string) (*chart.Chart, error) {
	top, err := t.resolve(dir)
	if err != nil {
		return nil, fmt.Errorf("chart directory: %w", err)
	}
	fi, err := t.root.Stat(top)
	if err != nil {
		return nil, fmt.Errorf("chart directory %q: %w", filepath.ToSlash(dir), render.Bare(err))
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("chart directory %q is not a directory", filepath.ToSlash(dir))
	}
	rules := ignore.Empty()
	ignorePath := filepath.Join(top, ignore.HelmIgnore)
	if ifi, err := t.root.Lstat(ignorePath); err == nil && ifi.Mode().IsRegular() {
		data, err := t.readFile(ignorePath, maxChartFileSize)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", ignore.HelmIgnore, err)
		}
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("parse %s: %w", ignore.HelmIgnore, err)
		}
	}
	rules.AddDefaults()

	w := chartWalker{t: t, rules: rules, budget: maxChartLoadBytes}
	if err := w.walk(top, "", 0); err != nil {
		return nil, err
	}
	ch, err := loader.LoadFiles(w.files)
	if err != nil {
		return nil, fmt.Errorf("load chart %q: %w", filepath.ToSlash(dir), err)
	}
	return ch, nil
}

type chartWalker struct {
	t      *tree
	rules  *ignore.Rules
	files  []*loader.BufferedFile
	budget int64
}

// walk visits dir (tree-relative, resolved), whose chart-relative name is
// name ("" for the chart's top directory).
func (w *chartWalker) walk(dir, name string, depth int) error {
	if depth > maxChartDirDepth {
		return fmt.Errorf("chart directory %q is nested too deep (symlink loop?)", name)
	}
	f, err := w.t.root.Open(dir)
	if err != nil {
		return fmt.Errorf("open chart directory %q: %w", name, render.Bare(err))
	}
	entries, err := f.ReadDir(-1)
	_ = f.Close()
	if err != nil {
		return fmt.Errorf("read chart directory %q: %w", name, render.Bare(err))
	}
	for _, e := range entries {
		entryName := path.Join(name, e.Name())
		entryPath := filepath.Join(dir, e.Name())
		fi, err := e.Info()
		if err != nil {
			return fmt.Errorf("stat chart file %q: %w", entryName, render.Bare(err))
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			// Follow links as Helm does, but only inside the tree.
			if entryPath, err = w.t.resolve(filepath.ToSlash(entryPath)); err != nil {
				return fmt.Errorf("chart file %q: %w", entryName, err)
			}
			if fi, err = w.t.root.Stat(entryPath); err != nil {
				return fmt.Errorf("stat chart file %q: %w", entryName, render.Bare(err))
			}
		}
		if fi.IsDir() {
			if w.rules.Ignore(entryName, fi) {
				continue
			}
			if err := w.walk(entryPath, entryName, depth+1); err != nil {
				return err
			}
			continue
		}
		if w.rules.Ignore(entryName, fi) {
			continue
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("chart file %q is not a regular file", entryName)
		}
		if len(w.files) >= maxChartFiles {
			return fmt.Errorf("chart has more than %d files: %w", maxChartFiles, render.ErrTooLarge)
		}
		data, err := w.t.readFile(entryPath, min(maxChartFileSize, w.budget))
		if err != nil {
			return fmt.Errorf("read chart file %q: %w", entryName, err)
		}
		w.budget -= int64(len(data))
		w.files = append(w.files, &loader.BufferedFile{Name: entryName, Data: bytes.TrimPrefix(data, utf8BOM)})
	}
	return nil
}

// relPath cleans a slash path relative to the tree and refuses absolute
// paths and paths that climb out of it.
func relPath(p string) (string, error) {
	if p == "" {
		return ".", nil
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) {
		return "", fmt.Errorf("path %q is absolute: %w", p, render.ErrOutsideRoot)
	}
	c := filepath.Clean(filepath.FromSlash(p))
	if c != "." && !filepath.IsLocal(c) {
		return "", fmt.Errorf("path %q leaves the repository: %w", p, render.ErrOutsideRoot)
	}
	return c, nil
}
