package scm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/graphcd/graphcd/controller/appset/names"
)

// scmProviderSpec is the scmProvider generator.
type scmProviderSpec struct {
	common
	CloneProtocol   string              `json:"cloneProtocol"`
	Filters         []repoFilterSpec    `json:"filters"`
	Gitea           *giteaSCM           `json:"gitea"`
	Github          *githubSCM          `json:"github"`
	Gitlab          *gitlabSCM          `json:"gitlab"`
	BitbucketServer *bitbucketServerSCM `json:"bitbucketServer"`
	Bitbucket       *bitbucketCloudSCM  `json:"bitbucket"`
}

// repo is a repository as the forges list it.
type repo struct {
	// org is the organization, group, project or workspace.
	org, name string
	// id is the forge's identifier (a number, or Bitbucket's UUID).
	id               any
	sshURL, httpsURL string
	defaultBranch    string
	labels           []string
}

// branch is a branch and its head commit.
type branch struct{ name, sha string }

// forge lists the repositories of one scmProvider.
type forge interface {
	// repos lists the repositories the spec names.
	repos(ctx context.Context) ([]repo, error)
	// branches lists r's branches: all, or its default one (none for an
	// empty repository).
	branches(ctx context.Context, r repo, all bool) ([]branch, error)
	// hasPath tells whether path exists in r at b.
	hasPath(ctx context.Context, r repo, b branch, path string) (bool, error)
}

// SCMProvider runs the scmProvider generator raw (its JSON): it lists
// the repositories of the one forge it names, their default branches or
// all of them, keeps those a filter passes and returns one parameter set
// each, named as Argo CD names them. goTemplate changes nothing: Argo CD
// gives both template kinds the same parameters (labels comma-joined);
// it is taken so that both generators are called alike.
func SCMProvider(ctx context.Context, raw []byte, goTemplate bool, secrets Secrets, opts Options) (*Result, error) {
	var spec scmProviderSpec
	if err := decode("scmProvider", raw, &spec); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	name, err := spec.provider("scmProvider", spec.Gitea != nil, spec.Github != nil, spec.Gitlab != nil, spec.BitbucketServer != nil, spec.Bitbucket != nil)
	if err != nil {
		return nil, err
	}
	params, err := spec.generate(ctx, name, secrets, opts)
	if err != nil {
		return nil, fmt.Errorf("scmProvider.%s: %w", name, err)
	}
	return spec.result(params), nil
}

func (spec *scmProviderSpec) generate(ctx context.Context, name string, secrets Secrets, opts Options) ([]map[string]any, error) {
	filters, err := compileRepoFilters(spec.Filters)
	if err != nil {
		return nil, err
	}
	ssh, err := sshProtocol(spec.CloneProtocol)
	if err != nil {
		return nil, err
	}
	var f forge
	var all bool
	switch name {
	case "gitea":
		f, all, err = spec.Gitea.forge(ctx, secrets, opts)
	case "github":
		f, all, err = spec.Github.forge(ctx, secrets, opts)
	case "gitlab":
		f, all, err = spec.Gitlab.forge(ctx, secrets, opts)
	case "bitbucketServer":
		f, all, err = spec.BitbucketServer.forge(ctx, secrets, opts)
	case "bitbucket":
		f, all, err = spec.Bitbucket.forge(ctx, secrets, opts)
	}
	if err != nil {
		return nil, err
	}
	return listRepos(ctx, f, all, filters, ssh, opts.MaxResults)
}

// sshProtocol tells whether clone URLs are ssh (the default, as in Argo
// CD) or https ones.
func sshProtocol(p string) (bool, error) {
	switch strings.ToLower(p) {
	case "", "ssh":
		return true, nil
	case "https":
		return false, nil
	}
	return false, fmt.Errorf("cloneProtocol %q: want ssh or https", p)
}

// listRepos returns the parameters of each repository and branch of f a
// filter passes, at most maxResults.
func listRepos(ctx context.Context, f forge, all bool, filters repoFilters, ssh bool, maxResults int) ([]map[string]any, error) {
	repos, err := f.repos(ctx)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, r := range repos {
		if !filters.anyRepo(r) {
			continue
		}
		branches, err := f.branches(ctx, r, all)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", r.org, r.name, err)
		}
		for _, b := range branches {
			ok, err := filters.match(ctx, r, b, func(ctx context.Context, p string) (bool, error) { return f.hasPath(ctx, r, b, p) })
			if err != nil {
				return nil, fmt.Errorf("%s/%s@%s: %w", r.org, r.name, b.name, err)
			}
			if !ok {
				continue
			}
			if len(out) == maxResults {
				return nil, fmt.Errorf("more than %d repositories and branches", maxResults)
			}
			out = append(out, repoParams(r, b, ssh))
		}
	}
	return out, nil
}

// repoParams are the parameters of r at b, as Argo CD names them. labels
// is a comma-joined string under both template kinds, as in Argo CD.
func repoParams(r repo, b branch, ssh bool) map[string]any {
	url := r.httpsURL
	if ssh {
		url = r.sshURL
	}
	return map[string]any{
		"organization":     r.org,
		"repository":       r.name,
		"repository_id":    r.id,
		"url":              url,
		"branch":           b.name,
		"branchNormalized": names.Normalize(b.name),
		"sha":              b.sha,
		"short_sha":        prefix(b.sha, 8),
		"short_sha_7":      prefix(b.sha, 7),
		"labels":           strings.Join(r.labels, ","),
	}
}

// prefix is s's first n bytes, or s when shorter.
func prefix(s string, n int) string { return s[:min(len(s), n)] }

// defaultBranch is r's default branch as one branch whose head get
// reads; none when the repository is empty (no default branch, or its
// branch not found).
func defaultBranch(ctx context.Context, r repo, get func(context.Context, string) (branch, error)) ([]branch, error) {
	if r.defaultBranch == "" {
		return nil, nil
	}
	b, err := get(ctx, r.defaultBranch)
	if errors.Is(err, errNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return []branch{b}, nil
}

// mapBranches converts a forge's branches.
func mapBranches[T any](list []T, conv func(T) branch) []branch {
	out := make([]branch, len(list))
	for i, b := range list {
		out[i] = conv(b)
	}
	return out
}
