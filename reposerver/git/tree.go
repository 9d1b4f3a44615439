package git

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxSymlinkTarget bounds the target a symlink of a checkout may name
// (Linux's PATH_MAX).
const maxSymlinkTarget = 4096

// checkoutLimits bound what one checkout of a tree writes. A tree may name
// the same subtree or blob any number of times, so a pack of a few
// kilobytes can expand to billions of paths or terabytes of files (a "git
// bomb"): what a fetch transfers says nothing of what its checkout costs.
type checkoutLimits struct {
	files int   // files, symlinks and submodules
	bytes int64 // sum of the files' sizes
}

// defaultCheckoutLimits leave room for the largest monorepos Argo CD users
// deploy from (tens of thousands of files, a few hundred megabytes).
var defaultCheckoutLimits = checkoutLimits{files: 1_000_000, bytes: 4 << 30}

// ErrTreeTooLarge is returned for a commit's tree that holds more files
// or bytes than a checkout writes or a commit reads.
var ErrTreeTooLarge = errors.New("the commit's tree is too large")

// checkoutTree makes repo's worktree show the tree of commit hash, writes
// that tree into the index and points HEAD at the commit, as
// `git read-tree --reset -u` and `git checkout --detach` do. It walks the
// tree once: go-git's Worktree.Checkout looks each changed path up from
// the root tree again, decoding every directory on the way, which costs
// the square of a directory's size (20 CPU-seconds for a commit changing
// 10,000 files of one directory). A file the index already records with
// the same blob, mode, size and modification time is left as it is;
// any other is written anew, after whatever stands in its place (a
// renderer's edit, a symlink, a directory) is removed. What the new index
// does not track is for removeUntracked to delete.
//
// Every path is checked (no "..", ".", empty or ".git" part) and every
// write goes through an os.Root of the worktree, so a hostile tree cannot
// write outside it or into the repository's own files. A tree past lim
// fails with ErrTreeTooLarge, leaving the worktree part written (the
// next checkout starts over). It returns the index it wrote.
func checkoutTree(repo *gogit.Repository, hash plumbing.Hash, lim checkoutLimits) (*index.Index, error) {
	wt, err := repo.Worktree()
	if err != nil {
		return nil, err
	}
	commit, err := repo.CommitObject(hash)
	if err != nil {
		return nil, err
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(wt.Filesystem.Root())
	if err != nil {
		return nil, err
	}
	defer func() { _ = root.Close() }()
	old := map[string]*index.Entry{}
	if idx, err := repo.Storer.Index(); err == nil {
		for _, e := range idx.Entries {
			old[e.Name] = e
		}
	} // an unreadable index: every file is written anew
	w := &treeWriter{repo: repo, root: root, dirs: map[string]bool{}}
	next := &index.Index{Version: 2}
	var size int64
	err = walkFiles(tree, lim.files, func(name string, e object.TreeEntry) error {
		if err := checkoutPath(name); err != nil {
			return err
		}
		entry, err := w.place(name, e, old[name], lim.bytes-size)
		if err != nil {
			return fmt.Errorf("check out %q: %w", name, err)
		}
		size += int64(entry.Size)
		next.Entries = append(next.Entries, entry)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(next.Entries, func(a, b *index.Entry) int { return strings.Compare(a.Name, b.Name) })
	if err := repo.Storer.SetIndex(next); err != nil {
		return nil, fmt.Errorf("write index: %w", err)
	}
	return next, repo.Storer.SetReference(plumbing.NewHashReference(plumbing.HEAD, hash))
}

// walkFiles calls fn with the path and entry of every file, symlink and
// submodule of tree, and fails with ErrTreeTooLarge past maxFiles of them.
func walkFiles(tree *object.Tree, maxFiles int, fn func(name string, e object.TreeEntry) error) error {
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	n := 0
	for {
		name, e, err := walker.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read tree: %w", err)
		}
		if e.Mode == filemode.Dir {
			continue // walked into, not reported
		}
		if n++; n > maxFiles {
			return fmt.Errorf("%w: more than %d files", ErrTreeTooLarge, maxFiles)
		}
		if err := fn(name, e); err != nil {
			return err
		}
	}
}

// checkoutPath refuses a tree path that is not a plain relative path
// inside the worktree, or that reaches into a .git directory.
func checkoutPath(name string) error {
	for part := range strings.SplitSeq(name, "/") {
		if part == "" || part == "." || part == ".." || strings.EqualFold(part, gogit.GitDirName) {
			return fmt.Errorf("the tree holds the path %q, which no checkout writes", name)
		}
	}
	return nil
}

// treeWriter writes a tree's files into a worktree.
type treeWriter struct {
	repo *gogit.Repository
	root *os.Root
	// dirs are the directories known to stand, as directories.
	dirs map[string]bool
}

// place makes name show the tree entry e and returns its index entry; old
// is the index entry the worktree had for name, if any. A file larger
// than room bytes is not written (ErrTreeTooLarge).
func (w *treeWriter) place(name string, e object.TreeEntry, old *index.Entry, room int64) (*index.Entry, error) {
	if err := w.mkdirs(path.Dir(name)); err != nil {
		return nil, err
	}
	fi, err := w.root.Lstat(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if e.Mode == filemode.Submodule {
		// An empty directory, which a submodule update fills.
		if fi != nil && !fi.IsDir() {
			if err := w.root.Remove(name); err != nil {
				return nil, err
			}
			fi = nil
		}
		if fi == nil {
			if err := w.root.Mkdir(name, 0o750); err != nil {
				return nil, err
			}
		}
		return &index.Entry{Name: name, Hash: e.Hash, Mode: e.Mode}, nil
	}
	if fi != nil && old != nil && old.Hash == e.Hash && old.Mode == e.Mode && unchanged(fi, old) && int64(old.Size) <= room {
		return old, nil
	}
	// A regular file is written over; anything else (a symlink, a
	// directory) is removed first, so no write follows a link.
	if fi != nil && (!fi.Mode().IsRegular() || e.Mode == filemode.Symlink) {
		if err := w.root.RemoveAll(name); err != nil {
			return nil, err
		}
		fi = nil
	}
	if fi, err = w.write(name, e, fi != nil, room); err != nil {
		return nil, err
	}
	return &index.Entry{Name: name, Hash: e.Hash, Mode: e.Mode, Size: uint32(fi.Size()), ModifiedAt: fi.ModTime()}, nil //nolint:gosec // git's index keeps sizes modulo 2^32
}

// unchanged reports whether fi is still the file the index entry old
// recorded.
func unchanged(fi fs.FileInfo, old *index.Entry) bool {
	if (old.Mode == filemode.Symlink) != (fi.Mode().Type() == fs.ModeSymlink) {
		return false
	}
	if old.Mode != filemode.Symlink && (!fi.Mode().IsRegular() || (old.Mode == filemode.Executable) != (fi.Mode().Perm()&0o100 != 0)) {
		return false
	}
	return uint32(fi.Size()) == old.Size && fi.ModTime().Equal(old.ModifiedAt) //nolint:gosec // as the index keeps it
}

// write makes name the blob of e, over the regular file there when
// exists (nothing else stands there), and returns what it wrote. A blob
// larger than room bytes is not written.
func (w *treeWriter) write(name string, e object.TreeEntry, exists bool, room int64) (fs.FileInfo, error) {
	blob, err := w.repo.BlobObject(e.Hash)
	if err != nil {
		return nil, err
	}
	if blob.Size > room {
		return nil, fmt.Errorf("%w: more than %d bytes of files", ErrTreeTooLarge, room)
	}
	r, err := blob.Reader()
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	if e.Mode == filemode.Symlink {
		target, err := io.ReadAll(io.LimitReader(r, maxSymlinkTarget+1))
		if err != nil {
			return nil, err
		}
		if len(target) > maxSymlinkTarget || len(target) == 0 {
			return nil, fmt.Errorf("a symlink's target of %d bytes", len(target))
		}
		// An absolute target is taken inside the worktree, as go-git's
		// chrooted worktree writes it: no link of a checkout names a path
		// outside it by itself.
		link := filepath.FromSlash(string(target))
		if filepath.IsAbs(link) {
			link = filepath.Join(w.root.Name(), link)
		}
		if err := w.root.Symlink(link, name); err != nil {
			return nil, err
		}
		return w.root.Lstat(name)
	}
	perm := fs.FileMode(0o644)
	if e.Mode == filemode.Executable {
		perm = 0o755
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if exists {
		flags = os.O_WRONLY | os.O_TRUNC
	}
	f, err := w.root.OpenFile(name, flags, perm)
	if err != nil {
		return nil, err
	}
	fi, err := copyBlob(f, r, perm, exists)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return fi, nil
}

// copyBlob copies r into f and gives it perm when it existed before.
func copyBlob(f *os.File, r io.Reader, perm fs.FileMode, existed bool) (fs.FileInfo, error) {
	if existed {
		if err := f.Chmod(perm); err != nil {
			return nil, err
		}
	}
	if _, err := io.Copy(f, r); err != nil {
		return nil, err
	}
	return f.Stat()
}

// mkdirs makes dir and its parents directories, removing a file or
// symlink that stands in the way of one.
func (w *treeWriter) mkdirs(dir string) error {
	if dir == "." || w.dirs[dir] {
		return nil
	}
	if err := w.mkdirs(path.Dir(dir)); err != nil {
		return err
	}
	fi, err := w.root.Lstat(dir)
	switch {
	case err == nil && fi.IsDir():
	case err == nil:
		if err := w.root.Remove(dir); err != nil {
			return err
		}
		fallthrough
	case errors.Is(err, fs.ErrNotExist):
		if err := w.root.Mkdir(dir, 0o750); err != nil {
			return err
		}
	default:
		return err
	}
	w.dirs[dir] = true
	return nil
}
