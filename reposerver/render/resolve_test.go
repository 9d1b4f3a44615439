package render_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/reposerver/render"
)

// symlinkRepo builds a repository with links of every kind under a
// directory that also holds a file outside the repository.
func symlinkRepo(t *testing.T) (base, root string) {
	t.Helper()
	base = t.TempDir()
	root = filepath.Join(base, "repo")
	mustMkdir(t, filepath.Join(root, "apps", "web"))
	mustWrite(t, filepath.Join(root, "apps", "web", "deploy.yaml"), "kind: A\n")
	mustWrite(t, filepath.Join(base, "secret.yaml"), "kind: Secret\n")
	links := map[string]string{
		"apps/in-file":     "web/deploy.yaml",
		"apps/in-dir":      "web",
		"apps/in-abs":      filepath.Join(root, "apps", "web"),
		"apps/up-and-back": "../apps/web",
		"apps/out-rel":     "../../secret.yaml",
		"apps/out-abs":     filepath.Join(base, "secret.yaml"),
		"apps/out-etc":     "/etc",
		"apps/loop-a":      "loop-b",
		"apps/loop-b":      "loop-a",
		"apps/to-root":     "..",
		"apps/to-parent":   "../..",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	return base, root
}

func mustMkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t testing.TB, file, content string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(file))
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolveInRoot(t *testing.T) {
	base, root := symlinkRepo(t)
	tests := []struct {
		rel     string
		want    string // relative to root; "" when an error is expected
		outside bool
	}{
		{rel: "", want: "."},
		{rel: ".", want: "."},
		{rel: "apps/web/deploy.yaml", want: "apps/web/deploy.yaml"},
		{rel: "apps/in-file", want: "apps/web/deploy.yaml"},
		{rel: "apps/in-dir/deploy.yaml", want: "apps/web/deploy.yaml"},
		{rel: "apps/in-abs/deploy.yaml", want: "apps/web/deploy.yaml"},
		{rel: "apps/up-and-back/deploy.yaml", want: "apps/web/deploy.yaml"},
		{rel: "apps/to-root/apps", want: "apps"},
		{rel: "apps/missing/file.yaml", want: "apps/missing/file.yaml"},
		{rel: "apps/in-dir/../web", want: "apps/web"},
		{rel: "apps/out-rel", outside: true},
		{rel: "apps/out-abs", outside: true},
		{rel: "apps/out-etc/passwd", outside: true},
		{rel: "apps/to-parent", outside: true},
		{rel: "apps/to-root/..", outside: true},
		{rel: "..", outside: true},
		{rel: "../repo/apps", outside: true},
		{rel: "apps/../../x", outside: true},
		{rel: "/etc/passwd", outside: true},
		{rel: "apps/loop-a"},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			got, err := render.ResolveInRoot(root, tt.rel)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("got %q, want an error", got)
				}
				if errors.Is(err, render.ErrOutsideRoot) != tt.outside {
					t.Errorf("errors.Is(err, ErrOutsideRoot) = %v, want %v (%v)", !tt.outside, tt.outside, err)
				}
				if strings.Contains(err.Error(), base) {
					t.Errorf("error %q shows an absolute path", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(root, filepath.FromSlash(tt.want)); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func TestResolveInRootThroughSymlinkedRoot(t *testing.T) {
	base, root := symlinkRepo(t)
	alias := filepath.Join(base, "alias")
	if err := os.Symlink(root, alias); err != nil {
		t.Fatal(err)
	}
	// A link written against the root's unresolved name stays inside.
	if err := os.Symlink(filepath.Join(alias, "apps", "web"), filepath.Join(root, "via-alias")); err != nil {
		t.Fatal(err)
	}
	got, err := render.ResolveInRoot(alias, "via-alias/deploy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "apps", "web", "deploy.yaml"); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := render.ResolveInRoot(alias, "apps/out-rel"); !errors.Is(err, render.ErrOutsideRoot) {
		t.Errorf("got %v, want ErrOutsideRoot", err)
	}
}

func TestResolveInRootMissingRoot(t *testing.T) {
	_, err := render.ResolveInRoot(filepath.Join(t.TempDir(), "nope"), "x")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("got %v, want fs.ErrNotExist", err)
	}
}
