package scm

import (
	"cmp"
	"context"
	"errors"
	"net/url"
	"strings"
)

// githubAPI is github.com's API; GitHub Enterprise serves it under
// /api/v3 of its own host.
const githubAPI = "https://api.github.com"

// githubSCM is scmProvider.github.
type githubSCM struct {
	Organization  string     `json:"organization"`
	API           string     `json:"api"`
	TokenRef      *secretRef `json:"tokenRef"`
	AllBranches   bool       `json:"allBranches"`
	AppSecretName string     `json:"appSecretName"`
}

// githubPulls is pullRequest.github.
type githubPulls struct {
	Owner         string     `json:"owner"`
	Repo          string     `json:"repo"`
	API           string     `json:"api"`
	TokenRef      *secretRef `json:"tokenRef"`
	AppSecretName string     `json:"appSecretName"`
	Labels        []string   `json:"labels"`
}

// errGitHubApp is returned for a spec that authenticates as a GitHub App.
var errGitHubApp = errors.New("appSecretName: GitHub App authentication is not supported yet; use tokenRef")

// github reads GitHub's REST API.
type github struct{ hub }

// hub reads the repositories of an API shaped as GitHub's, which
// Gitea's follows: /repos/{owner}/{repo}/branches and /contents/{path},
// repositories, branches and pull requests of the same JSON.
type hub struct {
	c     *client
	owner string
	// page is the first page's query.
	page func() url.Values
	next nextFunc
}

// newGitHub returns a reader of owner's repositories at api.
func newGitHub(ctx context.Context, api, owner, appSecret string, ref *secretRef, secrets Secrets, opts Options) (hub, error) {
	if appSecret != "" {
		return hub{}, errGitHubApp
	}
	c, err := newClient(githubBase(api), githubAPI, "", false, opts)
	if err != nil {
		return hub{}, err
	}
	c.header.Set("Accept", "application/vnd.github+json")
	c.header.Set("X-GitHub-Api-Version", "2022-11-28")
	return hub{c: c, owner: owner, page: githubPage, next: linkNext}, c.token(ctx, secrets, ref, "Bearer")
}

// githubBase is a GitHub Enterprise server's API: its URL with /api/v3,
// as Argo CD takes "https://git.example.com/" to mean; github.com's and
// hosts named api.* as they are.
func githubBase(api string) string {
	u, err := url.Parse(api)
	if api == "" || err != nil || strings.HasPrefix(u.Hostname(), "api.") {
		return api
	}
	if p := strings.TrimSuffix(u.Path, "/"); !strings.HasSuffix(p, "/api/v3") {
		u.Path = p + "/api/v3"
	}
	return u.String()
}

func (s *githubSCM) forge(ctx context.Context, secrets Secrets, opts Options) (forge, bool, error) {
	if s.Organization == "" {
		return nil, false, errors.New("organization is required")
	}
	h, err := newGitHub(ctx, s.API, s.Organization, s.AppSecretName, s.TokenRef, secrets, opts)
	if err != nil {
		return nil, false, err
	}
	return &github{h}, s.AllBranches, nil
}

func githubPage() url.Values { return url.Values{"per_page": {"100"}} }

type githubRepo struct {
	ID            int64                  `json:"id"`
	Name          string                 `json:"name"`
	Owner         struct{ Login string } `json:"owner"`
	CloneURL      string                 `json:"clone_url"`
	SSHURL        string                 `json:"ssh_url"`
	DefaultBranch string                 `json:"default_branch"`
	// Topics are listed by GitHub and by newer Gitea versions.
	Topics []string `json:"topics"`
}

// hubBranch is a branch of GitHub (its head commit's sha) or Gitea or
// GitLab (its id).
type hubBranch struct {
	Name   string `json:"name"`
	Commit struct {
		SHA string `json:"sha"`
		ID  string `json:"id"`
	} `json:"commit"`
}

func (b hubBranch) branch() branch {
	return branch{name: b.Name, sha: cmp.Or(b.Commit.SHA, b.Commit.ID)}
}

func (g *github) repos(ctx context.Context) ([]repo, error) {
	list, err := g.list(ctx, "/orgs/"+esc(g.owner)+"/repos")
	if err != nil {
		return nil, err
	}
	out := make([]repo, len(list))
	for i, r := range list {
		out[i] = r.repo(r.Topics)
	}
	return out, nil
}

// list lists the repositories at path.
func (h *hub) list(ctx context.Context, path string) ([]githubRepo, error) {
	return listAll(ctx, h.c, h.c.url(path, h.page()), h.next, decodeList[githubRepo])
}

func (r githubRepo) repo(labels []string) repo {
	return repo{org: r.Owner.Login, name: r.Name, id: r.ID, sshURL: r.SSHURL, httpsURL: r.CloneURL,
		defaultBranch: r.DefaultBranch, labels: labels}
}

func (h *hub) repoPath(r repo) string { return "/repos/" + esc(r.org) + "/" + esc(r.name) }

func (h *hub) branches(ctx context.Context, r repo, all bool) ([]branch, error) {
	if !all {
		return defaultBranch(ctx, r, func(ctx context.Context, name string) (branch, error) {
			var b hubBranch
			err := h.c.getJSON(ctx, h.c.url(h.repoPath(r)+"/branches/"+escRef(name), nil), &b)
			return b.branch(), err
		})
	}
	list, err := listAll(ctx, h.c, h.c.url(h.repoPath(r)+"/branches", h.page()), h.next, decodeList[hubBranch])
	return mapBranches(list, hubBranch.branch), err
}

func (h *hub) hasPath(ctx context.Context, r repo, b branch, path string) (bool, error) {
	return h.c.exists(ctx, h.c.url(h.repoPath(r)+"/contents/"+escRef(path), url.Values{"ref": {b.name}}))
}

type githubPull struct {
	Number int64  `json:"number"`
	Title  string `json:"title"`
	Head   struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
	} `json:"base"`
	User   struct{ Login string }  `json:"user"`
	Labels []struct{ Name string } `json:"labels"`
}

func (s *githubPulls) pulls(ctx context.Context, secrets Secrets, opts Options) ([]pull, error) {
	if s.Owner == "" || s.Repo == "" {
		return nil, errors.New("owner and repo are required")
	}
	h, err := newGitHub(ctx, s.API, s.Owner, s.AppSecretName, s.TokenRef, secrets, opts)
	if err != nil {
		return nil, err
	}
	return h.pulls(ctx, s.Repo, s.Labels)
}

// pulls lists the open pull requests of the owner's repository that
// carry every label of labels.
func (h *hub) pulls(ctx context.Context, repo string, labels []string) ([]pull, error) {
	q := h.page()
	q.Set("state", "open")
	list, err := listAll(ctx, h.c, h.c.url("/repos/"+esc(h.owner)+"/"+esc(repo)+"/pulls", q), h.next, decodeList[githubPull])
	if err != nil {
		return nil, err
	}
	return withLabels(mapPulls(list), labels), nil
}

// mapPulls converts GitHub's (and Gitea's) pull requests.
func mapPulls(list []githubPull) []pull {
	out := make([]pull, len(list))
	for i, p := range list {
		labels := make([]string, len(p.Labels))
		for j, l := range p.Labels {
			labels[j] = l.Name
		}
		out[i] = pull{number: p.Number, title: p.Title, branch: p.Head.Ref, targetBranch: p.Base.Ref,
			headSHA: p.Head.SHA, author: p.User.Login, labels: labels}
	}
	return out
}
