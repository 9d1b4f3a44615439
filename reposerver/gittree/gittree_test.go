package gittree

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

func TestMatchGlob(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"apps/*", "apps/web", true},
		{"apps/*", "apps/web/x", false},
		{"**/config.json", "config.json", true},
		{"**/config.json", "a/b/c/config.json", true},
		{"a/**/b/**/c", "a/x/b/y/z/c", true},
		{"a/**/b/**/c", "a/x/y/z/c", false},
		{strings.Repeat("**/", 40) + "x", strings.Repeat("d/", 60) + "y", false},
	} {
		if got := MatchGlob(tc.pattern, tc.path); got != tc.want {
			t.Errorf("MatchGlob(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

// Match finds directories or files with their contents, leaves .git,
// links and excluded paths out, and stops at its bounds.
func TestMatch(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"apps/web/k.yaml": {Data: []byte("a")},
		"apps/api/k.yaml": {Data: []byte("bb")},
		"apps/old/k.yaml": {Data: []byte("c")},
		"apps/.git/HEAD":  {Data: []byte("x")},
		"apps/link.yaml":  {Data: []byte("apps/web/k.yaml"), Mode: fs.ModeSymlink},
		"big/huge.yaml":   {Data: []byte(strings.Repeat("x", MaxFile+1))},
	}
	dirs, err := Match(fsys, Request{Items: []Item{{Path: "apps/*"}, {Path: "apps/old", Exclude: true}}})
	if err != nil || strings.Join(dirs.Paths, ",") != "apps/api,apps/web" {
		t.Errorf("directories: %v, %v", dirs, err)
	}
	files, err := Match(fsys, Request{Files: true, Items: []Item{{Path: "apps/**/*.yaml"}}})
	if err != nil || strings.Join(files.Paths, ",") != "apps/api/k.yaml,apps/old/k.yaml,apps/web/k.yaml" || string(files.Contents[0]) != "bb" {
		t.Errorf("files: %v, %v", files, err)
	}
	if _, err := Match(fsys, Request{Files: true, Items: []Item{{Path: "big/*"}}}); err == nil || !strings.Contains(err.Error(), "big/huge.yaml: more than") {
		t.Errorf("a file over MaxFile: %v", err)
	}
}
