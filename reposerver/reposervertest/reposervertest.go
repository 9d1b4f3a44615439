// Package reposervertest builds real Git repositories for tests of the
// repository server and its clients.
package reposervertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
