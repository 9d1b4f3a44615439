package kustomize

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/reposerver/render"
)

// virtualRoot is where the checkout appears to kustomize. kustomize never
// sees the real checkout path, so its messages cannot leak the server's
// directory layout, and any absolute path outside it is refused.
const virtualRoot = "/repo"

// remoteRoot holds the copies of remote bases' repositories, one at
// /remote/N each, and fetchedRoot the files of http(s) resources, at
// /fetched/N/NAME.
const (
	remoteRoot  = "/remote"
	fetchedRoot = "/fetched"
)

// errReadOnly is returned by every write: rendering never changes anything.
var errReadOnly = errors.New("the repository file system is read-only")

// repoFS is the filesys.FileSystem kustomize renders from. It serves the
// checkout read-only and lazily from disk, confined to the repository root
// (symlinks included), with a few files replaced by in-memory versions (the
// app's kustomization with Argo CD's overrides applied). The remote bases
// the caller fetched are served the same way, each confined to its own
// repository's copy, and the kustomizations that name them (or files at a
// URL the caller fetched) see their virtual paths instead. Every
// kustomization it serves is checked for other remote references and Helm
// charts before kustomize sees it, since kustomize would fetch those
// itself. Reads stop once ctx is done and are bounded in size.
type repoFS struct {
	ctx    context.Context
	mounts []*mount
	// overlay holds in-memory files by virtual path.
	overlay map[string][]byte
	// remotes maps a remote entry, as kustomizations write it, to the
	// virtual path the caller fetched it to.
	remotes map[string]string
	// prepared are the kustomizations as prepare rewrote them, by path
	// and content.
	prepared map[string][]byte
	// build are the kustomize.buildOptions; req is the render's request
	// (charts to inflate, capabilities, limits).
	build buildOptions
	req   render.Request

	maxFile int64 // bytes of one file

	mu      sync.Mutex
	budget  int64 // bytes still readable during this render
	refused error // first refusal (outside root, remote, helm), reported by Render
}

// mount is a directory tree served at a virtual path.
type mount struct {
	vroot string
	root  *os.Root
	// dir is the tree's root as given; ResolveInRoot resolves from it.
	dir string
	// realDir is dir with its own symlinks resolved.
	realDir string
}

func newMount(vroot, dir string) (*mount, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("repository root must be absolute")
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("resolve repository root: %w", render.Bare(err))
	}
	root, err := os.OpenRoot(realDir)
	if err != nil {
		return nil, fmt.Errorf("open repository root: %w", render.Bare(err))
	}
	return &mount{vroot: vroot, root: root, dir: dir, realDir: realDir}, nil
}

// newRepoFS serves req's checkout at virtualRoot, with its remote bases
// and fetched files.
func newRepoFS(ctx context.Context, req render.Request, build buildOptions) (*repoFS, error) {
	limits := req.Limits.WithDefaults()
	f := &repoFS{
		ctx:      ctx,
		overlay:  map[string][]byte{},
		remotes:  map[string]string{},
		prepared: map[string][]byte{},
		build:    build,
		req:      req,
		maxFile:  limits.MaxCombinedSize,
		budget:   readBudgetFactor * limits.MaxCombinedSize,
	}
	m, err := newMount(virtualRoot, req.RepoRoot)
	if err != nil {
		return nil, err
	}
	f.mounts = append(f.mounts, m)
	byRoot := map[string]string{}
	for _, ref := range slices.Sorted(maps.Keys(req.RemoteBases)) {
		b := req.RemoteBases[ref]
		vroot, ok := byRoot[b.Root]
		if !ok {
			vroot = fmt.Sprintf("%s/%d", remoteRoot, len(byRoot))
			m, err := newMount(vroot, b.Root)
			if err != nil {
				f.close()
				return nil, fmt.Errorf("remote base %q: %w", repourl.Redact(ref), err)
			}
			f.mounts = append(f.mounts, m)
			byRoot[b.Root] = vroot
		}
		f.remotes[ref] = path.Join(vroot, b.Path)
	}
	n := 0
	for _, ref := range slices.Sorted(maps.Keys(req.FetchedFiles)) {
		if !isRemoteFile(ref) {
			continue
		}
		name := "file.yaml"
		if u, err := url.Parse(ref); err == nil && path.Base(u.Path) != "/" && path.Base(u.Path) != "." {
			name = path.Base(u.Path)
		}
		vpath := fmt.Sprintf("%s/%d/%s", fetchedRoot, n, name)
		n++
		f.overlay[vpath] = req.FetchedFiles[ref]
		f.remotes[ref] = vpath
	}
	return f, nil
}

// readBudgetFactor bounds the bytes one render may read, as a multiple of
// the combined output limit: bases shared by several overlays are read once
// per use, so input may exceed output, but not without bound.
const readBudgetFactor = 4

func (f *repoFS) close() {
	for _, m := range f.mounts {
		_ = m.root.Close()
	}
}

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
// returns the mount it is in, with its path relative to the mount's root.
// An overlay file outside every mount has no mount.
func (f *repoFS) virtualPath(name string) (m *mount, vpath, rel string, err error) {
	if err := f.ctx.Err(); err != nil {
		return nil, "", "", err
	}
	name = filepath.ToSlash(name)
	if !path.IsAbs(name) {
		name = path.Join(virtualRoot, name)
	}
	vpath = path.Clean(name)
	for _, m := range f.mounts {
		switch {
		case vpath == m.vroot:
			return m, vpath, ".", nil
		case strings.HasPrefix(vpath, m.vroot+"/"):
			return m, vpath, vpath[len(m.vroot)+1:], nil
		}
	}
	if _, ok := f.overlay[vpath]; ok {
		return nil, vpath, path.Base(vpath), nil
	}
	return nil, "", "", f.refuse(fmt.Errorf("%q: %w", shownPath(vpath), render.ErrOutsideRoot))
}

// resolve maps name to its mount and its path relative to the mount's
// root with every symlink resolved, refusing anything that leaves the
// mount.
func (f *repoFS) resolve(name string) (m *mount, vpath, rel string, err error) {
	m, vpath, rel, err = f.virtualPath(name)
	if err != nil {
		return nil, "", "", err
	}
	if _, ok := f.overlay[vpath]; ok {
		return m, vpath, rel, nil
	}
	abs, err := render.ResolveInRoot(m.dir, rel)
	if err != nil {
		if errors.Is(err, render.ErrOutsideRoot) {
			return nil, "", "", f.refuse(err)
		}
		return nil, "", "", err
	}
	resolved, err := filepath.Rel(m.realDir, abs)
	if err != nil || resolved == ".." || strings.HasPrefix(resolved, "../") {
		return nil, "", "", f.refuse(fmt.Errorf("%q: %w", shownPath(vpath), render.ErrOutsideRoot))
	}
	resolved = filepath.ToSlash(resolved)
	if resolved == "." {
		return m, m.vroot, ".", nil
	}
	return m, m.vroot + "/" + resolved, resolved, nil
}

// shownPath is a virtual path as messages show it.
func shownPath(vpath string) string {
	if rel, ok := strings.CutPrefix(vpath, virtualRoot+"/"); ok {
		return rel
	}
	return vpath
}

func (f *repoFS) stat(name string) (vpath string, fi fs.FileInfo, err error) {
	m, vpath, rel, err := f.resolve(name)
	if err != nil {
		return "", nil, err
	}
	if data, ok := f.overlay[vpath]; ok {
		return vpath, memInfo{name: path.Base(vpath), size: int64(len(data))}, nil
	}
	fi, err = m.root.Stat(rel)
	if err != nil {
		return "", nil, fmt.Errorf("stat %q: %w", shownPath(vpath), render.Bare(err))
	}
	return vpath, fi, nil
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
	m, vpath, rel, err := f.resolve(name)
	if err != nil {
		return nil, err
	}
	if data, ok := f.overlay[vpath]; ok {
		return &memFile{Reader: bytes.NewReader(data), info: memInfo{name: path.Base(vpath), size: int64(len(data))}}, nil
	}
	file, err := m.root.Open(rel)
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", shownPath(vpath), render.Bare(err))
	}
	return file, nil
}

// IsDir implements filesys.FileSystem.
func (f *repoFS) IsDir(name string) bool {
	_, fi, err := f.stat(name)
	return err == nil && fi.IsDir()
}

// Exists implements filesys.FileSystem.
func (f *repoFS) Exists(name string) bool {
	_, _, err := f.stat(name)
	return err == nil
}

// ReadDir implements filesys.FileSystem: the names in the directory.
func (f *repoFS) ReadDir(name string) ([]string, error) {
	m, vpath, rel, err := f.resolve(name)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("read directory %q: not a directory", shownPath(vpath))
	}
	entries, err := fs.ReadDir(m.root.FS(), rel)
	if err != nil {
		return nil, fmt.Errorf("read directory %q: %w", shownPath(vpath), render.Bare(err))
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
	vpath, fi, err := f.stat(name)
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
	m, vpath, rel, err := f.virtualPath(pattern)
	if err != nil {
		return nil, err
	}
	if m == nil || rel == "." {
		return []string{vpath}, nil
	}
	matches, err := fs.Glob(m.root.FS(), rel)
	if err != nil {
		return nil, fmt.Errorf("glob %q: %w", shownPath(vpath), err)
	}
	for i, match := range matches {
		matches[i] = m.vroot + "/" + match
	}
	return matches, nil
}

// ReadFile implements filesys.FileSystem. Files are bounded in size, and a
// kustomization or builtin plugin configuration is checked for references
// kustomize would fetch over the network before it is returned.
func (f *repoFS) ReadFile(name string) ([]byte, error) {
	m, vpath, rel, err := f.resolve(name)
	if err != nil {
		return nil, err
	}
	data, ok := f.overlay[vpath]
	if !ok {
		data, err = f.readDisk(m, vpath, rel)
		if err != nil {
			return nil, err
		}
	}
	if err := f.take(int64(len(data))); err != nil {
		return nil, err
	}
	if data, err = f.prepare(vpath, data); err != nil {
		return nil, f.refuse(fmt.Errorf("%s: %w", shownPath(vpath), err))
	}
	if err := checkFile(path.Base(vpath), data); err != nil {
		return nil, f.refuse(fmt.Errorf("%s: %w", shownPath(vpath), err))
	}
	return data, nil
}

func (f *repoFS) readDisk(m *mount, vpath, rel string) ([]byte, error) {
	file, err := m.root.Open(rel)
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", shownPath(vpath), render.Bare(err))
	}
	defer func() { _ = file.Close() }()
	fi, err := file.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", shownPath(vpath), render.Bare(err))
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("read %q: is a directory", shownPath(vpath))
	}
	data, err := io.ReadAll(io.LimitReader(file, f.maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", shownPath(vpath), render.Bare(err))
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
	m, vpath, rel, err := f.resolve(name)
	if err != nil {
		return err
	}
	if m == nil {
		fi, err := f.Open(vpath)
		if err != nil {
			return walkFn(vpath, nil, err)
		}
		info, err := fi.Stat()
		_ = fi.Close()
		return walkFn(vpath, info, err)
	}
	return fs.WalkDir(m.root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
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
