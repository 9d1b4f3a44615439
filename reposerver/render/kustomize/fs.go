package kustomize

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/graphcd/graphcd/reposerver/render"
)

// virtualRoot is where the checkout appears to kustomize. kustomize never
// sees the real checkout path, so its messages cannot leak the server's
// directory layout, and any absolute path outside it is refused.
const virtualRoot = "/repo"

// errReadOnly is returned by every write: rendering never changes anything.
var errReadOnly = errors.New("the repository file system is read-only")

// repoFS is the filesys.FileSystem kustomize renders from. It serves the
// checkout read-only and lazily from disk, confined to the repository root
// (symlinks included), with a few files replaced by in-memory versions (the
// app's kustomization with Argo CD's overrides applied). Every kustomization
// it serves is checked for remote references and Helm charts before
// kustomize sees it, since kustomize would fetch those itself. Reads stop
// once ctx is done and are bounded in size.
type repoFS struct {
	ctx  context.Context
	root *os.Root
	// dir is the repository root as given; ResolveInRoot resolves from it.
	dir string
	// realDir is dir with its own symlinks resolved.
	realDir string
	overlay map[string][]byte // virtual path -> content

	maxFile int64 // bytes of one file

	mu      sync.Mutex
	budget  int64 // bytes still readable during this render
	refused error // first refusal (outside root, remote, helm), reported by Render
}

func newRepoFS(ctx context.Context, dir string, limits render.Limits) (*repoFS, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("repository root must be absolute")
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("resolve repository root: %w", cause(err))
	}
	root, err := os.OpenRoot(realDir)
	if err != nil {
		return nil, fmt.Errorf("open repository root: %w", cause(err))
	}
	limits = limits.WithDefaults()
	return &repoFS{
		ctx:     ctx,
		root:    root,
		dir:     dir,
		realDir: realDir,
		overlay: map[string][]byte{},
		maxFile: limits.MaxCombinedSize,
		budget:  readBudgetFactor * limits.MaxCombinedSize,
	}, nil
}

// readBudgetFactor bounds the bytes one render may read, as a multiple of
// the combined output limit: bases shared by several overlays are read once
// per use, so input may exceed output, but not without bound.
const readBudgetFactor = 4

func (f *repoFS) close() { _ = f.root.Close() }

// refuse records err (outside the root, remote, too large) as the reason
// the render failed, unless an earlier refusal is recorded, and returns it.
// Render reports the refusal even where kustomize's own error lost it.
func (f *repoFS) refuse(err error) error {
	f.mu.Lock()
	if f.refused == nil {
		f.refused = err
	}
	f.mu.Unlock()
	return err
}

func (f *repoFS) refusal() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused
}

// virtualPath cleans name (absolute, or relative to the virtual root) and
// returns it with its path relative to the repository root.
func (f *repoFS) virtualPath(name string) (vpath, rel string, err error) {
	if err := f.ctx.Err(); err != nil {
		return "", "", err
	}
	name = filepath.ToSlash(name)
	if !path.IsAbs(name) {
		name = path.Join(virtualRoot, name)
	}
	vpath = path.Clean(name)
	switch {
	case vpath == virtualRoot:
		return vpath, ".", nil
	case strings.HasPrefix(vpath, virtualRoot+"/"):
		return vpath, vpath[len(virtualRoot)+1:], nil
	}
	return "", "", f.refuse(fmt.Errorf("%q: %w", shownPath(vpath), render.ErrOutsideRoot))
}

// resolve maps name to a path relative to the repository root with every
// symlink resolved, refusing anything that leaves the root.
func (f *repoFS) resolve(name string) (vpath, rel string, err error) {
	vpath, rel, err = f.virtualPath(name)
	if err != nil {
		return "", "", err
	}
	if _, ok := f.overlay[vpath]; ok {
		return vpath, rel, nil
	}
	abs, err := render.ResolveInRoot(f.dir, rel)
	if err != nil {
		if errors.Is(err, render.ErrOutsideRoot) {
			return "", "", f.refuse(err)
		}
		return "", "", err
	}
	resolved, err := filepath.Rel(f.realDir, abs)
	if err != nil || resolved == ".." || strings.HasPrefix(resolved, "../") {
		return "", "", f.refuse(fmt.Errorf("%q: %w", shownPath(vpath), render.ErrOutsideRoot))
	}
	resolved = filepath.ToSlash(resolved)
	if resolved == "." {
		return virtualRoot, ".", nil
	}
	return virtualRoot + "/" + resolved, resolved, nil
}

// shownPath is a virtual path as messages show it.
func shownPath(vpath string) string {
	if rel, ok := strings.CutPrefix(vpath, virtualRoot+"/"); ok {
		return rel
	}
	return vpath
}

func (f *repoFS) stat(name string) (vpath, rel string, fi fs.FileInfo, err error) {
	vpath, rel, err = f.resolve(name)
	if err != nil {
		return "", "", nil, err
	}
	if data, ok := f.overlay[vpath]; ok {
		return vpath, rel, memInfo{name: path.Base(vpath), size: int64(len(data))}, nil
	}
	fi, err = f.root.Stat(rel)
	if err != nil {
		return "", "", nil, fmt.Errorf("stat %q: %w", shownPath(vpath), cause(err))
	}
	return vpath, rel, fi, nil
}

// Create implements filesys.FileSystem; the file system is read-only.
func (f *repoFS) Create(string) (filesys.File, error) { return nil, errReadOnly }

// Mkdir implements filesys.FileSystem; the file system is read-only.
func (f *repoFS) Mkdir(string) error { return errReadOnly }

// MkdirAll implements filesys.FileSystem; the file system is read-only.
func (f *repoFS) MkdirAll(string) error { return errReadOnly }

// RemoveAll implements filesys.FileSystem; the file system is read-only.
func (f *repoFS) RemoveAll(string) error { return errReadOnly }

// WriteFile implements filesys.FileSystem; the file system is read-only.
func (f *repoFS) WriteFile(string, []byte) error { return errReadOnly }

// Open implements filesys.FileSystem for reading.
func (f *repoFS) Open(name string) (filesys.File, error) {
	vpath, rel, err := f.resolve(name)
	if err != nil {
		return nil, err
	}
	if data, ok := f.overlay[vpath]; ok {
		return &memFile{Reader: bytes.NewReader(data), info: memInfo{name: path.Base(vpath), size: int64(len(data))}}, nil
	}
	file, err := f.root.Open(rel)
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", shownPath(vpath), cause(err))
	}
	return file, nil
}

// IsDir implements filesys.FileSystem.
func (f *repoFS) IsDir(name string) bool {
	_, _, fi, err := f.stat(name)
	return err == nil && fi.IsDir()
}

// Exists implements filesys.FileSystem.
func (f *repoFS) Exists(name string) bool {
	_, _, _, err := f.stat(name)
	return err == nil
}

// ReadDir implements filesys.FileSystem: the names in the directory.
func (f *repoFS) ReadDir(name string) ([]string, error) {
	vpath, rel, err := f.resolve(name)
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(f.root.FS(), rel)
	if err != nil {
		return nil, fmt.Errorf("read directory %q: %w", shownPath(vpath), cause(err))
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names, nil
}

// CleanedAbs implements filesys.FileSystem: like kustomize's on-disk file
// system it resolves symlinks and splits off the file name unless the whole
// path is a directory.
func (f *repoFS) CleanedAbs(name string) (filesys.ConfirmedDir, string, error) {
	vpath, _, fi, err := f.stat(name)
	if err != nil {
		return "", "", err
	}
	if fi.IsDir() {
		return filesys.ConfirmedDir(vpath), "", nil
	}
	return filesys.ConfirmedDir(path.Dir(vpath)), path.Base(vpath), nil
}

// Glob implements filesys.FileSystem. Patterns are matched inside the
// repository only.
func (f *repoFS) Glob(pattern string) ([]string, error) {
	vpath, rel, err := f.virtualPath(pattern)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return []string{vpath}, nil
	}
	matches, err := fs.Glob(f.root.FS(), rel)
	if err != nil {
		return nil, fmt.Errorf("glob %q: %w", shownPath(vpath), err)
	}
	for i, m := range matches {
		matches[i] = virtualRoot + "/" + m
	}
	return matches, nil
}

// ReadFile implements filesys.FileSystem. Files are bounded in size, and a
// kustomization or builtin plugin configuration is checked for references
// kustomize would fetch over the network before it is returned.
func (f *repoFS) ReadFile(name string) ([]byte, error) {
	vpath, rel, err := f.resolve(name)
	if err != nil {
		return nil, err
	}
	data, ok := f.overlay[vpath]
	if !ok {
		data, err = f.readDisk(vpath, rel)
		if err != nil {
			return nil, err
		}
	}
	if err := f.take(int64(len(data))); err != nil {
		return nil, err
	}
	if err := checkFile(path.Base(vpath), data); err != nil {
		return nil, f.refuse(fmt.Errorf("%s: %w", shownPath(vpath), err))
	}
	return data, nil
}

func (f *repoFS) readDisk(vpath, rel string) ([]byte, error) {
	file, err := f.root.Open(rel)
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", shownPath(vpath), cause(err))
	}
	defer func() { _ = file.Close() }()
	fi, err := file.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", shownPath(vpath), cause(err))
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("read %q: is a directory", shownPath(vpath))
	}
	data, err := io.ReadAll(io.LimitReader(file, f.maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", shownPath(vpath), cause(err))
	}
	if int64(len(data)) > f.maxFile {
		return nil, f.refuse(fmt.Errorf("read %q: file larger than %d bytes: %w", shownPath(vpath), f.maxFile, render.ErrTooLarge))
	}
	return data, nil
}

// take charges n bytes to the render's read budget.
func (f *repoFS) take(n int64) error {
	f.mu.Lock()
	over := n > f.budget
	if !over {
		f.budget -= n
	}
	f.mu.Unlock()
	if over {
		return f.refuse(fmt.Errorf("kustomize read more than %d bytes in total: %w", readBudgetFactor*f.maxFile, render.ErrTooLarge))
	}
	return nil
}

// Walk implements filesys.FileSystem inside the repository.
func (f *repoFS) Walk(name string, walkFn filepath.WalkFunc) error {
	vpath, rel, err := f.resolve(name)
	if err != nil {
		return err
	}
	return fs.WalkDir(f.root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if ctxErr := f.ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		sub := p
		if rel != "." {
			sub = strings.TrimPrefix(strings.TrimPrefix(p, rel), "/")
		}
		vp := path.Join(vpath, sub)
		if err != nil {
			return walkFn(vp, nil, err)
		}
		info, infoErr := d.Info()
		if infoErr != nil {
			return walkFn(vp, nil, infoErr)
		}
		return walkFn(vp, info, nil)
	})
}

// cause strips the *fs.PathError around an OS error: its path is the real
// one on disk, which messages must not show.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// memFile is an overlay file opened for reading.
type memFile struct {
	*bytes.Reader
	info memInfo
}

func (m *memFile) Write([]byte) (int, error)  { return 0, errReadOnly }
func (m *memFile) Close() error               { return nil }
func (m *memFile) Stat() (os.FileInfo, error) { return m.info, nil }

// memInfo describes an overlay file.
type memInfo struct {
	name string
	size int64
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return 0o444 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }

var _ filesys.FileSystem = (*repoFS)(nil)
