package archive

import (
	"archive/tar"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

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
	cm := reposervertest.TarEntry{Name: "apps/cm.yaml", Body: "kind: ConfigMap\n"}
	tests := []struct {
		Name    string
		entries []reposervertest.TarEntry
		opts    Options
		want    []string
		wantErr error
		wantMsg string
	}{
		{
			Name:    "files and directories",
			entries: []reposervertest.TarEntry{{Name: "./", Type: tar.TypeDir}, {Name: "apps/", Type: tar.TypeDir}, cm, {Name: "./base/k.yaml", Body: "a: 1\n"}},
			want:    []string{"apps/cm.yaml", "base/k.yaml"},
		},
		{
			Name:    "strip the top directory",
			entries: []reposervertest.TarEntry{{Name: "top.txt", Body: "x"}, {Name: "chart/Chart.yaml", Body: "Name: c\n"}},
			opts:    Options{StripTop: true},
			want:    []string{"Chart.yaml"},
		},
		{
			Name:    "links inside are written last",
			entries: []reposervertest.TarEntry{{Name: "apps/base", Type: tar.TypeSymlink, Link: "../base"}, {Name: "base/k.yaml", Body: "a: 1\n"}},
			opts:    Options{Links: true},
			want:    []string{"apps/base -> ../base", "base/k.yaml"},
		},
		{
			Name:    "links skipped without Links",
			entries: []reposervertest.TarEntry{cm, {Name: "apps/passwd", Type: tar.TypeSymlink, Link: "/etc/passwd"}, {Name: "apps/hard", Type: tar.TypeLink, Link: "apps/cm.yaml"}},
			want:    []string{"apps/cm.yaml"},
		},
		{
			Name:    "entry climbing out",
			entries: []reposervertest.TarEntry{{Name: "apps/../../evil.yaml", Body: "x"}},
			wantMsg: "leaves the archive's root",
		},
		{
			Name:    "absolute entry",
			entries: []reposervertest.TarEntry{{Name: "/etc/cron.d/x", Body: "x"}},
			wantMsg: "absolute path",
		},
		{
			Name:    "absolute symlink",
			entries: []reposervertest.TarEntry{{Name: "apps/passwd", Type: tar.TypeSymlink, Link: "/etc/passwd"}},
			opts:    Options{Links: true},
			wantMsg: "outside the archive's root",
		},
		{
			Name:    "symlink climbing out",
			entries: []reposervertest.TarEntry{{Name: "apps/up", Type: tar.TypeSymlink, Link: "../../.."}},
			opts:    Options{Links: true},
			wantMsg: "outside the archive's root",
		},
		{
			Name: "symlink below a symlink",
			entries: []reposervertest.TarEntry{
				{Name: "a/b/c", Type: tar.TypeSymlink, Link: "../.."},
				{Name: "a/b/c/l", Type: tar.TypeSymlink, Link: "../x"},
			},
			opts:    Options{Links: true},
			wantMsg: "lies below symlink",
		},
		{
			Name: "symlink leaving through another",
			entries: []reposervertest.TarEntry{
				{Name: "a/b/c", Type: tar.TypeSymlink, Link: ".."},
				{Name: "l", Type: tar.TypeSymlink, Link: "a/b/c/../../../etc"},
			},
			opts:    Options{Links: true},
			wantMsg: "outside",
		},
		{
			Name:    "hard link",
			entries: []reposervertest.TarEntry{cm, {Name: "apps/hard", Type: tar.TypeLink, Link: "apps/cm.yaml"}},
			opts:    Options{Links: true},
			wantMsg: "hard link",
		},
		{
			Name:    "too many entries",
			entries: []reposervertest.TarEntry{cm, cm, cm},
			opts:    Options{Limits: Limits{MaxEntries: 2}},
			wantErr: ErrTooLarge,
		},
		{
			Name:    "one file too large",
			entries: []reposervertest.TarEntry{{Name: "big.bin", Size: 1 << 10}},
			opts:    Options{Limits: Limits{MaxFileSize: 1 << 9}},
			wantErr: ErrTooLarge,
		},
		{
			Name:    "too much in all",
			entries: []reposervertest.TarEntry{{Name: "a.bin", Size: 600}, {Name: "b.bin", Size: 600}},
			opts:    Options{Limits: Limits{MaxSize: 1000}},
			wantErr: ErrTooLarge,
		},
	}
	for _, tc := range tests {
		t.Run(tc.Name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "out")
			err := ExtractTarGz(bytes.NewReader(reposervertest.TarGz(t, tc.entries...)), dest, tc.opts)
			if reposervertest.WantError(t, err, tc.wantErr, tc.wantMsg) {
				return
			}
			if diff := cmp.Diff(tree(t, dest), tc.want); diff != "" {
				t.Errorf("files (-got +want):\n%s", diff)
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
