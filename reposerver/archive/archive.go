// Package archive unpacks gzipped tar archives from untrusted sources (Helm
// chart archives, OCI artifact layers) into a fresh directory, within
// budgets of size and entries, without ever writing outside it:
//
//	err := archive.ExtractTarGz(layer, dir, archive.Options{Limits: archive.Limits{}.WithDefaults()})
//	if errors.Is(err, archive.ErrTooLarge) {
//		// the archive is larger than the limits allow
//	}
//
// Entry names that climb out of the directory or are absolute are refused.
// Symbolic links are written only when Options.Links asks for them, last,
// after every file, and only when they point inside the directory and no
// other link leads to them; hard links and devices are never written.
package archive

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/graphcd/graphcd/reposerver/render"
)

// Limits used where a Limits field is zero.
const (
	// DefaultMaxSize bounds all unpacked files of one archive: 100 MiB,
	// as Helm's own chart loader does.
	DefaultMaxSize int64 = 100 << 20
	// DefaultMaxFileSize bounds one unpacked file: 5 MiB, as Helm's
	// chart loader does.
	DefaultMaxFileSize int64 = 5 << 20
	// DefaultMaxEntries bounds the tar headers read, so an archive of
	// millions of empty entries fails instead of spinning.
	DefaultMaxEntries = 20000
)

// ErrTooLarge is wrapped when an archive (or a download that holds one)
// is over one of its limits.
var ErrTooLarge = errors.New("download size limit exceeded")

// Limits bound what one extraction writes.
type Limits struct {
	MaxSize     int64 // bytes of all files; 0 means DefaultMaxSize
	MaxFileSize int64 // bytes of one file; 0 means DefaultMaxFileSize
	MaxEntries  int   // tar headers; 0 means DefaultMaxEntries
}

// WithDefaults returns l with every zero (or negative) field set to its
// default.
func (l Limits) WithDefaults() Limits {
	if l.MaxSize <= 0 {
		l.MaxSize = DefaultMaxSize
	}
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = DefaultMaxFileSize
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	return l
}

// Options say how to unpack an archive.
type Options struct {
	Limits Limits
	// StripTop drops the first component of every entry name, as Helm
	// does with a chart's top directory; entries beside it are skipped.
	StripTop bool
	// Links writes symbolic links that stay inside the directory, and
	// refuses the archive for one that does not. Without it links are
	// skipped, as Helm's chart loader skips them.
	Links bool
}

// link is a symbolic link entry, written after every file.
type link struct {
	name, target string
}

// ExtractTarGz unpacks the gzipped tar archive r into dest, which it
// creates (its parent must exist). On error dest may hold part of the
// archive; the caller removes it.
func ExtractTarGz(r io.Reader, dest string, opts Options) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("read archive: %w", err)
	}
	defer func() { _ = gz.Close() }()
	return extractTar(tar.NewReader(gz), dest, opts)
}

func extractTar(tr *tar.Reader, dest string, opts Options) error {
	lim := opts.Limits.WithDefaults()
	if err := os.Mkdir(dest, 0o750); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", filepath.Base(dest), err)
	}
	root, err := os.OpenRoot(dest)
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()

	remaining := lim.MaxSize
	perFile := min(lim.MaxSize, lim.MaxFileSize)
	var links []link
	for entries := 0; ; entries++ {
		if entries >= lim.MaxEntries {
			return fmt.Errorf("read archive: more than %d entries: %w", lim.MaxEntries, ErrTooLarge)
		}
		hd, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read archive: %w", err)
		}
		name, err := entryName(hd.Name, opts.StripTop)
		if err != nil {
			return err
		}
		if name == "" {
			continue
		}
		switch hd.Typeflag {
		case tar.TypeReg:
			if hd.Size > perFile {
				return fmt.Errorf("read archive: file %q is larger than %d bytes: %w", name, perFile, ErrTooLarge)
			}
			if hd.Size > remaining {
				return fmt.Errorf("read archive: unpacked files are larger than %d bytes: %w", lim.MaxSize, ErrTooLarge)
			}
			n, err := writeFile(root, name, tr, hd.Size)
			remaining -= n
			if err != nil {
				return fmt.Errorf("write %q: %w", name, err)
			}
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o750); err != nil {
				return fmt.Errorf("create directory %q: %w", name, err)
			}
		case tar.TypeSymlink:
			if !opts.Links {
				continue
			}
			if err := linkInside(name, hd.Linkname); err != nil {
				return err
			}
			links = append(links, link{name: name, target: hd.Linkname})
		case tar.TypeLink:
			if opts.Links {
				return fmt.Errorf("read archive: %q is a hard link, which is not supported", name)
			}
		default:
			// Devices, FIFOs and the like are never written.
		}
	}
	return writeLinks(root, dest, links)
}

// entryName is a tar entry's name, cleaned and checked to stay inside the
// extraction directory; "" for an entry that is skipped (the directory
// itself, or, with stripTop, the top directory and what lies beside it).
func entryName(raw string, stripTop bool) (string, error) {
	n := strings.TrimPrefix(strings.ReplaceAll(raw, `\`, "/"), "./")
	if stripTop {
		_, rest, ok := strings.Cut(n, "/")
		if !ok || rest == "" {
			return "", nil
		}
		n = rest
	}
	if strings.HasPrefix(n, "/") {
		return "", fmt.Errorf("read archive: entry %q is an absolute path, outside the archive's root", raw)
	}
	n = path.Clean(n)
	if n == "." {
		return "", nil
	}
	if n == ".." || strings.HasPrefix(n, "../") || !filepath.IsLocal(filepath.FromSlash(n)) {
		return "", fmt.Errorf("read archive: entry %q leaves the archive's root", raw)
	}
	return n, nil
}

// linkInside refuses a link whose target, read from the link's directory,
// is absolute or leaves the root.
func linkInside(name, target string) error {
	t := strings.ReplaceAll(target, `\`, "/")
	if t == "" || strings.HasPrefix(t, "/") || filepath.IsAbs(target) {
		return fmt.Errorf("read archive: symlink %q points to %q, outside the archive's root", name, target)
	}
	full := path.Clean(path.Join(path.Dir(name), t))
	if full == ".." || strings.HasPrefix(full, "../") {
		return fmt.Errorf("read archive: symlink %q points to %q, outside the archive's root", name, target)
	}
	return nil
}

// writeLinks writes the links once every file is in place, so that no
// file is ever written through one. A link below another link is
// refused (its target would be read from elsewhere than its name says),
// and each written link is resolved as a renderer would resolve it: one
// whose chain of links leaves the root refuses the archive.
func writeLinks(root *os.Root, dest string, links []link) error {
	names := make(map[string]bool, len(links))
	for _, l := range links {
		names[l.name] = true
	}
	for _, l := range links {
		for dir := path.Dir(l.name); dir != "."; dir = path.Dir(dir) {
			if names[dir] {
				return fmt.Errorf("read archive: symlink %q lies below symlink %q", l.name, dir)
			}
		}
		if dir := path.Dir(l.name); dir != "." {
			if err := root.MkdirAll(dir, 0o750); err != nil {
				return fmt.Errorf("create directory %q: %w", dir, err)
			}
		}
		if err := root.Symlink(filepath.FromSlash(l.target), l.name); err != nil {
			return fmt.Errorf("write symlink %q: %w", l.name, err)
		}
	}
	for _, l := range links {
		if _, err := render.ResolveInRoot(dest, filepath.FromSlash(l.name)); err != nil {
			return fmt.Errorf("read archive: symlink %q: %w", l.name, err)
		}
	}
	return nil
}

// writeFile copies at most size bytes (the header's claim) from r into a
// new file name of root and returns how many it wrote.
func writeFile(root *os.Root, name string, r io.Reader, size int64) (int64, error) {
	if dir := path.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o750); err != nil {
			return 0, err
		}
	}
	f, err := root.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, io.LimitReader(r, size))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}
