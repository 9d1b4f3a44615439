package scm

import (
	"context"
	"errors"
	"net/url"
	"strconv"
)

// giteaLimit is the page size asked of Gitea (its default maximum).
const giteaLimit = 50

// giteaSCM is scmProvider.gitea.
type giteaSCM struct {
	Owner       string     `json:"owner"`
	API         string     `json:"api"`
	TokenRef    *secretRef `json:"tokenRef"`
	AllBranches bool       `json:"allBranches"`
	Insecure    bool       `json:"insecure"`
}

// giteaPulls is pullRequest.gitea.
type giteaPulls struct {
	Owner    string     `json:"owner"`
	Repo     string     `json:"repo"`
	API      string     `json:"api"`
	TokenRef *secretRef `json:"tokenRef"`
	Insecure bool       `json:"insecure"`
	Labels   []string   `json:"labels"`
}

// gitea reads Gitea's API, /api/v1, shaped as GitHub's.
type gitea struct{ hub }

// newGitea returns a reader of owner's repositories at api.
func newGitea(ctx context.Context, api, owner string, ref *secretRef, insecure bool, secrets Secrets, opts Options) (hub, error) {
	c, err := newClient(api, "https://gitea.com", "/api/v1", insecure, opts)
	if err != nil {
		return hub{}, err
	}
	c.header.Set("Accept", "application/json")
	return hub{c: c, owner: owner, page: giteaPage, next: totalNext(giteaLimit)}, c.token(ctx, secrets, ref, "token")
}

func (s *giteaSCM) forge(ctx context.Context, secrets Secrets, opts Options) (forge, bool, error) {
	if s.Owner == "" {
		return nil, false, errors.New("owner is required")
	}
	h, err := newGitea(ctx, s.API, s.Owner, s.TokenRef, s.Insecure, secrets, opts)
	if err != nil {
		return nil, false, err
	}
	return &gitea{h}, s.AllBranches, nil
}

func giteaPage() url.Values {
	return url.Values{"limit": {strconv.Itoa(giteaLimit)}, "page": {"1"}}
}

// repos lists the owner's repositories: an organization's, or else a
// user's.
func (g *gitea) repos(ctx context.Context) ([]repo, error) {
	list, err := g.list(ctx, "/orgs/"+esc(g.owner)+"/repos")
	if errors.Is(err, errNotFound) {
		list, err = g.list(ctx, "/users/"+esc(g.owner)+"/repos")
	}
	if err != nil {
		return nil, err
	}
	out := make([]repo, 0, len(list))
	for _, r := range list {
		topics, err := g.topics(ctx, r)
		if err != nil {
			return nil, err
		}
		out = append(out, r.repo(topics))
	}
	return out, nil
}

// topics are a repository's topics, its labels: as listed, or read
// when the listing has none.
func (g *gitea) topics(ctx context.Context, r githubRepo) ([]string, error) {
	if r.Topics != nil {
		return r.Topics, nil
	}
	var v struct {
		Topics []string `json:"topics"`
	}
	err := g.c.getJSON(ctx, g.c.url("/repos/"+esc(r.Owner.Login)+"/"+esc(r.Name)+"/topics", giteaPage()), &v)
	return v.Topics, err
}

func (s *giteaPulls) pulls(ctx context.Context, secrets Secrets, opts Options) ([]pull, error) {
	if s.Owner == "" || s.Repo == "" {
		return nil, errors.New("owner and repo are required")
	}
	h, err := newGitea(ctx, s.API, s.Owner, s.TokenRef, s.Insecure, secrets, opts)
	if err != nil {
		return nil, err
	}
	return h.pulls(ctx, s.Repo, s.Labels)
}
