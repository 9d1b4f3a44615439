package webhook

import (
	"path"
	"regexp"
	"strings"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/repourl"
)

// Push is what a push event says, whichever provider sent it. Every URL
// and name in it comes from the request body: it is compared with the
// Applications' specs as a string and never contacted.
type Push struct {
	// Provider names the sender ("github", "gitlab" ...), for logs.
	Provider string
	// RepoURLs are the URLs the payload gives for the repository (web,
	// https clone, ssh clone); an app matches when its repoURL is any of
	// them once normalised.
	RepoURLs []string
	// Refs are the pushed branches and tags.
	Refs []Ref
	// DefaultBranch is the repository's default branch when the payload
	// says it, "" when it does not.
	DefaultBranch string
	// ChangedFiles are the paths, from the repository root, the pushed
	// commits added, modified or removed; FilesKnown says the payload
	// listed them all (not every provider does, and some truncate).
	ChangedFiles []string
	FilesKnown   bool
}

// ManifestPathsAnnotation on an Application lists, separated by ";", the
// paths its manifests depend on, as in Argo CD: relative ones from the
// source's path ("." is the source's path itself), absolute ones from the
// repository root, globs allowed. A push whose changed files are all
// elsewhere does not refresh the app.
const ManifestPathsAnnotation = "argocd.argoproj.io/manifest-generate-paths"

// maxChangedFiles bounds the files a push is checked against, since
// matching runs under the index's lock; a push naming more refreshes
// like one that names none.
const maxChangedFiles = 10000

// Ref is one pushed branch or tag, by its short name ("main", "v1.2.0").
type Ref struct {
	Name string
	Tag  bool
}

// shortRef turns "refs/heads/main" into ("main", false) and
// "refs/tags/v1" into ("v1", true); other names stay as they are.
func shortRef(ref string) Ref {
	if name, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		return Ref{Name: name}
	}
	if name, ok := strings.CutPrefix(ref, "refs/tags/"); ok {
		return Ref{Name: name, Tag: true}
	}
	return Ref{Name: ref}
}

// commitSHA matches a full commit id, which no push ever names as a ref.
var commitSHA = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// matcher decides which apps a push refreshes.
type matcher struct {
	push  Push
	repos map[string]bool
	// files are the push's changed files, cleaned; nil unless FilesKnown.
	files []string
}

func newMatcher(p Push) *matcher {
	m := &matcher{push: p, repos: map[string]bool{}}
	for _, u := range p.RepoURLs {
		if n, ok := repourl.Parse(u).Location(); ok {
			m.repos[n] = true
		}
	}
	if len(p.ChangedFiles) > maxChangedFiles {
		m.push.FilesKnown = false
	}
	if m.push.FilesKnown {
		m.files = make([]string, 0, len(p.ChangedFiles))
		for _, f := range p.ChangedFiles {
			m.files = append(m.files, cleanRepoPath(f))
		}
	}
	return m
}

// cleanRepoPath turns a path in the repository into its clean form from
// the root, without a leading "/": "" is the root itself.
func cleanRepoPath(p string) string {
	return strings.TrimPrefix(path.Clean("/"+p), "/")
}

// empty reports whether the push names no usable repository or ref, so
// that no app can match.
func (m *matcher) empty() bool { return len(m.repos) == 0 || len(m.push.Refs) == 0 }

// app reports whether any Git source of app is the pushed repository at a
// pushed revision. As everywhere, spec.sources when set is the app's
// sources and spec.source is ignored; with spec.sourceHydrator (which wins
// over both) its dry source is matched, which a push makes hydrate again,
// and its sync source, which a promotion to syncSource.targetBranch moves.
func (m *matcher) app(app *v1alpha1.Application) bool {
	paths := app.Annotations[ManifestPathsAnnotation]
	if sh := app.Spec.SourceHydrator; sh != nil {
		dry, synced := sh.GetDrySource(), sh.GetSyncSource()
		return m.source(&dry, paths) || m.source(&synced, paths)
	}
	if s := app.Spec.Source; s != nil && len(app.Spec.Sources) == 0 {
		return m.source(s, paths)
	}
	for i := range app.Spec.Sources {
		if m.source(&app.Spec.Sources[i], paths) {
			return true
		}
	}
	return false
}

// source reports whether the push concerns s, given the app's
// ManifestPathsAnnotation.
func (m *matcher) source(s *v1alpha1.ApplicationSource, paths string) bool {
	if s.Chart != "" {
		return false // a Helm repository, not Git
	}
	n, ok := repourl.Parse(s.RepoURL).Location()
	if !ok || !m.repos[n] {
		return false
	}
	return m.revision(strings.TrimSpace(s.TargetRevision)) && m.touches(paths, s.Path)
}

// git reports whether the push concerns a Git repository at repoURL
// tracked at revision (an ApplicationSet's git generator).
func (m *matcher) git(repoURL, revision string) bool {
	n, ok := repourl.Parse(repoURL).Location()
	return ok && m.repos[n] && m.revision(strings.TrimSpace(revision))
}

// touches reports whether the push changed a file under one of paths (a
// ManifestPathsAnnotation value) of a source at sourcePath. Without
// paths, or without the list of changed files, every push touches.
func (m *matcher) touches(paths, sourcePath string) bool {
	if !m.push.FilesKnown {
		return true
	}
	var patterns []string
	for p := range strings.SplitSeq(paths, ";") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !strings.HasPrefix(p, "/") {
			p = sourcePath + "/" + p
		}
		patterns = append(patterns, cleanRepoPath(p))
	}
	if len(patterns) == 0 {
		return true
	}
	for _, f := range m.files {
		for _, p := range patterns {
			if underPattern(f, p) {
				return true
			}
		}
	}
	return false
}

// underPattern reports whether file is pattern, lies under it, or under
// a directory the glob pattern matches.
func underPattern(file, pattern string) bool {
	if pattern == "" {
		return true // the repository root
	}
	for f := file; ; {
		if f == pattern {
			return true
		}
		if ok, _ := path.Match(pattern, f); ok {
			return true
		}
		i := strings.LastIndexByte(f, '/')
		if i < 0 {
			return false
		}
		f = f[:i]
	}
}

// revision reports whether an app tracking target sees the push. A branch
// or tag matches by name (Argo CD does not tell a branch from a tag of the
// same name); "HEAD" or "" follow the default branch, and when the payload
// does not say which that is, any branch push counts. A commit id never
// moves, so it never matches.
func (m *matcher) revision(target string) bool {
	if commitSHA.MatchString(strings.ToLower(target)) {
		return false
	}
	want := shortRef(target).Name
	for _, r := range m.push.Refs {
		switch {
		case want == "" || want == "HEAD":
			if m.push.DefaultBranch == "" && !r.Tag || !r.Tag && r.Name == shortRef(m.push.DefaultBranch).Name {
				return true
			}
		case r.Name == want:
			return true
		}
	}
	return false
}
