package git

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// treeFile is a file of a commit treeCommit makes.
type treeFile struct {
	data string
	mode filemode.FileMode // Regular when zero
}

// storeObject stores o, a tree or a commit, in repo and returns its hash.
func storeObject(t testing.TB, repo *gogit.Repository, o interface {
	Encode(plumbing.EncodedObject) error
}, typ plumbing.ObjectType) plumbing.Hash {
	t.Helper()
	obj := repo.Storer.NewEncodedObject()
	obj.SetType(typ)
	if err := o.Encode(obj); err != nil {
		t.Fatal(err)
	}
	h, err := repo.Storer.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// storeBlob stores data as a blob in repo and returns its hash.
func storeBlob(t testing.TB, repo *gogit.Repository, data string) plumbing.Hash {
	t.Helper()
	blob := repo.Storer.NewEncodedObject()
	blob.SetType(plumbing.BlobObject)
	w, _ := blob.Writer()
	_, _ = w.Write([]byte(data))
	_ = w.Close()
	h, err := repo.Storer.SetEncodedObject(blob)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// storeCommit stores a commit of tree in repo and returns its hash.
func storeCommit(t testing.TB, repo *gogit.Repository, tree plumbing.Hash) plumbing.Hash {
	t.Helper()
	sig := object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1_700_000_000, 0)}
	return storeObject(t, repo, &object.Commit{Author: sig, Committer: sig, Message: "c\n", TreeHash: tree}, plumbing.CommitObject)
}

// treeCommit stores a commit of files (by slash path, unchecked) in repo
// and returns its hash.
func treeCommit(t testing.TB, repo *gogit.Repository, files map[string]treeFile) plumbing.Hash {
	t.Helper()
	var tree func(prefix string) plumbing.Hash
	tree = func(prefix string) plumbing.Hash {
		var entries []object.TreeEntry
		dirs := map[string]bool{}
		for p, f := range files {
			rest, ok := strings.CutPrefix(p, prefix)
			if !ok {
				continue
			}
			if dir, _, nested := strings.Cut(rest, "/"); nested {
				if !dirs[dir] {
					dirs[dir] = true
					entries = append(entries, object.TreeEntry{Name: dir, Mode: filemode.Dir, Hash: tree(prefix + dir + "/")})
				}
				continue
			}
			h := storeBlob(t, repo, f.data)
			mode := f.mode
			if mode == 0 {
				mode = filemode.Regular
			}
			entries = append(entries, object.TreeEntry{Name: rest, Mode: mode, Hash: h})
		}
		// Git's order: a directory sorts as its name followed by "/".
		key := func(e object.TreeEntry) string {
			if e.Mode == filemode.Dir {
				return e.Name + "/"
			}
			return e.Name
		}
		slices.SortFunc(entries, func(a, b object.TreeEntry) int { return strings.Compare(key(a), key(b)) })
		return storeObject(t, repo, &object.Tree{Entries: entries}, plumbing.TreeObject)
	}
	return storeCommit(t, repo, tree(""))
}

// A checkout writes a tree's files, modes and symlinks; the next one
// rewrites what changed in Git or on disk, turns files into directories
// and back, and leaves an index and HEAD that Git itself finds clean.
func TestCheckoutTree(t *testing.T) {
	dir := t.TempDir()
	repo, err := gogit.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	first := treeCommit(t, repo, map[string]treeFile{
		"apps/a/cm.yaml": {data: "a: 1\n"},
		"apps/b/cm.yaml": {data: "b: 1\n"},
		"bin/run.sh":     {data: "#!/bin/sh\n", mode: filemode.Executable},
		"link":           {data: "apps/a/cm.yaml", mode: filemode.Symlink},
		"gone.txt":       {data: "gone\n"},
		"d/x":            {data: "x\n"},
	})
	if err := checkoutClean(repo, first); err != nil {
		t.Fatal(err)
	}
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read("link"); got != "a: 1\n" {
		t.Errorf("link reads %q", got)
	}
	if fi, err := os.Stat(filepath.Join(dir, "bin", "run.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("bin/run.sh is not executable: %v %v", fi, err)
	}
	// A renderer edits a tracked file, and leaves one of its own.
	if err := os.WriteFile(filepath.Join(dir, "apps", "b", "cm.yaml"), []byte("edited\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "apps", "b", "junk"), []byte("junk\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	second := treeCommit(t, repo, map[string]treeFile{
		"apps/a/cm.yaml": {data: "a: 2\n"},
		"apps/b/cm.yaml": {data: "b: 1\n"}, // the same blob: restored from the edit
		"bin/run.sh":     {data: "#!/bin/sh\n", mode: filemode.Executable},
		"link":           {data: "now a file\n"},
		"d":              {data: "now a file\n"},
		"new/y":          {data: "y\n"},
	})
	if err := checkoutClean(repo, second); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"apps/a/cm.yaml": "a: 2\n", "apps/b/cm.yaml": "b: 1\n", "link": "now a file\n", "d": "now a file\n", "new/y": "y\n"} {
		if got := read(p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	for _, p := range []string{"gone.txt", "apps/b/junk"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s is left (err %v)", p, err)
		}
	}
	head, err := repo.Head()
	if err != nil || head.Hash() != second {
		t.Errorf("HEAD %v (%v), want %s", head, err, second)
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git to check the index with")
	}
	cmd := exec.CommandContext(t.Context(), git, "status", "--porcelain", "--untracked-files=all")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("git status after the checkout: %v\n%s", err, out)
	}
}

// A tree whose paths climb out of the worktree or into .git is refused
// before anything of it is written.
func TestCheckoutTreeRefusesPaths(t *testing.T) {
	for _, p := range []string{".git/config", "a/.GIT/hooks/x", "a/../../x", "./x"} {
		t.Run(p, func(t *testing.T) {
			dir := t.TempDir()
			repo, err := gogit.PlainInit(dir, false)
			if err != nil {
				t.Fatal(err)
			}
			config, err := os.ReadFile(filepath.Join(dir, ".git", "config"))
			if err != nil {
				t.Fatal(err)
			}
			c := treeCommit(t, repo, map[string]treeFile{p: {data: "[core]\n\tfsmonitor = evil\n"}})
			if err := checkoutClean(repo, c); err == nil {
				t.Errorf("checkout of a tree with %q: %v", p, err)
			}
			if after, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); string(after) != string(config) {
				t.Errorf(".git/config changed:\n%s", after)
			}
			if _, err := os.Lstat(filepath.Join(filepath.Dir(dir), "x")); !os.IsNotExist(err) {
				t.Errorf("a file was written outside the worktree (err %v)", err)
			}
		})
	}
}

// bombCommit stores a commit whose tree names one subtree width times at
// each of depth levels, down to one blob of size bytes: width^depth files
// from depth+1 trees and one blob.
func bombCommit(t *testing.T, repo *gogit.Repository, width, depth, size int) plumbing.Hash {
	t.Helper()
	h, mode := storeBlob(t, repo, strings.Repeat("x", size)), filemode.Regular
	for range depth {
		entries := make([]object.TreeEntry, width)
		for i := range entries {
			entries[i] = object.TreeEntry{Name: fmt.Sprintf("e%03d", i), Mode: mode, Hash: h}
		}
		h, mode = storeObject(t, repo, &object.Tree{Entries: entries}, plumbing.TreeObject), filemode.Dir
	}
	return storeCommit(t, repo, h)
}

// A tree that names the same subtree over and over (a git bomb: a few
// objects, any number of paths) stops at the checkout's bounds, by files
// and by bytes, with ErrTreeTooLarge, and writes no more than them.
func TestCheckoutTreeBounded(t *testing.T) {
	for _, tc := range []struct {
		name               string
		width, depth, size int
		lim                checkoutLimits
	}{
		{name: "files", width: 10, depth: 4, size: 1, lim: checkoutLimits{files: 500, bytes: 1 << 30}},
		{name: "bytes", width: 10, depth: 2, size: 1 << 20, lim: checkoutLimits{files: 1000, bytes: 5 << 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			repo, err := gogit.PlainInit(dir, false)
			if err != nil {
				t.Fatal(err)
			}
			c := bombCommit(t, repo, tc.width, tc.depth, tc.size)
			if _, err := checkoutTree(repo, c, tc.lim); !errors.Is(err, ErrTreeTooLarge) {
				t.Fatalf("checkout of %d^%d files of %d bytes: %v, want ErrTreeTooLarge", tc.width, tc.depth, tc.size, err)
			}
			var files int
			var bytes int64
			err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || strings.Contains(p, string(filepath.Separator)+".git"+string(filepath.Separator)) {
					return err
				}
				fi, err := d.Info()
				if err != nil {
					return err
				}
				files, bytes = files+1, bytes+fi.Size()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if files > tc.lim.files || bytes > tc.lim.bytes {
				t.Errorf("wrote %d files of %d bytes, past the limits %+v", files, bytes, tc.lim)
			}
		})
	}
	// Within the bounds the same tree checks out.
	dir := t.TempDir()
	repo, err := gogit.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkoutClean(repo, bombCommit(t, repo, 10, 3, 1)); err != nil {
		t.Fatalf("1,000 files: %v", err)
	}
}

// BenchmarkCheckoutChangedDirectory switches a worktree between two
// commits that change every file of one directory of 5,000 (a monorepo's
// apps/ after a push that touches them all), with go-git's
// Worktree.Checkout and with checkoutTree.
func BenchmarkCheckoutChangedDirectory(b *testing.B) {
	const files = 5000
	commits := func(repo *gogit.Repository) [2]plumbing.Hash {
		var out [2]plumbing.Hash
		for i := range out {
			tree := map[string]treeFile{}
			for f := range files {
				tree[fmt.Sprintf("apps/app-%04d/cm.yaml", f)] = treeFile{data: fmt.Sprintf("app: %d\npush: %d\n", f, i)}
			}
			out[i] = treeCommit(b, repo, tree)
		}
		return out
	}
	for _, bc := range []struct {
		name     string
		checkout func(*gogit.Repository, plumbing.Hash) error
	}{
		{"go-git", func(repo *gogit.Repository, h plumbing.Hash) error {
			wt, err := repo.Worktree()
			if err != nil {
				return err
			}
			return wt.Checkout(&gogit.CheckoutOptions{Hash: h, Force: true})
		}},
		{"graphcd", func(repo *gogit.Repository, h plumbing.Hash) error {
			_, err := checkoutTree(repo, h, defaultCheckoutLimits)
			return err
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			repo, err := gogit.PlainInit(b.TempDir(), false)
			if err != nil {
				b.Fatal(err)
			}
			c := commits(repo)
			if err := bc.checkout(repo, c[0]); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				if err := bc.checkout(repo, c[(i+1)%2]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
