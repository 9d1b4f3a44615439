package helm

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// testRepo copies testdata/repo into a temporary checkout and returns its
// root, beside which a file "outside.txt" lies outside the checkout.
func testRepo(t testing.TB) string {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	reposervertest.CopyTree(t, filepath.Join("testdata", "repo"), root)
	writeFile(t, filepath.Join(base, "outside.txt"), "secret: outside the repository\n")
	return root
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// appRequest is a request for the app chart of testdata/repo.
func appRequest(root string, h *v1alpha1.ApplicationSourceHelm) render.Request {
	return render.Request{
		RepoRoot:  root,
		Path:      "apps/app",
		Source:    v1alpha1.ApplicationSource{Helm: h},
		AppName:   "guestbook",
		Namespace: "guestbook-ns",
	}
}

// ids lists objects as kind/name in output order.
func ids(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

func sortedIDs(objs []*unstructured.Unstructured) []string {
	out := ids(objs)
	sort.Strings(out)
	return out
}

func find(t testing.TB, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s/%s in %v", kind, name, ids(objs))
	return nil
}

// configData returns the data of the app chart's ConfigMap.
func configData(t testing.TB, objs []*unstructured.Unstructured, name string) map[string]string {
	t.Helper()
	data, _, err := unstructured.NestedStringMap(find(t, objs, "ConfigMap", name).Object, "data")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkErr reports an error unless err wraps wantErr (when set) or says
// wantMsg (when set). It returns true when neither is set, for the caller
// to check the success case.
func checkErr(t testing.TB, err, wantErr error, wantMsg string) bool {
	t.Helper()
	switch {
	case wantErr != nil:
		if !errors.Is(err, wantErr) {
			t.Errorf("err = %v, want %v", err, wantErr)
		}
	case wantMsg != "":
		if err == nil || !strings.Contains(err.Error(), wantMsg) {
			t.Errorf("err = %v, want one saying %q", err, wantMsg)
		}
	default:
		return true
	}
	return false
}
