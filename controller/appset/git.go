package appset

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/gittree"
)

// GitSources also give the git generators their repositories.
type GitSources interface {
	Sources
	// GitMatch matches req in repoURL at revision ("" is HEAD), with
	// gittree.Match's bounds.
	GitMatch(repoURL, revision string, req gittree.Request) (*gittree.Result, error)
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
	req := gittree.Request{Files: len(g.Files) > 0}
	for _, d := range g.Directories {
		req.Items = append(req.Items, gittree.Item{Path: d.Path, Exclude: d.Exclude})
	}
	for _, f := range g.Files {
		req.Items = append(req.Items, gittree.Item{Path: f.Path, Exclude: f.Exclude})
	}
	matched, err := src.GitMatch(g.RepoURL, g.Revision, req)
	if err != nil {
		return nil, fmt.Errorf("git: %w", err)
	}
	var sets []map[string]any
	if req.Files {
		sets, err = s.gitFiles(matched, g)
	} else {
		sets = s.gitDirectories(matched, g)
	}
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", g.RepoURL, err)
	}
	out := make([]paramSet, 0, len(sets))
	for _, params := range sets {
		if err := s.addValues(params, g.Values); err != nil {
			return nil, fmt.Errorf("git: %w", err)
		}
		out = append(out, paramSet{params: params, template: g.Template})
	}
	return out, nil
}

// gitDirectories returns the path parameters of each matched directory.
func (s *setRun) gitDirectories(matched *gittree.Result, g *v1alpha1.GitGenerator) []map[string]any {
	out := make([]map[string]any, len(matched.Paths))
	for i, p := range matched.Paths {
		out[i] = s.pathParams(p, g.PathParamPrefix, false)
	}
	return out
}

// gitFiles returns, for each matched file, its fields (an object) or
// each element's (a list), with the path parameters.
func (s *setRun) gitFiles(matched *gittree.Result, g *v1alpha1.GitGenerator) ([]map[string]any, error) {
	if len(matched.Contents) != len(matched.Paths) {
		return nil, fmt.Errorf("%d files but %d contents", len(matched.Paths), len(matched.Contents))
	}
	var out []map[string]any
	for i, p := range matched.Paths {
		elements, err := parseElements(p, matched.Contents[i])
		if err != nil {
			return nil, err
		}
		for _, e := range elements {
			for k, v := range s.pathParams(p, g.PathParamPrefix, true) {
				e[k] = v
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// parseElements decodes a JSON or YAML file: an object is one element, a
// list of objects several.
func parseElements(p string, data []byte) ([]map[string]any, error) {
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
