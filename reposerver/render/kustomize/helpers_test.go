package kustomize

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// checkout copies testdata/repo to a fresh directory as a stand-in for a
// Git checkout and returns its absolute path. testdata/outside is copied
// beside it, so paths that escape the checkout find real files there.
func checkout(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	reposervertest.CopyTree(t, filepath.Join("testdata", "repo"), filepath.Join(dir, "repo"))
	reposervertest.CopyTree(t, filepath.Join("testdata", "outside"), filepath.Join(dir, "outside"))
	return filepath.Join(dir, "repo")
}

// renderApp renders the app at path in the checkout at root.
func renderApp(t testing.TB, root, path string, k *v1alpha1.ApplicationSourceKustomize) ([]*unstructured.Unstructured, error) {
	t.Helper()
	return Render(t.Context(), render.Request{
		RepoRoot:  root,
		Path:      path,
		AppName:   "guestbook",
		Namespace: "apps",
		Source:    v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/infra.git", Path: path, Kustomize: k},
	})
}

// ids lists the objects as kind/namespace/name, in output order.
func ids(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
	}
	return out
}

// find returns the only object of kind whose name starts with prefix.
func find(t testing.TB, objs []*unstructured.Unstructured, kind, prefix string) *unstructured.Unstructured {
	t.Helper()
	var found []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind && strings.HasPrefix(o.GetName(), prefix) {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one %s named %s*, got %d among %v", kind, prefix, len(found), ids(objs))
	}
	return found[0]
}

// fieldOf returns the value at a dotted path, with [i] for list items, as
// text; "<none>" if it is missing.
func fieldOf(o *unstructured.Unstructured, path string) string {
	var cur any = o.Object
	for _, part := range strings.Split(path, ".") {
		name, idx, isItem := strings.Cut(part, "[")
		if m, ok := cur.(map[string]any); ok {
			cur, ok = m[name]
			if !ok {
				return "<none>"
			}
		} else {
			return "<none>"
		}
		if isItem {
			var i int
			if _, err := fmt.Sscanf(idx, "%d]", &i); err != nil {
				return "<bad path>"
			}
			list, ok := cur.([]any)
			if !ok || i >= len(list) {
				return "<none>"
			}
			cur = list[i]
		}
	}
	if m, ok := cur.(map[string]any); ok {
		pairs := make([]string, 0, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			pairs = append(pairs, fmt.Sprintf("%s=%v", k, m[k]))
		}
		return strings.Join(pairs, ",")
	}
	return fmt.Sprint(cur)
}

// treeHash hashes every path, mode and content under root, so a test can
// tell whether anything in a checkout changed.
func treeHash(t testing.TB, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		_, _ = fmt.Fprintf(h, "%s %v %d\n", rel, info.Mode(), info.ModTime().UnixNano())
		if info.Mode().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer func() { _ = f.Close() }()
			if _, err := io.Copy(h, f); err != nil {
				return err
			}
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			_, _ = fmt.Fprintf(h, "-> %s\n", target)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("hash %s: %v", root, err)
	}
	return hex.EncodeToString(h.Sum(nil))
}
