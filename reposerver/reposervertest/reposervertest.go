// Package reposervertest builds real Git repositories, Helm chart
// repositories and OCI registries for tests of the
// repository server and its clients.
package reposervertest

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// CommitFiles writes files (slash-separated paths relative to the
// repository) into a new Git repository on branch main, commits them, tags
// the commit v1.0.0 and returns the working copy's directory and the
// commit SHA. It uses the git CLI with the machine's configuration shut
// out, and skips the test when git is missing.
func CommitFiles(tb testing.TB, files map[string]string) (dir, sha string) {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git CLI not installed")
	}
	dir = tb.TempDir()
	writeFiles(tb, dir, files)
	run := gitRunner(tb, dir)
	run("init", "-q", "-b", "main")
	run("add", ".")
	run("commit", "-q", "-m", "apps")
	run("tag", "v1.0.0")
	return dir, run("rev-parse", "HEAD")
}

// CommitMore writes files into the working copy dir (made by CommitFiles)
// and commits them, returning the new SHA.
func CommitMore(tb testing.TB, dir string, files map[string]string) string {
	tb.Helper()
	writeFiles(tb, dir, files)
	run := gitRunner(tb, dir)
	run("add", ".")
	run("commit", "-q", "-m", "change")
	return run("rev-parse", "HEAD")
}

// CopyTree copies the regular files and directories under src to dst.
func CopyTree(tb testing.TB, src, dst string) {
	tb.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o750)
		}
		data, err := os.ReadFile(p) //nolint:gosec // G122: copies the test's own testdata
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o600) //nolint:gosec // G703: target is under the test's dst
	})
	if err != nil {
		tb.Fatalf("copy %s: %v", src, err)
	}
}

func writeFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
}

// gitRunner runs the git CLI in dir with the machine's configuration shut
// out, failing the test on error and returning the trimmed output.
func gitRunner(tb testing.TB, dir string) func(args ...string) string {
	return func(args ...string) string {
		tb.Helper()
		cmd := exec.CommandContext(tb.Context(), "git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			tb.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
}

// CommitSigned writes files into a new repository (with go-git, no gpg
// binary needed), commits them signed by a fresh OpenPGP key, and returns
// the directory, the commit SHA and the key's armored public key.
func CommitSigned(tb testing.TB, files map[string]string) (dir, sha, armoredKey string) {
	tb.Helper()
	key, err := openpgp.NewEntity("signer", "", "signer@example.com", nil)
	if err != nil {
		tb.Fatal(err)
	}
	var pub bytes.Buffer
	w, err := armor.Encode(&pub, openpgp.PublicKeyType, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if err := key.Serialize(w); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	dir = tb.TempDir()
	repo, err := gogit.PlainInit(dir, false)
	if err != nil {
		tb.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		tb.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			tb.Fatal(err)
		}
		if _, err := wt.Add(name); err != nil {
			tb.Fatal(err)
		}
	}
	h, err := wt.Commit("signed", &gogit.CommitOptions{
		Author:  &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)},
		SignKey: key,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return dir, h.String(), pub.String()
}
