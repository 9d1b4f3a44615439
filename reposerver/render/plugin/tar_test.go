package plugin

import (
	"archive/tar"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/reposerver/render"
)

// entry is one tar entry of a test archive.
type entry struct {
	name, link, body string
	typ              byte
	mode             int64
}

func file(name, body string) entry    { return entry{name: name, body: body, typ: tar.TypeReg} }
func dir(name string) entry           { return entry{name: name, typ: tar.TypeDir} }
func symlink(name, to string) entry   { return entry{name: name, link: to, typ: tar.TypeSymlink} }
func typed(name string, t byte) entry { return entry{name: name, typ: t} }

func archive(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		size := int64(len(e.body))
		if e.typ != tar.TypeReg {
			size = 0
		}
		hdr := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Mode: mode, Size: size}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatalf("write %s: %v", e.name, err)
		}
		if size > 0 {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var testLimits = extractLimits{maxBytes: 1 << 20, maxEntries: 100}

func TestExtractRejectsHostileArchives(t *testing.T) {
	tests := []struct {
		name    string
		entries []entry
		limits  *extractLimits
		wantIs  error
	}{
		{"absolute name", []entry{file("/etc/evil", "x")}, nil, errUnsafeArchive},
		{"dot-dot name", []entry{file("../evil", "x")}, nil, errUnsafeArchive},
		{"dot-dot inside name", []entry{file("a/../../evil", "x")}, nil, errUnsafeArchive},
		{"absolute symlink", []entry{symlink("l", "/etc")}, nil, errUnsafeArchive},
		{"symlink climbing out", []entry{symlink("l", "../..")}, nil, errUnsafeArchive},
		{"nested symlink climbing out", []entry{dir("d/"), symlink("d/l", "../../x")}, nil, errUnsafeArchive},
		{"dot-dot after a component", []entry{symlink("a", "."), symlink("b", "a/../x")}, nil, errUnsafeArchive},
		{"empty symlink target", []entry{symlink("l", "")}, nil, errUnsafeArchive},
		{"file below a symlink", []entry{dir("sub/"), symlink("l", "sub"), file("l/x", "y")}, nil, errUnsafeArchive},
		{"symlink below a symlink", []entry{symlink("l", "."), symlink("l/m", "..")}, nil, errUnsafeArchive},
		{"directory below a symlink", []entry{symlink("l", "."), dir("l/d/")}, nil, errUnsafeArchive},
		{"hard link", []entry{file("a", "x"), {name: "b", link: "a", typ: tar.TypeLink}}, nil, errUnsafeArchive},
		{"character device", []entry{typed("dev", tar.TypeChar)}, nil, errUnsafeArchive},
		{"block device", []entry{typed("dev", tar.TypeBlock)}, nil, errUnsafeArchive},
		{"fifo", []entry{typed("fifo", tar.TypeFifo)}, nil, errUnsafeArchive},
		{"duplicate file", []entry{file("a", "x"), file("a", "y")}, nil, errUnsafeArchive},
		{"symlink replacing a file", []entry{file("a", "x"), symlink("a", ".")}, nil, errUnsafeArchive},
		{"root as a file", []entry{file(".", "x")}, nil, errUnsafeArchive},
		{"files too large", []entry{file("a", "12345"), file("b", "67890")}, &extractLimits{maxBytes: 8, maxEntries: 10}, render.ErrTooLarge},
		{"too many entries", []entry{file("a", ""), file("b", ""), file("c", "")}, &extractLimits{maxBytes: 8, maxEntries: 2}, render.ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dest := filepath.Join(parent, "repo")
			if err := os.Mkdir(dest, 0o700); err != nil {
				t.Fatal(err)
			}
			limits := testLimits
			if tt.limits != nil {
				limits = *tt.limits
			}
			err := extractRepoTar(t.Context(), bytes.NewReader(archive(t, tt.entries...)), dest, limits)
			if !errors.Is(err, tt.wantIs) {
				t.Fatalf("extractRepoTar() error = %v, want %v", err, tt.wantIs)
			}
			// Nothing may appear next to the destination.
			if got := listTree(t, parent); len(got) > 0 && got[0] != "repo/" {
				t.Errorf("files outside the destination: %q", got)
			}
		})
	}
}

func TestExtract(t *testing.T) {
	entries := []entry{
		dir("./"),
		dir("app/"),
		file("app/deploy.yaml", "kind: Deployment"),
		{name: "app/run.sh", body: "#!/bin/sh", typ: tar.TypeReg, mode: 0o755},
		file("deep/a/b/c.txt", "implicit parents"),
		symlink("app/shared", "../deep/a"),
		symlink("app/up", ".."),
		symlink("top", "app/deploy.yaml"),
		symlink("dangling", "nowhere"),
	}
	tests := []struct {
		name     string
		preserve bool
		wantExec fs.FileMode
	}{
		{"modes reset", false, 0o644},
		{"modes preserved", true, 0o755},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dest := t.TempDir()
			limits := testLimits
			limits.preserveFileMode = tt.preserve
			if err := extractRepoTar(t.Context(), bytes.NewReader(archive(t, entries...)), dest, limits); err != nil {
				t.Fatalf("extractRepoTar() error = %v", err)
			}
			want := []string{
				"app/", "app/deploy.yaml", "app/run.sh", "app/shared -> ../deep/a", "app/up -> ..",
				"dangling -> nowhere", "deep/", "deep/a/", "deep/a/b/", "deep/a/b/c.txt", "top -> app/deploy.yaml",
			}
			if diff := cmp.Diff(listTree(t, dest), want); diff != "" {
				t.Errorf("extracted tree (-got +want):\n%s", diff)
			}
			data, err := os.ReadFile(filepath.Join(dest, "app/shared/b/c.txt"))
			if err != nil || string(data) != "implicit parents" {
				t.Errorf("read through symlink = %q, %v", data, err)
			}
			fi, err := os.Stat(filepath.Join(dest, "app/run.sh"))
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != tt.wantExec {
				t.Errorf("mode of app/run.sh = %v, want %v", got, tt.wantExec)
			}
		})
	}
}

func TestWriteRepoTar(t *testing.T) {
	repo := t.TempDir()
	writeFiles(t, repo, map[string]string{
		"app/deploy.yaml":     "kind: Deployment",
		"app/lib/x.libsonnet": "{}",
		".git/config":         "[core]",
		"sub/.git":            "gitdir: ../.git/modules/sub",
		"sub/file":            "f",
	})
	if err := os.Chmod(filepath.Join(repo, "sub/file"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, "lib", filepath.Join(repo, "app/lib2"))                    // a directory inside
	mustSymlink(t, "../app/lib/../deploy.yaml", filepath.Join(repo, "sub/d")) // normalised on the way
	mustSymlink(t, "app/lib2/x.libsonnet", filepath.Join(repo, "chain"))      // through another link

	var buf bytes.Buffer
	if err := writeRepoTar(t.Context(), &buf, repo); err != nil {
		t.Fatalf("writeRepoTar() error = %v", err)
	}
	dest := t.TempDir()
	if err := extractRepoTar(t.Context(), &buf, dest, testLimits); err != nil {
		t.Fatalf("extractRepoTar() error = %v", err)
	}
	want := []string{
		"app/", "app/deploy.yaml", "app/lib/", "app/lib/x.libsonnet", "app/lib2 -> lib",
		"chain -> app/lib/x.libsonnet", "sub/", "sub/d -> ../app/deploy.yaml", "sub/file",
	}
	if diff := cmp.Diff(listTree(t, dest), want); diff != "" {
		t.Errorf("round trip (-got +want):\n%s", diff)
	}
	fi, err := os.Stat(filepath.Join(dest, "sub/file"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode without preserveFileMode = %v, want 0644", fi.Mode().Perm())
	}
}

func TestWriteRepoTarRefusesLinksOut(t *testing.T) {
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret": "s"})
	tests := []struct {
		name  string
		links map[string]string // link -> target
	}{
		{"absolute", map[string]string{"app/x": filepath.Join(outside, "secret")}},
		{"relative", map[string]string{"app/x": "../../" + filepath.Base(outside) + "/secret"}},
		{"via another link", map[string]string{"aa": "zz/..", "zz": "."}},
		{"directory link", map[string]string{"app/etc": "/etc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := t.TempDir()
			writeFiles(t, repo, map[string]string{"app/ok.yaml": "a: 1"})
			for link, target := range tt.links {
				mustSymlink(t, target, filepath.Join(repo, link))
			}
			var buf bytes.Buffer
			err := writeRepoTar(t.Context(), &buf, repo)
			if !errors.Is(err, render.ErrOutsideRoot) {
				t.Fatalf("writeRepoTar() error = %v, want ErrOutsideRoot", err)
			}
		})
	}
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// listTree lists root's entries, directories with a trailing slash and
// symlinks with their target, sorted.
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			rel += " -> " + target
		case d.IsDir():
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}
