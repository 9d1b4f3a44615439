package archive_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/reposerver/archive"
)

// FuzzExtractTarGz unpacks archives of three arbitrary entries (name,
// type, link target, contents) with and without links and with a
// stripped top directory: nothing panics, nothing is written outside the
// destination (its parent holds only it and a sentinel afterwards, and
// every link inside points inside), and no file or total is over the
// limits, even when extraction fails half way.
//
//	go test -run '^$' -fuzz FuzzExtractTarGz ./reposerver/archive/
func FuzzExtractTarGz(f *testing.F) {
	f.Add("chart/Chart.yaml", byte(tar.TypeReg), "", "chart/templates/../../x", byte(tar.TypeReg), "", "chart/l", byte(tar.TypeSymlink), "../../etc", []byte("name: x"), uint8(3))
	f.Add("/abs", byte(tar.TypeReg), "", "a/b", byte(tar.TypeSymlink), "/tmp", "a/b/c", byte(tar.TypeReg), "", []byte{}, uint8(0))
	f.Add("a", byte(tar.TypeSymlink), ".", "b", byte(tar.TypeSymlink), "a/..", "b/../../z", byte(tar.TypeReg), "", []byte("z"), uint8(1))
	f.Add("d/", byte(tar.TypeDir), "", "d/h", byte(tar.TypeLink), "d", "d/e", byte(tar.TypeChar), "", []byte("e"), uint8(2))
	f.Fuzz(func(t *testing.T, n1 string, t1 byte, l1, n2 string, t2 byte, l2, n3 string, t3 byte, l3 string, body []byte, mode uint8) {
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		for _, e := range []struct {
			name string
			typ  byte
			link string
		}{{n1, t1, l1}, {n2, t2, l2}, {n3, t3, l3}} {
			h := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: 0o644}
			if e.typ == tar.TypeReg {
				h.Size = int64(len(body))
			}
			if tw.WriteHeader(h) != nil {
				return
			}
			if e.typ == tar.TypeReg {
				_, _ = tw.Write(body)
			}
		}
		if tw.Close() != nil || gz.Close() != nil {
			return
		}

		root := t.TempDir()
		sentinel := filepath.Join(root, "sentinel")
		if err := os.Mkdir(sentinel, 0o755); err != nil {
			t.Fatal(err)
		}
		dest := filepath.Join(root, "dest")
		opts := archive.Options{
			Limits:   archive.Limits{MaxSize: 64, MaxFileSize: 32, MaxEntries: 3},
			Links:    mode&1 != 0,
			StripTop: mode&2 != 0,
		}
		err := archive.ExtractTarGz(bytes.NewReader(buf.Bytes()), dest, opts)
		var total int64
		_ = filepath.WalkDir(dest, func(p string, d fs.DirEntry, werr error) error {
			if werr != nil {
				return werr
			}
			if !d.Type().IsRegular() {
				return nil
			}
			info, ierr := d.Info()
			if ierr != nil {
				return ierr
			}
			if info.Size() > opts.Limits.MaxFileSize {
				t.Fatalf("%s has %d bytes, over MaxFileSize (err %v)", p, info.Size(), err)
			}
			total += info.Size()
			return nil
		})
		if total > opts.Limits.MaxSize {
			t.Fatalf("%d bytes written, over MaxSize (err %v)", total, err)
		}
		entries, rerr := os.ReadDir(root)
		if rerr != nil {
			t.Fatal(rerr)
		}
		for _, e := range entries {
			if e.Name() != "sentinel" && e.Name() != "dest" {
				t.Fatalf("extraction wrote %s beside its destination (err %v)", e.Name(), err)
			}
		}
		if inside, _ := os.ReadDir(sentinel); len(inside) > 0 {
			t.Fatalf("extraction wrote into a sibling directory: %v", inside)
		}
		_ = filepath.WalkDir(dest, func(p string, d fs.DirEntry, werr error) error {
			if werr != nil {
				return werr
			}
			if d.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			// A dangling link inside leads nowhere.
			if target, lerr := filepath.EvalSymlinks(p); lerr == nil {
				if rel, rerr := filepath.Rel(dest, target); rerr != nil || rel == ".." || strings.HasPrefix(rel, "../") {
					t.Fatalf("link %s leads out of the destination to %s", p, target)
				}
			}
			return nil
		})
	})
}
