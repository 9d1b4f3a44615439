package appset

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Limits of the git generators.
const (
	// maxGitEntries bounds the entries of a repository a generator walks.
	maxGitEntries = 100000
	// maxGitFile bounds one file the files generator reads.
	maxGitFile = 1 << 20
	// maxGitFiles bounds the files one generator reads.
	maxGitFiles = 10000
)

// Tree is a repository's files at a commit, for the git generators.
type Tree interface {
	fs.FS
	// Revision is the commit the tree is at.
	Revision() string
}

// GitSources also give the git generators their repositories.
type GitSources interface {
	Sources
	// GitTree returns repoURL's tree at revision ("" is HEAD).
	GitTree(repoURL, revision string) (Tree, error)
}

// errNoGit is the git generator's error without GitSources.
var errNoGit = errors.New("git: no repositories to read")

// git returns the parameter sets of a git generator: one per matching
// directory, or one per matching file (a file holding a list gives one
// per element).
func (s *setRun) git(g *v1alpha1.GitGenerator) ([]paramSet, error) {
	src, ok := s.sources.(GitSources)
	if !ok {
		return nil, errNoGit
	}
	if (len(g.Directories) == 0) == (len(g.Files) == 0) {
		return nil, errors.New("git: set exactly one of directories and files")
	}
	tree, err := src.GitTree(g.RepoURL, g.Revision)
	if err != nil {
		return nil, fmt.Errorf("git: %w", err)
	}
	var sets []map[string]any
	if len(g.Directories) > 0 {
		sets, err = s.gitDirectories(tree, g)
	} else {
		sets, err = s.gitFiles(tree, g)
	}
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", g.RepoURL, err)
	}
	out := make([]paramSet, 0, len(sets))
	for _, params := range sets {
		if len(g.Values) > 0 {
			values := map[string]any{}
			for k, v := range g.Values {
				rendered, err := s.r.field(v, params)
				if err != nil {
					return nil, fmt.Errorf("git: values.%s: %w", k, err)
				}
				values[k] = rendered
			}
			params["values"] = values
		}
		out = append(out, paramSet{params: params, template: g.Template})
	}
	return out, nil
}

// gitDirectories returns the path parameters of each directory that a
// directory item includes and none excludes, in path order.
func (s *setRun) gitDirectories(tree Tree, g *v1alpha1.GitGenerator) ([]map[string]any, error) {
	var out []map[string]any
	err := walk(tree, func(p string, d fs.DirEntry) error {
		if !d.IsDir() || !matchItems(p, g.Directories) {
			return nil
		}
		out = append(out, s.pathParams(p, g.PathParamPrefix, false))
		return nil
	})
	return out, err
}

// gitFiles returns, for each file a file item matches, its fields (an
// object) or each element's (a list), with the path parameters.
func (s *setRun) gitFiles(tree Tree, g *v1alpha1.GitGenerator) ([]map[string]any, error) {
	items := make([]v1alpha1.GitDirectoryGeneratorItem, len(g.Files))
	for i, f := range g.Files {
		items[i] = v1alpha1.GitDirectoryGeneratorItem(f)
	}
	var out []map[string]any
	files := 0
	err := walk(tree, func(p string, d fs.DirEntry) error {
		if d.IsDir() || !d.Type().IsRegular() || !matchItems(p, items) {
			return nil
		}
		if files++; files > maxGitFiles {
			return fmt.Errorf("more than %d matching files", maxGitFiles)
		}
		elements, err := readElements(tree, p)
		if err != nil {
			return err
		}
		for _, e := range elements {
			for k, v := range s.pathParams(p, g.PathParamPrefix, true) {
				e[k] = v
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

// readElements reads a JSON or YAML file: an object is one element, a
// list of objects several.
func readElements(tree Tree, p string) ([]map[string]any, error) {
	f, err := tree.Open(p)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, maxGitFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxGitFile {
		return nil, fmt.Errorf("%s: more than %d bytes", p, maxGitFile)
	}
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	switch v := v.(type) {
	case map[string]any:
		return []map[string]any{v}, nil
	case []any:
		out := make([]map[string]any, 0, len(v))
		for i, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: element %d is not an object", p, i)
			}
			out = append(out, m)
		}
		return out, nil
	case nil:
		return nil, nil
	}
	return nil, fmt.Errorf("%s: neither an object nor a list of objects", p)
}

// pathParams are the parameters of path p, as Argo CD names them: with
// goTemplate under "path" (path, basename, basenameNormalized, segments,
// and for files filename, filenameNormalized); otherwise flat ("path",
// "path.basename", "path[0]" ...). prefix, when set, goes before "path".
func (s *setRun) pathParams(p, prefix string, file bool) map[string]any {
	dir := p
	if file {
		dir = path.Dir(p)
	}
	segments := strings.Split(dir, "/")
	base := path.Base(dir)
	name := "path"
	if prefix != "" {
		name = prefix + ".path"
	}
	if s.r.goTemplate {
		v := map[string]any{"path": dir, "basename": base, "basenameNormalized": normalize(base), "segments": toAny(segments)}
		if file {
			v["filename"], v["filenameNormalized"] = path.Base(p), normalize(path.Base(p))
		}
		if prefix == "" {
			return map[string]any{"path": v}
		}
		return map[string]any{prefix: map[string]any{"path": v}}
	}
	out := map[string]any{name: dir, name + ".basename": base, name + ".basenameNormalized": normalize(base)}
	if file {
		out[name+".filename"], out[name+".filenameNormalized"] = path.Base(p), normalize(path.Base(p))
	}
	for i, seg := range segments {
		out[fmt.Sprintf("%s[%d]", name, i)] = seg
	}
	return out
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// walk visits every entry of tree but .git, in lexical order, within
// maxGitEntries.
func walk(tree Tree, visit func(p string, d fs.DirEntry) error) error {
	n := 0
	return fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if n++; n > maxGitEntries {
			return fmt.Errorf("more than %d entries in the repository", maxGitEntries)
		}
		return visit(p, d)
	})
}

// matchItems reports whether p matches an including item and no
// excluding one.
func matchItems(p string, items []v1alpha1.GitDirectoryGeneratorItem) bool {
	included := slices.ContainsFunc(items, func(it v1alpha1.GitDirectoryGeneratorItem) bool { return !it.Exclude && matchGlob(it.Path, p) })
	return included && !slices.ContainsFunc(items, func(it v1alpha1.GitDirectoryGeneratorItem) bool { return it.Exclude && matchGlob(it.Path, p) })
}

// matchGlob matches a slash-separated path against a glob whose "**"
// element matches any number of elements and whose other elements are
// path.Match patterns.
func matchGlob(pattern, p string) bool {
	return matchParts(strings.Split(strings.Trim(pattern, "/"), "/"), strings.Split(p, "/"))
}

func matchParts(pat, parts []string) bool {
	// match[i][j]: pat[i:] matches parts[j:]; filled from the end, so
	// any number of "**" costs len(pat) × len(parts) steps.
	match := make([][]bool, len(pat)+1)
	for i := range match {
		match[i] = make([]bool, len(parts)+1)
	}
	match[len(pat)][len(parts)] = true
	for i := len(pat) - 1; i >= 0; i-- {
		for j := len(parts); j >= 0; j-- {
			if pat[i] == "**" {
				match[i][j] = match[i+1][j] || (j < len(parts) && match[i][j+1])
				continue
			}
			if j < len(parts) {
				ok, err := path.Match(pat[i], parts[j])
				match[i][j] = err == nil && ok && match[i+1][j+1]
			}
		}
	}
	return match[0][0]
}
