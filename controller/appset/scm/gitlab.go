package scm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// gitlabSCM is scmProvider.gitlab.
type gitlabSCM struct {
	Group                 string     `json:"group"`
	IncludeSubgroups      bool       `json:"includeSubgroups"`
	IncludeSharedProjects *bool      `json:"includeSharedProjects"`
	Topic                 string     `json:"topic"`
	API                   string     `json:"api"`
	TokenRef              *secretRef `json:"tokenRef"`
	AllBranches           bool       `json:"allBranches"`
	Insecure              bool       `json:"insecure"`
}

// gitlabPulls is pullRequest.gitlab.
type gitlabPulls struct {
	Project          string     `json:"project"`
	API              string     `json:"api"`
	TokenRef         *secretRef `json:"tokenRef"`
	Labels           []string   `json:"labels"`
	PullRequestState string     `json:"pullRequestState"`
	Insecure         bool       `json:"insecure"`
}

// gitlab reads GitLab's REST API, /api/v4.
type gitlab struct {
	c    *client
	spec *gitlabSCM
}

// newGitLab returns a client of GitLab's API. The token goes in the
// Authorization header (GitLab takes access tokens as bearer tokens),
// which redirects to other hosts drop; PRIVATE-TOKEN would follow them.
func newGitLab(ctx context.Context, api string, ref *secretRef, insecure bool, secrets Secrets, opts Options) (*client, error) {
	c, err := newClient(api, "https://gitlab.com", "/api/v4", insecure, opts)
	if err != nil {
		return nil, err
	}
	return c, c.token(ctx, secrets, ref, "Bearer")
}

func (s *gitlabSCM) forge(ctx context.Context, secrets Secrets, opts Options) (forge, bool, error) {
	if s.Group == "" {
		return nil, false, errors.New("group is required")
	}
	c, err := newGitLab(ctx, s.API, s.TokenRef, s.Insecure, secrets, opts)
	if err != nil {
		return nil, false, err
	}
	return &gitlab{c: c, spec: s}, s.AllBranches, nil
}

func gitlabPage() url.Values { return url.Values{"per_page": {"100"}} }

// gitlabNext follows X-Next-Page, or the Link header when GitLab leaves
// it out (past 10,000 items).
func gitlabNext(u *url.URL, h http.Header, body []byte) (string, error) {
	if p := h.Get("X-Next-Page"); p != "" {
		if _, err := strconv.Atoi(p); err != nil {
			return "", errors.New("X-Next-Page is not a number")
		}
		return withQuery(u, "page", p), nil
	}
	return linkNext(u, h, body)
}

type gitlabProject struct {
	ID        int64  `json:"id"`
	Path      string `json:"path"`
	Namespace struct {
		FullPath string `json:"full_path"`
	} `json:"namespace"`
	SSHURL        string   `json:"ssh_url_to_repo"`
	HTTPURL       string   `json:"http_url_to_repo"`
	DefaultBranch string   `json:"default_branch"`
	Topics        []string `json:"topics"`
	TagList       []string `json:"tag_list"` // topics before GitLab 14.5
}

// repos lists the group's projects: with its subgroups' when asked, and
// the projects shared with it unless includeSharedProjects is false (as
// in Argo CD).
func (g *gitlab) repos(ctx context.Context) ([]repo, error) {
	q := gitlabPage()
	q.Set("include_subgroups", strconv.FormatBool(g.spec.IncludeSubgroups))
	q.Set("with_shared", strconv.FormatBool(g.spec.IncludeSharedProjects == nil || *g.spec.IncludeSharedProjects))
	if g.spec.Topic != "" {
		q.Set("topic", g.spec.Topic)
	}
	list, err := listAll(ctx, g.c, g.c.url("/groups/"+esc(g.spec.Group)+"/projects", q), gitlabNext, decodeList[gitlabProject])
	if err != nil {
		return nil, err
	}
	out := make([]repo, len(list))
	for i, p := range list {
		labels := p.Topics
		if labels == nil {
			labels = p.TagList
		}
		out[i] = repo{org: p.Namespace.FullPath, name: p.Path, id: p.ID, sshURL: p.SSHURL, httpsURL: p.HTTPURL,
			defaultBranch: p.DefaultBranch, labels: labels}
	}
	return out, nil
}

func (g *gitlab) projectPath(r repo) string {
	return "/projects/" + fmt.Sprint(r.id)
}

func (g *gitlab) branches(ctx context.Context, r repo, all bool) ([]branch, error) {
	if !all {
		return defaultBranch(ctx, r, func(ctx context.Context, name string) (branch, error) {
			var b hubBranch
			err := g.c.getJSON(ctx, g.c.url(g.projectPath(r)+"/repository/branches/"+esc(name), nil), &b)
			return b.branch(), err
		})
	}
	list, err := listAll(ctx, g.c, g.c.url(g.projectPath(r)+"/repository/branches", gitlabPage()), gitlabNext, decodeList[hubBranch])
	return mapBranches(list, hubBranch.branch), err
}

// hasPath looks path up as a file, then as a directory (a tree with
// entries).
func (g *gitlab) hasPath(ctx context.Context, r repo, b branch, path string) (bool, error) {
	file, err := g.c.exists(ctx, g.c.url(g.projectPath(r)+"/repository/files/"+esc(path), url.Values{"ref": {b.name}}))
	if err != nil || file {
		return file, err
	}
	var entries []struct{}
	err = g.c.getJSON(ctx, g.c.url(g.projectPath(r)+"/repository/tree", url.Values{"path": {path}, "ref": {b.name}, "per_page": {"1"}}), &entries)
	if errors.Is(err, errNotFound) {
		return false, nil
	}
	return len(entries) > 0, err
}

type gitlabMergeRequest struct {
	IID          int64  `json:"iid"`
	Title        string `json:"title"`
	SourceBranch string `json:"source_branch"`
	TargetBranch string `json:"target_branch"`
	SHA          string `json:"sha"`
	Author       struct {
		Username string `json:"username"`
	} `json:"author"`
	Labels []string `json:"labels"`
}

// pulls lists the project's merge requests of pullRequestState (every
// state when unset, as in Argo CD) carrying all labels.
func (s *gitlabPulls) pulls(ctx context.Context, secrets Secrets, opts Options) ([]pull, error) {
	if s.Project == "" {
		return nil, errors.New("project is required")
	}
	c, err := newGitLab(ctx, s.API, s.TokenRef, s.Insecure, secrets, opts)
	if err != nil {
		return nil, err
	}
	q := gitlabPage()
	if s.PullRequestState != "" {
		q.Set("state", s.PullRequestState)
	}
	if len(s.Labels) > 0 {
		q.Set("labels", strings.Join(s.Labels, ","))
	}
	list, err := listAll(ctx, c, c.url("/projects/"+esc(s.Project)+"/merge_requests", q), gitlabNext, decodeList[gitlabMergeRequest])
	if err != nil {
		return nil, err
	}
	out := make([]pull, len(list))
	for i, m := range list {
		out[i] = pull{number: m.IID, title: m.Title, branch: m.SourceBranch, targetBranch: m.TargetBranch,
			headSHA: m.SHA, author: m.Author.Username, labels: m.Labels}
	}
	return out, nil
}
