package helm

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxArchiveEntries bounds the tar headers read from one chart archive, so
// an archive of millions of empty entries fails instead of spinning.
const maxArchiveEntries = 20000

// extractChart unpacks a gzipped chart archive (a single top directory
// holding Chart.yaml and the rest) into dest, dropping the top directory
// as Helm does. Only regular files are written; links, devices and paths
// that would leave dest are refused or skipped. Sizes are bounded by lim.
func extractChart(r io.Reader, dest string, lim DownloadLimits) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("read chart archive: %w", err)
	}
	defer func() { _ = gz.Close() }()
	tr := tar.NewReader(gz)

	remaining := lim.MaxDecompressedSize
	perFile := min(lim.MaxDecompressedSize, maxChartFileSize)
	sawChartYAML := false
	for entries := 0; ; entries++ {
		if entries >= maxArchiveEntries {
			return fmt.Errorf("read chart archive: more than %d entries: %w", maxArchiveEntries, ErrDownloadTooLarge)
		}
		hd, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read chart archive: %w", err)
		}
		if hd.Typeflag != tar.TypeReg {
			// Directories are created on demand; symlinks, hard links and
			// devices are never materialised (Helm's loader skips them too).
			continue
		}
		name, err := archiveEntryName(hd.Name)
		if err != nil {
			return err
		}
		if name == "" {
			continue
		}
		if name == "Chart.yaml" {
			sawChartYAML = true
		}
		if hd.Size > perFile {
			return fmt.Errorf("read chart archive: file %q is larger than %d bytes: %w", name, perFile, ErrDownloadTooLarge)
		}
		if hd.Size > remaining {
			return fmt.Errorf("read chart archive: decompressed chart is larger than %d bytes: %w", lim.MaxDecompressedSize, ErrDownloadTooLarge)
		}
		n, err := writeArchiveFile(filepath.Join(dest, filepath.FromSlash(name)), tr, hd.Size)
		remaining -= n
		if err != nil {
			return fmt.Errorf("write chart file %q: %w", name, err)
		}
	}
	if !sawChartYAML {
		return errors.New("read chart archive: no Chart.yaml in the chart's top directory")
	}
	return nil
}

// archiveEntryName strips the top directory from a tar entry name and
// checks that what is left stays inside the extraction directory. An empty
// result means the entry is the top directory itself or a file beside it.
func archiveEntryName(raw string) (string, error) {
	n := strings.ReplaceAll(raw, `\`, "/")
	top, rest, ok := strings.Cut(strings.TrimPrefix(n, "./"), "/")
	if !ok || rest == "" {
		if top == "Chart.yaml" {
			return "", errors.New("read chart archive: Chart.yaml is not inside a top directory")
		}
		return "", nil
	}
	rest = path.Clean(rest)
	if !filepath.IsLocal(filepath.FromSlash(rest)) || strings.HasPrefix(rest, "../") || rest == ".." {
		return "", fmt.Errorf("read chart archive: entry %q leaves the chart directory", raw)
	}
	return rest, nil
}

// writeArchiveFile copies at most size bytes (the header's claim) from r
// into a new file at dst and returns how many it wrote.
func writeArchiveFile(dst string, r io.Reader, size int64) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
		return 0, err
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, io.LimitReader(r, size))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}
