package kustomize

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/reposerver/render"
)

func TestParseRemote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ref  string
		want Remote
	}{
		{"https://git.example.com/org/repo//deploy/base?ref=v1.2.0", Remote{RepoURL: "https://git.example.com/org/repo", Path: "deploy/base", Revision: "v1.2.0"}},
		{"https://git.example.com/org/repo.git/deploy/base?version=v2", Remote{RepoURL: "https://git.example.com/org/repo.git", Path: "deploy/base", Revision: "v2"}},
		{"git::https://git.example.com/org/repo.git//base", Remote{RepoURL: "https://git.example.com/org/repo.git", Path: "base"}},
		{"https://github.com/org/repo/deploy/base?ref=main&timeout=90", Remote{RepoURL: "https://github.com/org/repo", Path: "deploy/base", Revision: "main"}},
		{"github.com/org/repo//base?ref=v1", Remote{RepoURL: "https://github.com/org/repo", Path: "base", Revision: "v1"}},
		{"git@github.com:org/repo.git//base?ref=v1", Remote{RepoURL: "git@github.com:org/repo.git", Path: "base", Revision: "v1"}},
		{"ssh://git@git.example.com/org/repo.git//base", Remote{RepoURL: "ssh://git@git.example.com/org/repo.git", Path: "base"}},
		{"https://dev.azure.com/org/project/_git/repo//base", Remote{RepoURL: "https://dev.azure.com/org/project/_git/repo", Path: "base"}},
		{"https://raw.example.com/org/repo/main/deploy.yaml", Remote{File: true}},
		{"http://config.example.com/app.yaml", Remote{File: true}},
	} {
		got, err := ParseRemote(tc.ref)
		if err != nil {
			t.Errorf("ParseRemote(%q): %v", tc.ref, err)
			continue
		}
		tc.want.Ref = tc.ref
		if diff := cmp.Diff(got, tc.want); diff != "" {
			t.Errorf("ParseRemote(%q) (-got +want):\n%s", tc.ref, diff)
		}
	}
	for _, ref := range []string{"file:///etc//passwd", "ext::sh -c touch% /tmp/pwned//x", "s3://bucket/repo//base"} {
		if _, err := ParseRemote(ref); !errors.Is(err, ErrRemoteBase) {
			t.Errorf("ParseRemote(%q) = %v, want ErrRemoteBase", ref, err)
		}
	}
}

// A remote base the caller fetched renders in place of its URL and reads
// nothing but what the render was given (neither ".." nor a symlink
// leads out to the host), and a resource at a URL comes from
// FetchedFiles.
func TestRenderRemoteBases(t *testing.T) {
	t.Parallel()
	const baseURL = "https://git.example.com/org/bases.git//web?ref=v1"
	const fileURL = "https://raw.example.com/crd.yaml"
	overlay := t.TempDir()
	bases := t.TempDir()
	write := func(dir, name, data string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(overlay, "app/kustomization.yaml", "namePrefix: prod-\nresources:\n- "+baseURL+"\n- "+fileURL+"\n")
	write(overlay, "secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: overlay-secret\n")
	write(bases, "web/kustomization.yaml", "resources:\n- cm.yaml\n")
	write(bases, "web/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n")
	write(bases, "climb/kustomization.yaml", "resources:\n- ../../../../etc/passwd\n")
	write(bases, "link/kustomization.yaml", "resources:\n- leak.yaml\n")
	if err := os.Symlink(filepath.Join(overlay, "secret.yaml"), filepath.Join(bases, "link", "leak.yaml")); err != nil {
		t.Fatal(err)
	}
	req := func(path string) render.Request {
		return render.Request{
			RepoRoot: overlay, Path: "app", AppName: "web", Namespace: "demo",
			RemoteBases:  map[string]render.RemoteBase{baseURL: {Root: bases, Path: path}},
			FetchedFiles: map[string][]byte{fileURL: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fetched\n")},
		}
	}
	objs, err := Render(t.Context(), req("web"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(objs), []string{"ConfigMap//prod-fetched", "ConfigMap//prod-web"}; !slices.Equal(got, want) {
		t.Errorf("objects = %v, want %v", got, want)
	}
	for _, path := range []string{"climb", "link"} {
		if _, err := Render(t.Context(), req(path)); !errors.Is(err, render.ErrOutsideRoot) {
			t.Errorf("base %s: err = %v, want ErrOutsideRoot", path, err)
		}
	}
}
