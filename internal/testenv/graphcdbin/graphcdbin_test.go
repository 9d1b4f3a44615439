package graphcdbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// The Makefile builds with the same tags as the tests and the image.
func TestMakefileTags(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(localcluster.RepoRoot(), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^GO_TAGS\s*:?=\s*(.*)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the Makefile sets no GO_TAGS")
	}
	if got := strings.TrimSpace(string(m[1])); got != Tags {
		t.Errorf("the Makefile's GO_TAGS = %q, graphcdbin.Tags = %q", got, Tags)
	}
}

// With its tags, graphcd does not link Go's plugin package.
func TestNoPluginPackage(t *testing.T) {
	cmd := exec.CommandContext(t.Context(), "go", "list", "-deps", "-tags", Tags, "./cmd/graphcd")
	cmd.Dir = localcluster.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if slices.Contains(strings.Fields(string(out)), "plugin") {
		t.Error("cmd/graphcd depends on the plugin package")
	}
}
