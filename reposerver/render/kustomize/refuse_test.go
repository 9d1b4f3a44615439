package kustomize

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
)

// leaked is the value of testdata/outside/leak.yaml, which no render may
// ever return.
const leaked = "outside-the-repository"

func TestRenderRefuses(t *testing.T) {
	root := checkout(t)
	outside := filepath.Join(filepath.Dir(root), "outside")

	// Symlinks out of the checkout, made at test time: a file, a directory
	// used as a base, and the app directory itself.
	mustSymlink(t, filepath.Join(outside, "leak.yaml"), filepath.Join(root, "bad", "link-file.yaml"))
	mustWrite(t, filepath.Join(root, "bad", "symlink-file", "kustomization.yaml"), "resources:\n  - ../link-file.yaml\n")
	mustSymlink(t, outside, filepath.Join(root, "bad", "link-dir"))
	mustWrite(t, filepath.Join(root, "bad", "symlink-dir", "kustomization.yaml"), "resources:\n  - ../link-dir\n")
	mustSymlink(t, "../../outside", filepath.Join(root, "bad", "relative-link"))
	mustWrite(t, filepath.Join(root, "bad", "symlink-relative", "kustomization.yaml"), "resources:\n  - ../relative-link\n")
	mustSymlink(t, outside, filepath.Join(root, "app-link"))

	tests := []struct {
		name    string
		path    string
		opts    *v1alpha1.ApplicationSourceKustomize
		wantErr error
	}{
		{name: "base outside the repository", path: "bad/outside", wantErr: render.ErrOutsideRoot},
		{name: "absolute resource", path: "bad/absolute", wantErr: render.ErrOutsideRoot},
		{name: "patch file outside the repository", path: "bad/file-outside", wantErr: render.ErrOutsideRoot},
		{name: "symlinked file out of the repository", path: "bad/symlink-file", wantErr: render.ErrOutsideRoot},
		{name: "symlinked directory out of the repository", path: "bad/symlink-dir", wantErr: render.ErrOutsideRoot},
		{name: "relative symlink out of the repository", path: "bad/symlink-relative", wantErr: render.ErrOutsideRoot},
		{name: "app path outside the repository", path: "../outside", wantErr: render.ErrOutsideRoot},
		{name: "app path symlinked out of the repository", path: "app-link", wantErr: render.ErrOutsideRoot},
		{
			name:    "override patch file outside the repository",
			path:    "overlays/plain",
			opts:    &v1alpha1.ApplicationSourceKustomize{Patches: []v1alpha1.KustomizePatch{{Path: "../../../outside/leak.yaml"}}},
			wantErr: render.ErrOutsideRoot,
		},
		{
			name:    "override component outside the repository",
			path:    "overlays/plain",
			opts:    &v1alpha1.ApplicationSourceKustomize{Components: []string{"../../../outside"}},
			wantErr: render.ErrOutsideRoot,
		},
		{
			name:    "remote component override",
			path:    "overlays/plain",
			opts:    &v1alpha1.ApplicationSourceKustomize{Components: []string{"https://github.com/example/infra//components/x"}},
			wantErr: ErrRemote,
		},
		{name: "remote base over https", path: "bad/remote-https", wantErr: ErrRemote},
		{name: "remote base on github.com", path: "bad/remote-github", wantErr: ErrRemote},
		{name: "remote base over ssh", path: "bad/remote-ssh", wantErr: ErrRemote},
		{name: "remote resource file", path: "bad/remote-file", wantErr: ErrRemote},
		{name: "remote generator file", path: "bad/remote-generator", wantErr: ErrRemote},
		{name: "remote base in a nested kustomization", path: "bad/nested", wantErr: ErrRemote},
		{name: "remote file in a transformer configuration", path: "bad/remote-transformer", wantErr: ErrRemote},
		{name: "helm charts", path: "bad/helm", wantErr: ErrHelmUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := renderApp(t, root, tt.path, tt.opts)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want one wrapping %q (objects %v)", err, tt.wantErr, ids(objs))
			}
			if strings.Contains(err.Error(), leaked) || strings.Contains(err.Error(), root) {
				t.Errorf("error shows outside content or the checkout path: %v", err)
			}
		})
	}
}

func TestIsRemoteBase(t *testing.T) {
	tests := map[string]bool{
		"../../base":                             false,
		"deployment.yaml":                        false,
		"github.com.yaml":                        false,
		"https://example.com/x.yaml":             true,
		"HTTP://example.com/x.yaml":              true,
		"git::https://example.com/repo.git":      true,
		"ssh://git@example.com/repo.git":         true,
		"file:///etc":                            true,
		"git@github.com:org/repo.git":            true,
		"github.com/org/repo/path?ref=v1":        true,
		"GitHub.com:org/repo":                    true,
		"gitlab.example.com/org/repo//base?ref=": false, // kustomize too reads it as a local path
	}
	for ref, want := range tests {
		if got := isRemoteBase(ref); got != want {
			t.Errorf("isRemoteBase(%q) = %v, want %v", ref, got, want)
		}
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
