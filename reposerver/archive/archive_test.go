package archive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type entry struct {
	name     string
	body     string
	size     int64 // zeros instead of body when > 0
	typeflag byte
	link     string
}

func tarGz(t testing.TB, entries []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		hd := &tar.Header{Name: e.name, Mode: 0o644, Typeflag: e.typeflag, Linkname: e.link}
		if hd.Typeflag == 0 {
			hd.Typeflag = tar.TypeReg
		}
		body := []byte(e.body)
		if e.size > 0 {
			body = make([]byte, e.size)
		}
		if hd.Typeflag == tar.TypeReg {
			hd.Size = int64(len(body))
		}
		if err := tw.WriteHeader(hd); err != nil {
			t.Fatal(err)
		}
		if hd.Typeflag == tar.TypeReg {
			if _, err := tw.Write(body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tree lists dir: files as "path", links as "path -> target".
func tree(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			rel += " -> " + filepath.ToSlash(target)
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func TestExtractTarGz(t *testing.T) {
	cm := entry{name: "apps/cm.yaml", body: "kind: ConfigMap\n"}
	tests := []struct {
		name    string
		entries []entry
		opts    Options
		want    []string
		wantErr error
		wantMsg string
	}{
		{
			name:    "files and directories",
			entries: []entry{{name: "./", typeflag: tar.TypeDir}, {name: "apps/", typeflag: tar.TypeDir}, cm, {name: "./base/k.yaml", body: "a: 1\n"}},
			want:    []string{"apps/cm.yaml", "base/k.yaml"},
		},
		{
			name:    "strip the top directory",
			entries: []entry{{name: "top.txt", body: "x"}, {name: "chart/Chart.yaml", body: "name: c\n"}},
			opts:    Options{StripTop: true},
			want:    []string{"Chart.yaml"},
		},
		{
			name:    "links inside are written last",
			entries: []entry{{name: "apps/base", typeflag: tar.TypeSymlink, link: "../base"}, {name: "base/k.yaml", body: "a: 1\n"}},
			opts:    Options{Links: true},
			want:    []string{"apps/base -> ../base", "base/k.yaml"},
		},
		{
			name:    "links skipped without Links",
			entries: []entry{cm, {name: "apps/passwd", typeflag: tar.TypeSymlink, link: "/etc/passwd"}, {name: "apps/hard", typeflag: tar.TypeLink, link: "apps/cm.yaml"}},
			want:    []string{"apps/cm.yaml"},
		},
		{
			name:    "entry climbing out",
			entries: []entry{{name: "apps/../../evil.yaml", body: "x"}},
			wantMsg: "leaves the archive's root",
		},
		{
			name:    "absolute entry",
			entries: []entry{{name: "/etc/cron.d/x", body: "x"}},
			wantMsg: "absolute path",
		},
		{
			name:    "absolute symlink",
			entries: []entry{{name: "apps/passwd", typeflag: tar.TypeSymlink, link: "/etc/passwd"}},
			opts:    Options{Links: true},
			wantMsg: "outside the archive's root",
		},
		{
			name:    "symlink climbing out",
			entries: []entry{{name: "apps/up", typeflag: tar.TypeSymlink, link: "../../.."}},
			opts:    Options{Links: true},
			wantMsg: "outside the archive's root",
		},
		{
			name: "symlink below a symlink",
			entries: []entry{
				{name: "a/b/c", typeflag: tar.TypeSymlink, link: "../.."},
				{name: "a/b/c/l", typeflag: tar.TypeSymlink, link: "../x"},
			},
			opts:    Options{Links: true},
			wantMsg: "lies below symlink",
		},
		{
			name: "symlink leaving through another",
			entries: []entry{
				{name: "a/b/c", typeflag: tar.TypeSymlink, link: ".."},
				{name: "l", typeflag: tar.TypeSymlink, link: "a/b/c/../../../etc"},
			},
			opts:    Options{Links: true},
			wantMsg: "outside",
		},
		{
			name:    "hard link",
			entries: []entry{cm, {name: "apps/hard", typeflag: tar.TypeLink, link: "apps/cm.yaml"}},
			opts:    Options{Links: true},
			wantMsg: "hard link",
		},
		{
			name:    "too many entries",
			entries: []entry{cm, cm, cm},
			opts:    Options{Limits: Limits{MaxEntries: 2}},
			wantErr: ErrTooLarge,
		},
		{
			name:    "one file too large",
			entries: []entry{{name: "big.bin", size: 1 << 10}},
			opts:    Options{Limits: Limits{MaxFileSize: 1 << 9}},
			wantErr: ErrTooLarge,
		},
		{
			name:    "too much in all",
			entries: []entry{{name: "a.bin", size: 600}, {name: "b.bin", size: 600}},
			opts:    Options{Limits: Limits{MaxSize: 1000}},
			wantErr: ErrTooLarge,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "out")
			err := ExtractTarGz(bytes.NewReader(tarGz(t, tc.entries)), dest, tc.opts)
			switch {
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
			case tc.wantMsg != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantMsg) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantMsg)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tree(t, dest), tc.want); diff != "" {
					t.Errorf("files (-got +want):\n%s", diff)
				}
			}
		})
	}
}

func TestExtractTarGzNotGzip(t *testing.T) {
	err := ExtractTarGz(strings.NewReader("plain text"), filepath.Join(t.TempDir(), "out"), Options{})
	if err == nil || !strings.Contains(err.Error(), "read archive") {
		t.Fatalf("err = %v, want a read error", err)
	}
}
