package plugin

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/graphcd/graphcd/reposerver/render"
)

// errUnsafeArchive is wrapped by every refusal of a tar entry.
var errUnsafeArchive = errors.New("unsafe repository archive")

// writeRepoTar streams the repository at root as a tar archive: regular
// files, directories and symlinks, skipping every .git entry. A symlink
// whose target resolves outside the repository fails the whole archive
// with render.ErrOutsideRoot; the others are sent with their target
// rewritten to the resolved path, relative to the link, so the receiver
// never has to follow one link through another.
func writeRepoTar(ctx context.Context, w io.Writer, root string) error {
	realRoot, err := render.ResolveInRoot(root, ".")
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	err = filepath.WalkDir(realRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read repository: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == realRoot {
			return nil
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(realRoot, p)
		if err != nil {
			return fmt.Errorf("read repository: %w", err)
		}
		name := filepath.ToSlash(rel)
		switch t := d.Type(); {
		case d.IsDir():
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755})
		case t&fs.ModeSymlink != 0:
			return writeLink(tw, realRoot, rel, name)
		case t.IsRegular():
			return writeFile(tw, p, name)
		default:
			return nil // sockets, pipes, devices: nothing a checkout holds
		}
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

func writeLink(tw *tar.Writer, realRoot, rel, name string) error {
	target, err := render.ResolveInRoot(realRoot, rel)
	if err != nil {
		return fmt.Errorf("symlink %s: %w", name, err)
	}
	linkDir := filepath.Join(realRoot, filepath.Dir(rel))
	relTarget, err := filepath.Rel(linkDir, target)
	if err != nil {
		return fmt.Errorf("symlink %s: %w", name, err)
	}
	return tw.WriteHeader(&tar.Header{
		Typeflag: tar.TypeSymlink,
		Name:     name,
		Linkname: filepath.ToSlash(relTarget),
		Mode:     0o777,
	})
}

func writeFile(tw *tar.Writer, p, name string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, render.Bare(err))
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("read %s: %w", name, render.Bare(err))
	}
	mode := int64(0o644)
	if fi.Mode()&0o100 != 0 {
		mode = 0o755
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: fi.Size(), Mode: mode}); err != nil {
		return err
	}
	// A file that shrank while being read fails here; one that grew is
	// cut at the size in the header.
	if _, err := io.CopyN(tw, f, fi.Size()); err != nil {
		return fmt.Errorf("read %s: %w", name, render.Bare(err))
	}
	return nil
}

// extractLimits bound what one archive may unpack to.
type extractLimits struct {
	maxBytes         int64 // sum of all file sizes
	maxEntries       int   // number of entries
	preserveFileMode bool
}

// extractRepoTar unpacks r into dir, which must be empty. It accepts
// regular files, directories and relative symlinks that stay inside dir,
// and refuses everything else: absolute or ".." names, names below a
// symlink, duplicates, links leaving dir, hard links, devices and FIFOs.
// The sum of the file sizes is bounded by limits.maxBytes, counted from
// the headers, so sparse entries cannot inflate past it.
func extractRepoTar(ctx context.Context, r io.Reader, dir string, limits extractLimits) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open work directory: %w", err)
	}
	defer func() { _ = root.Close() }()

	x := extractor{root: root, limits: limits, links: map[string]bool{}, seen: map[string]bool{}}
	tr := tar.NewReader(r)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read repository archive: %w", err)
		}
		if len(x.seen) >= limits.maxEntries {
			return fmt.Errorf("repository archive has more than %d entries: %w", limits.maxEntries, render.ErrTooLarge)
		}
		if err := x.entry(hdr, tr); err != nil {
			return err
		}
	}
}

type extractor struct {
	root   *os.Root
	limits extractLimits
	used   int64
	links  map[string]bool // symlinks created so far
	seen   map[string]bool // every name created so far
}

func (x *extractor) entry(hdr *tar.Header, body io.Reader) error {
	name, err := x.checkName(hdr.Name)
	if err != nil {
		return err
	}
	if name == "." {
		if hdr.Typeflag == tar.TypeDir {
			return nil
		}
		return fmt.Errorf("%w: entry %q names the root", errUnsafeArchive, hdr.Name)
	}
	if x.seen[name] {
		return fmt.Errorf("%w: duplicate entry %q", errUnsafeArchive, name)
	}
	x.seen[name] = true
	parent := path.Dir(name)

	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := x.root.MkdirAll(name, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", name, render.Bare(err))
		}
		return nil
	case tar.TypeReg:
		if hdr.Size < 0 || hdr.Size > x.limits.maxBytes-x.used {
			return fmt.Errorf("repository archive larger than %d bytes: %w", x.limits.maxBytes, render.ErrTooLarge)
		}
		x.used += hdr.Size
		if err := x.root.MkdirAll(parent, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", parent, render.Bare(err))
		}
		perm := os.FileMode(0o644)
		if x.limits.preserveFileMode {
			perm = os.FileMode(hdr.Mode & 0o777) //nolint:gosec // masked to 9 bits
		}
		f, err := x.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			return fmt.Errorf("create %s: %w", name, render.Bare(err))
		}
		_, err = io.CopyN(f, body, hdr.Size)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", name, render.Bare(err))
		}
		return nil
	case tar.TypeSymlink:
		if err := checkLinkTarget(name, hdr.Linkname); err != nil {
			return err
		}
		if err := x.root.MkdirAll(parent, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", parent, render.Bare(err))
		}
		if err := x.root.Symlink(hdr.Linkname, name); err != nil {
			return fmt.Errorf("create %s: %w", name, render.Bare(err))
		}
		x.links[name] = true
		return nil
	default:
		return fmt.Errorf("%w: entry %q has type %q; only files, directories and symlinks are accepted",
			errUnsafeArchive, name, string(hdr.Typeflag))
	}
}

// checkName cleans an entry name and refuses one that is absolute, climbs
// out with "..", or lies below a symlink created earlier (writing through a
// link would put the file somewhere other than its name says).
func (x *extractor) checkName(raw string) (string, error) {
	if raw == "" || strings.ContainsRune(raw, 0) || strings.HasPrefix(raw, "/") {
		return "", fmt.Errorf("%w: entry name %q", errUnsafeArchive, raw)
	}
	name := path.Clean(raw)
	if name != "." && !filepath.IsLocal(name) {
		return "", fmt.Errorf("%w: entry name %q leaves the repository", errUnsafeArchive, raw)
	}
	for p := path.Dir(name); p != "."; p = path.Dir(p) {
		if x.links[p] {
			return "", fmt.Errorf("%w: entry %q lies below symlink %q", errUnsafeArchive, raw, p)
		}
	}
	return name, nil
}

// checkLinkTarget accepts a relative target made of leading ".." steps
// that do not climb above the repository root, followed by a path without
// any "..". The link's own directory holds no symlink (checkName), so the
// ".." steps walk real directories; what follows only descends, through
// links that each obey the same rule, so the target stays inside.
func checkLinkTarget(name, target string) error {
	if target == "" || strings.HasPrefix(target, "/") || strings.ContainsRune(target, 0) {
		return fmt.Errorf("%w: symlink %q -> %q: absolute or empty target", errUnsafeArchive, name, target)
	}
	depth := strings.Count(name, "/") // directories above the link
	parts := strings.Split(target, "/")
	i := 0
	for i < len(parts) && parts[i] == ".." {
		i++
	}
	if i > depth {
		return fmt.Errorf("%w: symlink %q -> %q leaves the repository", errUnsafeArchive, name, target)
	}
	if slices.Contains(parts[i:], "..") {
		return fmt.Errorf("%w: symlink %q -> %q: \"..\" after a path component", errUnsafeArchive, name, target)
	}
	return nil
}
