package render

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxSymlinkHops bounds how many symlinks one resolution may follow, like
// the kernel's ELOOP limit, so a link cycle ends in an error.
const maxSymlinkHops = 255

// ResolveInRoot joins rel (must be relative, cleaned) onto root, resolves
// symlinks, and returns the absolute path, or an error wrapping
// ErrOutsideRoot if it (or any symlink on the way) leaves root. Error
// messages show paths relative to root only.
//
// Components that do not exist are joined as they are, so the result may
// name a missing file; opening it then fails with fs.ErrNotExist.
func ResolveInRoot(root, rel string) (string, error) {
	if root == "" {
		return "", errors.New("resolve: empty repository root")
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("resolve repository root: %w", err)
	}
	realRoot, err := filepath.EvalSymlinks(absRoot)
	if err != nil {
		return "", fmt.Errorf("resolve repository root: %w", Bare(err))
	}
	shown := filepath.ToSlash(rel)
	if filepath.IsAbs(rel) || strings.HasPrefix(shown, "/") {
		return "", fmt.Errorf("resolve %q: absolute path: %w", shown, ErrOutsideRoot)
	}

	r := resolver{root: absRoot, realRoot: realRoot, shown: shown}
	return r.walk(splitPath(rel))
}

type resolver struct {
	root     string // the root as given, made absolute
	realRoot string // the root with its own symlinks resolved
	shown    string // the requested path, for error messages
}

func (r *resolver) walk(pending []string) (string, error) {
	cur := r.realRoot
	hops := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if cur == r.realRoot {
				return "", fmt.Errorf("resolve %q: %w", r.shown, ErrOutsideRoot)
			}
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			// Nothing below a missing entry can be a symlink: finish lexically.
			cur = next
			continue
		}
		if err != nil {
			return "", fmt.Errorf("resolve %q: stat %q: %w", r.shown, r.rel(next), Bare(err))
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", fmt.Errorf("resolve %q: too many levels of symbolic links", r.shown)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("resolve %q: read symlink %q: %w", r.shown, r.rel(next), Bare(err))
		}
		if filepath.IsAbs(target) {
			inner, ok := r.inside(filepath.Clean(target))
			if !ok {
				return "", fmt.Errorf("resolve %q: symlink %q points outside the repository: %w", r.shown, r.rel(next), ErrOutsideRoot)
			}
			cur = r.realRoot
			pending = append(splitPath(inner), pending...)
			continue
		}
		// A relative target is read from the directory holding the link;
		// ".." components are checked against the root as they are walked.
		pending = append(splitPath(target), pending...)
		if len(pending) > 0 && pending[0] == ".." && cur == r.realRoot {
			return "", fmt.Errorf("resolve %q: symlink %q points outside the repository: %w", r.shown, r.rel(next), ErrOutsideRoot)
		}
	}
	return cur, nil
}

// inside reports whether abs lies within the root (as given or as resolved)
// and returns its path relative to that root.
func (r *resolver) inside(abs string) (string, bool) {
	for _, base := range []string{r.realRoot, r.root} {
		rel, err := filepath.Rel(base, abs)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return rel, true
		}
	}
	return "", false
}

// rel shows abs relative to the resolved root.
func (r *resolver) rel(abs string) string {
	rel, err := filepath.Rel(r.realRoot, abs)
	if err != nil {
		return "?"
	}
	return filepath.ToSlash(rel)
}

func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

// Bare drops the path of a *fs.PathError or *os.LinkError, keeping its
// cause: the path is the host's, which messages must never show.
func Bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
