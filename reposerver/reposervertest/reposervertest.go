// Package reposervertest builds real Git repositories for tests of the
// repository server and its clients.
package reposervertest

import (
	"bytes"
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
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	run := func(args ...string) string {
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
	run("init", "-q", "-b", "main")
	run("add", ".")
	run("commit", "-q", "-m", "apps")
	run("tag", "v1.0.0")
	return dir, run("rev-parse", "HEAD")
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
