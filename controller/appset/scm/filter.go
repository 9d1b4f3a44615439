package scm

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// maxPattern bounds a filter's regular expression (RE2 runs in linear
// time; the bound keeps compiling cheap).
const maxPattern = 1024

// pattern is a filter's field holding a regular expression, and where
// it compiles to.
type pattern struct {
	field string
	text  *string
	re    **regexp.Regexp
}

// compileAll compiles the patterns of filter i; unset or "" is no
// condition (nil).
func compileAll(i int, ps ...pattern) error {
	for _, p := range ps {
		text := deref(p.text)
		if text == "" {
			continue
		}
		if len(text) > maxPattern {
			return fmt.Errorf("filters[%d].%s: %d characters, more than %d", i, p.field, len(text), maxPattern)
		}
		re, err := regexp.Compile(text)
		if err != nil {
			return fmt.Errorf("filters[%d].%s: %w", i, p.field, err)
		}
		*p.re = re
	}
	return nil
}

// matches reports whether re is no condition or matches s.
func matches(re *regexp.Regexp, s string) bool { return re == nil || re.MatchString(s) }

// repoFilterSpec is an scmProvider filter as the spec writes it.
type repoFilterSpec struct {
	RepositoryMatch *string  `json:"repositoryMatch"`
	PathsExist      []string `json:"pathsExist"`
	PathsDoNotExist []string `json:"pathsDoNotExist"`
	LabelMatch      *string  `json:"labelMatch"`
	BranchMatch     *string  `json:"branchMatch"`
}

// repoFilter is a compiled scmProvider filter: all its conditions must
// hold.
type repoFilter struct {
	repository, label, branch   *regexp.Regexp
	pathsExist, pathsDoNotExist []string
}

// repoFilters are an scmProvider's filters: a repository and branch
// passes when one of them matches (or there are none).
type repoFilters []repoFilter

func compileRepoFilters(specs []repoFilterSpec) (repoFilters, error) {
	out := make(repoFilters, len(specs))
	for i, s := range specs {
		f := &out[i]
		if err := compileAll(i, pattern{"repositoryMatch", s.RepositoryMatch, &f.repository},
			pattern{"labelMatch", s.LabelMatch, &f.label}, pattern{"branchMatch", s.BranchMatch, &f.branch}); err != nil {
			return nil, err
		}
		f.pathsExist, f.pathsDoNotExist = cleanPaths(s.PathsExist), cleanPaths(s.PathsDoNotExist)
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// cleanPaths drops the leading and trailing "/" of paths (Argo CD's
// paths are relative to the repository's root).
func cleanPaths(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if p = strings.Trim(p, "/"); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// matchesRepo reports whether f's repository conditions hold for r: its
// name, and one of its labels.
func (f repoFilter) matchesRepo(r repo) bool {
	return matches(f.repository, r.name) && (f.label == nil || slices.ContainsFunc(r.labels, f.label.MatchString))
}

// anyRepo reports whether some filter may pass r, before its branches
// are read.
func (fs repoFilters) anyRepo(r repo) bool {
	return len(fs) == 0 || slices.ContainsFunc(fs, func(f repoFilter) bool { return f.matchesRepo(r) })
}

// pathChecker tells whether a path exists in the branch being filtered.
type pathChecker func(ctx context.Context, path string) (bool, error)

// match reports whether one filter passes r at branch b; has answers
// the path conditions, asked once per path.
func (fs repoFilters) match(ctx context.Context, r repo, b branch, has pathChecker) (bool, error) {
	if len(fs) == 0 {
		return true, nil
	}
	known := map[string]bool{}
	exists := func(p string) (bool, error) {
		if v, ok := known[p]; ok {
			return v, nil
		}
		v, err := has(ctx, p)
		if err != nil {
			return false, fmt.Errorf("%s: %w", p, err)
		}
		known[p] = v
		return v, nil
	}
	for _, f := range fs {
		if !f.matchesRepo(r) || !matches(f.branch, b.name) {
			continue
		}
		ok, err := f.pathsHold(exists)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// pathsHold reports whether f's paths exist and its others do not.
func (f repoFilter) pathsHold(exists func(string) (bool, error)) (bool, error) {
	for _, want := range []struct {
		paths []string
		exist bool
	}{{f.pathsExist, true}, {f.pathsDoNotExist, false}} {
		for _, p := range want.paths {
			ok, err := exists(p)
			if err != nil {
				return false, err
			}
			if ok != want.exist {
				return false, nil
			}
		}
	}
	return true, nil
}

// pullFilterSpec is a pullRequest filter as the spec writes it.
type pullFilterSpec struct {
	BranchMatch       *string `json:"branchMatch"`
	TargetBranchMatch *string `json:"targetBranchMatch"`
	TitleMatch        *string `json:"titleMatch"`
}

// pullFilter is a compiled pullRequest filter: all its conditions must
// hold.
type pullFilter struct{ branch, target, title *regexp.Regexp }

// pullFilters are a pullRequest's filters: a pull request passes when
// one of them matches (or there are none).
type pullFilters []pullFilter

func compilePullFilters(specs []pullFilterSpec) (pullFilters, error) {
	out := make(pullFilters, len(specs))
	for i, s := range specs {
		f := &out[i]
		if err := compileAll(i, pattern{"branchMatch", s.BranchMatch, &f.branch},
			pattern{"targetBranchMatch", s.TargetBranchMatch, &f.target}, pattern{"titleMatch", s.TitleMatch, &f.title}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (fs pullFilters) match(p pull) bool {
	return len(fs) == 0 || slices.ContainsFunc(fs, func(f pullFilter) bool {
		return matches(f.branch, p.branch) && matches(f.target, p.targetBranch) && matches(f.title, p.title)
	})
}
