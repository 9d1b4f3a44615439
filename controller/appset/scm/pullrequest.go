package scm

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/graphcd/graphcd/controller/appset/names"
)

// pullRequestSpec is the pullRequest generator.
type pullRequestSpec struct {
	common
	Filters         []pullFilterSpec      `json:"filters"`
	Gitea           *giteaPulls           `json:"gitea"`
	Github          *githubPulls          `json:"github"`
	Gitlab          *gitlabPulls          `json:"gitlab"`
	BitbucketServer *bitbucketServerPulls `json:"bitbucketServer"`
	Bitbucket       *bitbucketCloudPulls  `json:"bitbucket"`
}

// pull is a pull (merge) request as the forges list it.
type pull struct {
	number                      int64
	title, branch, targetBranch string
	headSHA, author             string
	labels                      []string
}

// PullRequests runs the pullRequest generator raw (its JSON): it lists
// the open pull requests of the one repository it names, keeps those a
// filter passes and returns one parameter set each, named as Argo CD
// names them.
func PullRequests(ctx context.Context, raw []byte, goTemplate bool, secrets Secrets, opts Options) (*Result, error) {
	var spec pullRequestSpec
	if err := decode("pullRequest", raw, &spec); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	name, err := spec.provider("pullRequest", spec.Gitea != nil, spec.Github != nil, spec.Gitlab != nil, spec.BitbucketServer != nil, spec.Bitbucket != nil)
	if err != nil {
		return nil, err
	}
	params, err := spec.generate(ctx, name, goTemplate, secrets, opts)
	if err != nil {
		return nil, fmt.Errorf("pullRequest.%s: %w", name, err)
	}
	return spec.result(params), nil
}

func (spec *pullRequestSpec) generate(ctx context.Context, name string, goTemplate bool, secrets Secrets, opts Options) ([]map[string]any, error) {
	filters, err := compilePullFilters(spec.Filters)
	if err != nil {
		return nil, err
	}
	var pulls []pull
	switch name {
	case "gitea":
		pulls, err = spec.Gitea.pulls(ctx, secrets, opts)
	case "github":
		pulls, err = spec.Github.pulls(ctx, secrets, opts)
	case "gitlab":
		pulls, err = spec.Gitlab.pulls(ctx, secrets, opts)
	case "bitbucketServer":
		pulls, err = spec.BitbucketServer.pulls(ctx, secrets, opts)
	case "bitbucket":
		pulls, err = spec.Bitbucket.pulls(ctx, secrets, opts)
	}
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, p := range pulls {
		if filters.match(p) {
			out = append(out, pullParams(p, goTemplate))
		}
	}
	return out, nil
}

// pullParams are the parameters of p, as Argo CD names them; labels
// only under goTemplate, as in Argo CD.
func pullParams(p pull, goTemplate bool) map[string]any {
	params := map[string]any{
		"number":             strconv.FormatInt(p.number, 10),
		"title":              p.title,
		"branch":             p.branch,
		"branch_slug":        names.Slug(p.branch, names.SlugLength, true),
		"target_branch":      p.targetBranch,
		"target_branch_slug": names.Slug(p.targetBranch, names.SlugLength, true),
		"head_sha":           p.headSHA,
		"head_short_sha":     prefix(p.headSHA, 8),
		"head_short_sha_7":   prefix(p.headSHA, 7),
		"author":             p.author,
	}
	if goTemplate {
		labels := make([]any, len(p.labels))
		for i, l := range p.labels {
			labels[i] = l
		}
		params["labels"] = labels
	}
	return params
}

// withLabels keeps the pull requests that carry every label of want.
func withLabels(pulls []pull, want []string) []pull {
	if len(want) == 0 {
		return pulls
	}
	return slices.DeleteFunc(pulls, func(p pull) bool {
		return slices.ContainsFunc(want, func(l string) bool { return !slices.Contains(p.labels, l) })
	})
}
