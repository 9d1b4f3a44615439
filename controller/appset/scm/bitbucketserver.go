package scm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// bitbucketServerSCM is scmProvider.bitbucketServer.
type bitbucketServerSCM struct {
	Project     string       `json:"project"`
	API         string       `json:"api"`
	BasicAuth   *basicAuth   `json:"basicAuth"`
	BearerToken *bearerToken `json:"bearerToken"`
	AllBranches bool         `json:"allBranches"`
	Insecure    bool         `json:"insecure"`
}

// bitbucketServerPulls is pullRequest.bitbucketServer.
type bitbucketServerPulls struct {
	Project     string       `json:"project"`
	Repo        string       `json:"repo"`
	API         string       `json:"api"`
	BasicAuth   *basicAuth   `json:"basicAuth"`
	BearerToken *bearerToken `json:"bearerToken"`
	Insecure    bool         `json:"insecure"`
}

// bitbucketServer reads Bitbucket Server's (Data Center's) REST API,
// /rest/api/1.0 of the server's URL.
type bitbucketServer struct {
	c       *client
	project string
}

func newBitbucketServer(ctx context.Context, api string, basic *basicAuth, bearer *bearerToken, insecure bool, secrets Secrets, opts Options) (*client, error) {
	if api == "" {
		return nil, errors.New("api is required")
	}
	c, err := newClient(api, "", "/rest/api/1.0", insecure, opts)
	if err != nil {
		return nil, err
	}
	return c, authorizeBitbucket(ctx, c, basic, bearer, secrets)
}

// authorizeBitbucket authorizes c with a bearer token or a user name and
// password (none: anonymous).
func authorizeBitbucket(ctx context.Context, c *client, basic *basicAuth, bearer *bearerToken, secrets Secrets) error {
	switch {
	case basic != nil && bearer != nil:
		return errors.New("set one of basicAuth and bearerToken")
	case bearer != nil:
		if err := c.token(ctx, secrets, bearer.TokenRef, "Bearer"); err != nil {
			return fmt.Errorf("bearerToken.%w", err)
		}
		return nil
	case basic != nil:
		password, err := basic.PasswordRef.read(ctx, secrets, "basicAuth.passwordRef")
		c.basic(basic.Username, password)
		return err
	}
	return nil
}

func bitbucketServerPage() url.Values { return url.Values{"limit": {"100"}} }

// bitbucketServerNext follows a page's nextPageStart until isLastPage.
func bitbucketServerNext(u *url.URL, _ http.Header, body []byte) (string, error) {
	var page struct {
		IsLastPage    bool `json:"isLastPage"`
		NextPageStart *int `json:"nextPageStart"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return "", err
	}
	if page.IsLastPage || page.NextPageStart == nil {
		return "", nil
	}
	return withQuery(u, "start", strconv.Itoa(*page.NextPageStart)), nil
}

func (s *bitbucketServerSCM) forge(ctx context.Context, secrets Secrets, opts Options) (forge, bool, error) {
	if s.Project == "" {
		return nil, false, errors.New("project is required")
	}
	c, err := newBitbucketServer(ctx, s.API, s.BasicAuth, s.BearerToken, s.Insecure, secrets, opts)
	if err != nil {
		return nil, false, err
	}
	return &bitbucketServer{c: c, project: s.Project}, s.AllBranches, nil
}

// bitbucketLinks are a repository's clone links, by protocol name.
type bitbucketLinks struct {
	Clone []struct {
		Href string `json:"href"`
		Name string `json:"name"`
	} `json:"clone"`
}

// clone is the link of protocol name, "" without one.
func (l bitbucketLinks) clone(name string) string {
	for _, c := range l.Clone {
		if c.Name == name {
			return c.Href
		}
	}
	return ""
}

type bitbucketServerRepo struct {
	ID      int64  `json:"id"`
	Slug    string `json:"slug"`
	Project struct {
		Key string `json:"key"`
	} `json:"project"`
	Links bitbucketLinks `json:"links"`
}

type bitbucketServerBranch struct {
	DisplayID    string `json:"displayId"`
	LatestCommit string `json:"latestCommit"`
}

func (b bitbucketServerBranch) branch() branch { return branch{name: b.DisplayID, sha: b.LatestCommit} }

// repos lists the project's repositories. Their default branches are
// read with their heads (Bitbucket Server lists none).
func (b *bitbucketServer) repos(ctx context.Context) ([]repo, error) {
	list, err := listAll(ctx, b.c, b.c.url("/projects/"+esc(b.project)+"/repos", bitbucketServerPage()), bitbucketServerNext, decodeValues[bitbucketServerRepo])
	if err != nil {
		return nil, err
	}
	out := make([]repo, len(list))
	for i, r := range list {
		out[i] = repo{org: r.Project.Key, name: r.Slug, id: r.ID, sshURL: r.Links.clone("ssh"), httpsURL: r.Links.clone("http")}
	}
	return out, nil
}

func (b *bitbucketServer) repoPath(r repo) string {
	return "/projects/" + esc(r.org) + "/repos/" + esc(r.name)
}

func (b *bitbucketServer) branches(ctx context.Context, r repo, all bool) ([]branch, error) {
	if !all {
		var d bitbucketServerBranch
		err := b.c.getJSON(ctx, b.c.url(b.repoPath(r)+"/branches/default", nil), &d)
		if errors.Is(err, errNotFound) { // an empty repository
			return nil, nil
		}
		return []branch{d.branch()}, err
	}
	list, err := listAll(ctx, b.c, b.c.url(b.repoPath(r)+"/branches", bitbucketServerPage()), bitbucketServerNext, decodeValues[bitbucketServerBranch])
	return mapBranches(list, bitbucketServerBranch.branch), err
}

func (b *bitbucketServer) hasPath(ctx context.Context, r repo, br branch, path string) (bool, error) {
	return b.c.exists(ctx, b.c.url(b.repoPath(r)+"/browse/"+escRef(path), url.Values{"at": {br.sha}, "limit": {"1"}}))
}

type bitbucketServerPull struct {
	ID      int64                 `json:"id"`
	Title   string                `json:"title"`
	FromRef bitbucketServerBranch `json:"fromRef"`
	ToRef   bitbucketServerBranch `json:"toRef"`
	Author  struct {
		User struct {
			Name string `json:"name"`
		} `json:"user"`
	} `json:"author"`
}

func (s *bitbucketServerPulls) pulls(ctx context.Context, secrets Secrets, opts Options) ([]pull, error) {
	if s.Project == "" || s.Repo == "" {
		return nil, errors.New("project and repo are required")
	}
	c, err := newBitbucketServer(ctx, s.API, s.BasicAuth, s.BearerToken, s.Insecure, secrets, opts)
	if err != nil {
		return nil, err
	}
	q := bitbucketServerPage()
	q.Set("state", "OPEN")
	list, err := listAll(ctx, c, c.url("/projects/"+esc(s.Project)+"/repos/"+esc(s.Repo)+"/pull-requests", q), bitbucketServerNext, decodeValues[bitbucketServerPull])
	if err != nil {
		return nil, err
	}
	out := make([]pull, len(list))
	for i, p := range list {
		out[i] = pull{number: p.ID, title: p.Title, branch: p.FromRef.DisplayID, targetBranch: p.ToRef.DisplayID,
			headSHA: p.FromRef.LatestCommit, author: p.Author.User.Name}
	}
	return out, nil
}
