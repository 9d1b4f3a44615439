package scm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
)

// bitbucketAPI is Bitbucket Cloud's API.
const bitbucketAPI = "https://api.bitbucket.org/2.0"

// bitbucketCloudSCM is scmProvider.bitbucket (Bitbucket Cloud).
type bitbucketCloudSCM struct {
	Owner          string     `json:"owner"`
	User           string     `json:"user"`
	AppPasswordRef *secretRef `json:"appPasswordRef"`
	AllBranches    bool       `json:"allBranches"`
}

// bitbucketCloudPulls is pullRequest.bitbucket (Bitbucket Cloud).
type bitbucketCloudPulls struct {
	Owner       string       `json:"owner"`
	Repo        string       `json:"repo"`
	API         string       `json:"api"`
	BasicAuth   *basicAuth   `json:"basicAuth"`
	BearerToken *bearerToken `json:"bearerToken"`
}

// bitbucketCloud reads Bitbucket Cloud's API.
type bitbucketCloud struct {
	c     *client
	owner string
}

func bitbucketPage() url.Values { return url.Values{"pagelen": {"100"}} }

// bitbucketNext follows a page's next link.
func bitbucketNext(_ *url.URL, _ http.Header, body []byte) (string, error) {
	var page struct {
		Next string `json:"next"`
	}
	return page.Next, json.Unmarshal(body, &page)
}

func (s *bitbucketCloudSCM) forge(ctx context.Context, secrets Secrets, opts Options) (forge, bool, error) {
	if s.Owner == "" {
		return nil, false, errors.New("owner is required")
	}
	c, err := newClient(bitbucketAPI, "", "", false, opts)
	if err != nil {
		return nil, false, err
	}
	password, err := s.AppPasswordRef.read(ctx, secrets, "appPasswordRef")
	if err != nil {
		return nil, false, err
	}
	c.basic(s.User, password)
	return &bitbucketCloud{c: c, owner: s.Owner}, s.AllBranches, nil
}

type bitbucketCloudRepo struct {
	UUID       string `json:"uuid"`
	Slug       string `json:"slug"`
	Mainbranch struct {
		Name string `json:"name"`
	} `json:"mainbranch"`
	Links bitbucketLinks `json:"links"`
}

type bitbucketCloudBranch struct {
	Name   string `json:"name"`
	Target struct {
		Hash string `json:"hash"`
	} `json:"target"`
}

func (b bitbucketCloudBranch) branch() branch { return branch{name: b.Name, sha: b.Target.Hash} }

func (b *bitbucketCloud) repos(ctx context.Context) ([]repo, error) {
	list, err := listAll(ctx, b.c, b.c.url("/repositories/"+esc(b.owner), bitbucketPage()), bitbucketNext, decodeValues[bitbucketCloudRepo])
	if err != nil {
		return nil, err
	}
	out := make([]repo, len(list))
	for i, r := range list {
		out[i] = repo{org: b.owner, name: r.Slug, id: r.UUID, sshURL: r.Links.clone("ssh"), httpsURL: r.Links.clone("https"),
			defaultBranch: r.Mainbranch.Name}
	}
	return out, nil
}

func (b *bitbucketCloud) repoPath(r repo) string {
	return "/repositories/" + esc(r.org) + "/" + esc(r.name)
}

func (b *bitbucketCloud) branches(ctx context.Context, r repo, all bool) ([]branch, error) {
	if !all {
		return defaultBranch(ctx, r, func(ctx context.Context, name string) (branch, error) {
			var br bitbucketCloudBranch
			err := b.c.getJSON(ctx, b.c.url(b.repoPath(r)+"/refs/branches/"+escRef(name), nil), &br)
			return br.branch(), err
		})
	}
	list, err := listAll(ctx, b.c, b.c.url(b.repoPath(r)+"/refs/branches", bitbucketPage()), bitbucketNext, decodeValues[bitbucketCloudBranch])
	return mapBranches(list, bitbucketCloudBranch.branch), err
}

func (b *bitbucketCloud) hasPath(ctx context.Context, r repo, br branch, path string) (bool, error) {
	return b.c.exists(ctx, b.c.url(b.repoPath(r)+"/src/"+esc(br.sha)+"/"+escRef(path), url.Values{"format": {"meta"}}))
}

type bitbucketCloudPull struct {
	ID     int64  `json:"id"`
	Title  string `json:"title"`
	Source struct {
		Branch struct {
			Name string `json:"name"`
		} `json:"branch"`
		Commit struct {
			Hash string `json:"hash"`
		} `json:"commit"`
	} `json:"source"`
	Destination struct {
		Branch struct {
			Name string `json:"name"`
		} `json:"branch"`
	} `json:"destination"`
	Author struct {
		Nickname string `json:"nickname"`
	} `json:"author"`
}

// pulls lists the repository's open pull requests. Bitbucket Cloud
// gives their head commits abbreviated (12 characters).
func (s *bitbucketCloudPulls) pulls(ctx context.Context, secrets Secrets, opts Options) ([]pull, error) {
	if s.Owner == "" || s.Repo == "" {
		return nil, errors.New("owner and repo are required")
	}
	c, err := newClient(s.API, bitbucketAPI, "", false, opts)
	if err != nil {
		return nil, err
	}
	if err := authorizeBitbucket(ctx, c, s.BasicAuth, s.BearerToken, secrets); err != nil {
		return nil, err
	}
	q := url.Values{"pagelen": {"50"}, "state": {"OPEN"}} // 50: the most pull requests a page holds
	list, err := listAll(ctx, c, c.url("/repositories/"+esc(s.Owner)+"/"+esc(s.Repo)+"/pullrequests", q), bitbucketNext, decodeValues[bitbucketCloudPull])
	if err != nil {
		return nil, err
	}
	out := make([]pull, len(list))
	for i, p := range list {
		out[i] = pull{number: p.ID, title: p.Title, branch: p.Source.Branch.Name, targetBranch: p.Destination.Branch.Name,
			headSHA: p.Source.Commit.Hash, author: p.Author.Nickname}
	}
	return out, nil
}
