package webhook

import (
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func TestRevisionMatch(t *testing.T) {
	branch := func(name string) Ref { return Ref{Name: name} }
	tag := func(name string) Ref { return Ref{Name: name, Tag: true} }
	tests := []struct {
		name   string
		push   Push
		target string
		want   bool
	}{
		{"branch", Push{Refs: []Ref{branch("main")}}, "main", true},
		{"branch ref", Push{Refs: []Ref{branch("main")}}, "refs/heads/main", true},
		{"other branch", Push{Refs: []Ref{branch("main")}}, "develop", false},
		{"tag", Push{Refs: []Ref{tag("v1")}}, "v1", true},
		{"tag ref", Push{Refs: []Ref{tag("v1")}}, "refs/tags/v1", true},
		{"branch named like a tag target", Push{Refs: []Ref{branch("v1")}}, "refs/tags/v1", true},
		{"HEAD on default", Push{Refs: []Ref{branch("main")}, DefaultBranch: "main"}, "HEAD", true},
		{"empty on default", Push{Refs: []Ref{branch("main")}, DefaultBranch: "refs/heads/main"}, "", true},
		{"HEAD off default", Push{Refs: []Ref{branch("feature")}, DefaultBranch: "main"}, "HEAD", false},
		{"HEAD, default unknown", Push{Refs: []Ref{branch("feature")}}, "HEAD", true},
		{"HEAD on a tag", Push{Refs: []Ref{tag("main")}, DefaultBranch: "main"}, "HEAD", false},
		{"HEAD, tag, default unknown", Push{Refs: []Ref{tag("v1")}}, "HEAD", false},
		{"commit", Push{Refs: []Ref{branch("main")}}, "59b20b8d5c6ff8d09518454d4dd8b7b30f095ab5", false},
		{"commit named as a branch", Push{Refs: []Ref{branch("59b20b8d5c6ff8d09518454d4dd8b7b30f095ab5")}}, "59b20b8d5c6ff8d09518454d4dd8b7b30f095ab5", false},
		{"one of many", Push{Refs: []Ref{branch("a"), branch("b"), tag("c")}}, "b", true},
		{"no refs", Push{}, "main", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := newMatcher(tt.push).revision(tt.target); got != tt.want {
				t.Errorf("push %+v, target %q: match %v, want %v", tt.push, tt.target, got, tt.want)
			}
		})
	}
}

func TestManifestPaths(t *testing.T) {
	files := []string{"apps/guestbook/deployment.yaml", "README.md"}
	tests := []struct {
		name, paths, sourcePath string
		files                   []string
		known                   bool
		want                    bool
	}{
		{"no annotation", "", "apps/guestbook", files, true, true},
		{"blank annotation", " ; ", "apps/guestbook", files, true, true},
		{"source path", ".", "apps/guestbook", files, true, true},
		{"source path, elsewhere", ".", "apps/other", files, true, false},
		{"relative sibling", "../guestbook", "apps/other", files, true, true},
		{"relative subdirectory", "./base", "apps/guestbook", files, true, false},
		{"absolute", "/apps/guestbook", "elsewhere", files, true, true},
		{"absolute file", "/README.md", "apps/other", files, true, true},
		{"absolute prefix is not a directory", "/apps/guest", "", files, true, false},
		{"several, one touched", "/charts;/apps/guestbook", "x", files, true, true},
		{"several, none touched", "/charts; ./base", "apps/guestbook", files, true, false},
		{"glob directory", "/apps/*", "", files, true, true},
		{"glob file", "/apps/guestbook/*.yaml", "", files, true, true},
		{"glob elsewhere", "/apps/*/values-*.yaml", "", files, true, false},
		{"repository root", "/", "apps/other", files, true, true},
		{"files unknown", "/charts", "apps/guestbook", nil, false, true},
		{"leading slash in payload", "/apps/guestbook", "", []string{"/apps/guestbook/x.yaml"}, true, true},
		{"dot dot in payload", "/apps/guestbook", "", []string{"apps/other/../guestbook/x.yaml"}, true, true},
		{"too many files", "/charts", "apps/guestbook", make([]string, maxChangedFiles+1), true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMatcher(Push{ChangedFiles: tt.files, FilesKnown: tt.known})
			if got := m.touches(tt.paths, tt.sourcePath); got != tt.want {
				t.Errorf("paths %q from %q, files %v: touched %v, want %v", tt.paths, tt.sourcePath, tt.files, got, tt.want)
			}
		})
	}
}

// An app with a source hydrator is matched by a push to its dry source's
// branch and path (a push to hydrate) and by one to its sync branch (a
// promotion), and by nothing else.
func TestSourceHydratorMatch(t *testing.T) {
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{
		Source: &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/org/ignored", TargetRevision: "main"},
		SourceHydrator: &v1alpha1.SourceHydrator{
			DrySource:  v1alpha1.DrySource{RepoURL: "https://git.example.com/org/dry", TargetRevision: "main", Path: "base"},
			SyncSource: v1alpha1.SyncSource{TargetBranch: "env/prod", Path: "apps/web"},
		},
	}}
	app.Annotations = map[string]string{ManifestPathsAnnotation: "."}
	push := func(repo, branch, file string) Push {
		return Push{RepoURLs: []string{repo}, Refs: []Ref{{Name: branch}}, ChangedFiles: []string{file}, FilesKnown: true}
	}
	for _, tc := range []struct {
		name string
		push Push
		want bool
	}{
		{"dry source", push("https://git.example.com/org/dry.git", "main", "base/cm.yaml"), true},
		{"dry branch, other path", push("https://git.example.com/org/dry", "main", "docs/x.md"), false},
		{"sync branch", push("https://git.example.com/org/dry", "env/prod", "apps/web/manifest.yaml"), true},
		{"other branch", push("https://git.example.com/org/dry", "feature", "base/cm.yaml"), false},
		{"spec.source's repository is ignored", push("https://git.example.com/org/ignored", "main", "x.yaml"), false},
	} {
		if got := newMatcher(tc.push).app(app); got != tc.want {
			t.Errorf("%s: match %v, want %v", tc.name, got, tc.want)
		}
	}
}
