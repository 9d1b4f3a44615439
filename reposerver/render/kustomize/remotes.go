package kustomize

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"

	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/reposerver/render"
)

// Remote is an entry of a kustomization's resources, bases or components
// that is not in the repository: a Git repository to fetch a base from,
// or a file to download.
type Remote struct {
	// Ref is the entry as the kustomization writes it.
	Ref string
	// File is true for a file at an http(s) URL (Ref); otherwise Ref is a
	// Git base: the directory Path of RepoURL at Revision ("" = the
	// default branch).
	File                    bool
	RepoURL, Path, Revision string
}

// ErrRemoteBase is wrapped when a remote base's URL cannot be fetched:
// a scheme or form graphcd does not fetch (file://, a local path).
var ErrRemoteBase = errors.New("remote base not allowed")

// Limits of Scan: kustomizations visited in one repository, and the
// size of one kustomization file.
const (
	maxScannedKustomizations = 500
	maxKustomizationSize     = 1 << 20
)

// Chart is a chart a kustomization's helmCharts pull from a chart
// repository (or OCI registry): one its chart home does not hold.
type Chart struct {
	Repo, Name, Version string
}

// Needs are what the kustomizations of a render fetch: remote entries
// (resources, bases, components), each once in the order found, and the
// charts of their helmCharts.
type Needs struct {
	Remotes []Remote
	Charts  []Chart
}

// Scan returns what the kustomization at appPath in the checkout at root,
// and every kustomization in the same repository it uses, fetch.
// Everything it reads stays inside root.
func Scan(root, appPath string) (Needs, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return Needs{}, fmt.Errorf("open repository: %w", render.Bare(err))
	}
	defer func() { _ = r.Close() }()
	s := &scanner{dir: root, root: r, seen: map[string]bool{}, refs: map[string]bool{}}
	if err := s.scan(path.Clean("/" + filepath.ToSlash(appPath))[1:]); err != nil {
		return Needs{}, err
	}
	return s.out, nil
}

type scanner struct {
	dir  string
	root *os.Root
	seen map[string]bool // directories scanned
	refs map[string]bool // remote entries and charts found
	out  Needs
}

// scan reads the kustomization in dir (relative to the root, "" = the
// root), records its remote entries and scans the local directories it
// names. A directory without a kustomization is kustomize's to judge.
func (s *scanner) scan(dir string) error {
	if dir == "" {
		dir = "."
	}
	abs, err := render.ResolveInRoot(s.dir, dir)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(s.dir, abs)
	if err != nil {
		return err
	}
	rel = filepath.ToSlash(rel)
	if s.seen[rel] {
		return nil
	}
	if len(s.seen) >= maxScannedKustomizations {
		return fmt.Errorf("more than %d kustomizations: %w", maxScannedKustomizations, render.ErrTooLarge)
	}
	s.seen[rel] = true
	data, name, err := s.readKustomization(rel)
	if err != nil || data == nil {
		return err
	}
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return nil //nolint:nilerr // kustomize reports the parse error when it builds
	}
	s.charts(rel, &k)
	for _, entries := range [][]string{k.Resources, k.Bases, k.Components} { //nolint:staticcheck // bases: deprecated, still honoured
		for _, e := range entries {
			if isInline(e) {
				continue
			}
			if isRemoteBase(e) {
				if !s.refs[e] {
					remote, err := ParseRemote(e)
					if err != nil {
						return fmt.Errorf("%s: %w", path.Join(rel, name), err)
					}
					s.refs[e] = true
					s.out.Remotes = append(s.out.Remotes, remote)
				}
				continue
			}
			next := path.Join(rel, filepath.ToSlash(e))
			if fi, err := s.root.Stat(next); err != nil || !fi.IsDir() {
				continue // a file, or missing: kustomize says
			}
			if err := s.scan(next); err != nil {
				return err
			}
		}
	}
	return nil
}

// charts records the helmCharts of the kustomization k in dir that its
// chart home does not hold.
func (s *scanner) charts(dir string, k *types.Kustomization) {
	home := chartHome(path.Join(dir, "kustomization.yaml"), k)
	for _, c := range k.HelmCharts {
		if c.Repo == "" || c.Name == "" {
			continue // a local chart, or kustomize's error
		}
		if fi, err := s.root.Stat(path.Join(home, c.Name)); err == nil && fi.IsDir() {
			continue
		}
		chart := Chart{Repo: c.Repo, Name: c.Name, Version: c.Version}
		if key := "chart\x00" + render.ChartKey(chart.Repo, chart.Name, chart.Version); !s.refs[key] {
			s.refs[key] = true
			s.out.Charts = append(s.out.Charts, chart)
		}
	}
}

// readKustomization returns the kustomization file of dir and its name,
// or nil when dir has none.
func (s *scanner) readKustomization(dir string) ([]byte, string, error) {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		f, err := s.root.Open(path.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("read %s: %w", path.Join(dir, name), render.Bare(err))
		}
		data, err := io.ReadAll(io.LimitReader(f, maxKustomizationSize+1))
		_ = f.Close()
		if err != nil {
			return nil, "", fmt.Errorf("read %s: %w", path.Join(dir, name), render.Bare(err))
		}
		if len(data) > maxKustomizationSize {
			return nil, "", fmt.Errorf("%s: more than %d bytes: %w", path.Join(dir, name), maxKustomizationSize, render.ErrTooLarge)
		}
		return data, name, nil
	}
	return nil, "", nil
}

// knownForges are hosts whose https URLs are always repositories (their
// raw files live on other hosts), so the first two path elements are
// the repository, as kustomize reads them.
var knownForges = map[string]bool{"github.com": true, "gitlab.com": true, "bitbucket.org": true}

// ParseRemote reads a remote entry as kustomize does: a Git base in
// go-getter's form (`https://host/org/repo//path?ref=v1`,
// `git@host:org/repo.git//path`, `ssh://...`, `github.com/org/repo/path`,
// an optional `git::` prefix; `ref` or `version` name the revision), or
// an http(s) URL of a file. Only https, http and ssh repositories are
// fetched: file:// and other schemes fail with ErrRemoteBase.
func ParseRemote(ref string) (Remote, error) {
	s := strings.TrimSpace(ref)
	s = strings.TrimPrefix(s, "git::")
	out := Remote{Ref: ref}
	query := ""
	if i := strings.LastIndexByte(s, '?'); i >= 0 {
		s, query = s[:i], s[i+1:]
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return Remote{}, fmt.Errorf("remote base %q: query: %w", repourl.Redact(ref), err)
	}
	out.Revision = q.Get("ref")
	if out.Revision == "" {
		out.Revision = q.Get("version")
	}
	scheme, rest, hasScheme := strings.Cut(s, "://")
	switch {
	case hasScheme:
		scheme = strings.ToLower(scheme)
		if scheme != "https" && scheme != "http" && scheme != "ssh" {
			return Remote{}, fmt.Errorf("remote base %q: %w: graphcd fetches https, http and ssh repositories, not %s://", repourl.Redact(ref), ErrRemoteBase, scheme)
		}
	case scpUser.MatchString(s):
		scheme, rest = "", s
	case strings.HasPrefix(strings.ToLower(s), "github.com/"), strings.HasPrefix(strings.ToLower(s), "gitlab.com/"):
		scheme, rest = "https", s
	default:
		return Remote{}, fmt.Errorf("remote base %q: %w: not a repository URL", repourl.Redact(ref), ErrRemoteBase)
	}
	if (scheme == "https" || scheme == "http") && !isRepoURL(rest, q) {
		out.File = true
		return out, nil
	}
	repo, sub := splitRepo(rest)
	if repo == "" {
		return Remote{}, fmt.Errorf("remote base %q: %w: no repository", repourl.Redact(ref), ErrRemoteBase)
	}
	if scheme != "" {
		repo = scheme + "://" + repo
	}
	out.RepoURL, out.Path = repo, strings.Trim(sub, "/")
	return out, nil
}

// isRepoURL reports whether an http(s) URL (scheme stripped) names a Git
// repository rather than a file: a "//" before the path in the
// repository, a ".git" element, Azure DevOps' "_git", a ref or version
// parameter, or a forge host.
func isRepoURL(rest string, q url.Values) bool {
	host, p, _ := strings.Cut(rest, "/")
	if q.Has("ref") || q.Has("version") || knownForges[strings.ToLower(host)] {
		return true
	}
	return strings.Contains(p, "//") || strings.Contains(p+"/", ".git/") || strings.Contains(p, "_git/")
}

// splitRepo splits host/org/repo//path (scheme stripped) into the
// repository and the path in it.
func splitRepo(rest string) (repo, sub string) {
	// The repository ends at "//" (after the host), else after a ".git"
	// element, else after two elements on a forge, else at the end.
	hostEnd := strings.IndexAny(rest, "/:")
	if hostEnd < 0 {
		return rest, ""
	}
	if i := strings.Index(rest[hostEnd+1:], "//"); i >= 0 {
		return rest[:hostEnd+1+i], rest[hostEnd+1+i+2:]
	}
	if i := strings.Index(rest+"/", ".git/"); i >= 0 {
		return rest[:i+4], strings.TrimPrefix(rest[i+4:], "/")
	}
	host := rest[:hostEnd]
	if knownForges[strings.ToLower(host)] && rest[hostEnd] == '/' {
		parts := strings.SplitN(rest[hostEnd+1:], "/", 3)
		if len(parts) >= 2 {
			repo = host + "/" + parts[0] + "/" + parts[1]
			if len(parts) == 3 {
				sub = parts[2]
			}
			return repo, sub
		}
	}
	return rest, ""
}

// prepare returns the kustomization at vpath as kustomize is to see it:
// its remote entries (resources, bases, components) that the caller
// fetched pointed at their virtual paths, relative to its directory
// (kustomize takes no absolute root), and its helmCharts inflated into
// resources (inflateCharts). Anything else is returned as it is;
// entries left remote are refused afterwards by checkFile. Each content
// of a file is prepared once per render.
func (f *repoFS) prepare(vpath string, data []byte) ([]byte, error) {
	if !slices.Contains(konfig.RecognizedKustomizationFileNames(), path.Base(vpath)) {
		return data, nil
	}
	sum := sha256.Sum256(data)
	key := vpath + "\x00" + string(sum[:])
	if done, ok := f.prepared[key]; ok {
		return done, nil
	}
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return data, nil //nolint:nilerr // kustomize reports the parse error itself
	}
	changed := false
	place := func(entries []string) {
		for i, e := range entries {
			if target, ok := f.remotes[e]; ok {
				entries[i], changed = relTo(path.Dir(vpath), target), true
			}
		}
	}
	place(k.Resources)
	place(k.Bases) //nolint:staticcheck // deprecated, still honoured by kustomize
	place(k.Components)
	if len(k.HelmCharts) > 0 && f.build.enableHelm {
		if err := f.inflateCharts(vpath, &k); err != nil {
			return nil, err
		}
		changed = true
	}
	if changed {
		out, err := json.Marshal(&k)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", shownPath(vpath), err)
		}
		data = out
	}
	f.prepared[key] = data
	return data, nil
}
