package notifications

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"github.com/argoproj/notifications-engine/pkg/services"
	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v69/github"
	"sigs.k8s.io/yaml"
)

// Bounds on a pull request comment's sending.
const (
	// githubMaxPulls is how many pull requests of a commit get the
	// comment; githubMaxComments how many comments of each are searched
	// for the tagged one.
	githubMaxPulls    = 20
	githubMaxComments = 100
	// githubMaxComment is GitHub's limit on a comment's body.
	githubMaxComment = 65536
)

// githubSender is the GitHub service: the engine's for commit statuses,
// deployments and check runs, and graphcd's own for pull request comments,
// which the engine's v0.5.0 cannot send (it dereferences options it
// passes as nil). Both act as the same GitHub App installation.
type githubSender struct {
	engine services.NotificationService
	client *github.Client
}

// newGitHubSender reads the service's settings, with the Secret's values
// in place of its $key references.
func newGitHubSender(settings string, secret map[string][]byte) (*githubSender, error) {
	var opts services.GitHubOptions
	if err := yaml.Unmarshal([]byte(settings), &opts); err != nil {
		return nil, fmt.Errorf("github settings: %w", err)
	}
	for _, v := range []*any{&opts.AppID, &opts.InstallationID} {
		if s, ok := (*v).(string); ok {
			*v = fillSecrets(s, secret)
		}
	}
	opts.PrivateKey, opts.EnterpriseBaseURL = fillSecrets(opts.PrivateKey, secret), fillSecrets(opts.EnterpriseBaseURL, secret)
	engine, err := services.NewGitHubService(opts)
	if err != nil {
		return nil, fmt.Errorf("github settings: %w", err)
	}
	appID, err1 := strconv.ParseInt(fmt.Sprint(opts.AppID), 10, 64)
	installation, err2 := strconv.ParseInt(fmt.Sprint(opts.InstallationID), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return nil, errors.New("github settings: appID and installationID must be numbers")
	}
	transport, err := ghinstallation.New(http.DefaultTransport, appID, installation, []byte(opts.PrivateKey))
	if err != nil {
		return nil, errors.New("github settings: privateKey is not an RSA private key in PEM")
	}
	client := github.NewClient(&http.Client{Transport: transport, Timeout: webhookTimeout})
	if opts.EnterpriseBaseURL != "" {
		transport.BaseURL = strings.TrimSuffix(opts.EnterpriseBaseURL, "/")
		if client, err = client.WithEnterpriseURLs(opts.EnterpriseBaseURL, ""); err != nil {
			return nil, fmt.Errorf("github settings: enterpriseBaseURL: %w", err)
		}
	}
	return &githubSender{engine: engine, client: client}, nil
}

// Send sends what the notification's github part asks for.
func (g *githubSender) Send(n services.Notification, dest services.Destination) error {
	if n.GitHub == nil || n.GitHub.PullRequestComment == nil {
		return g.engine.Send(n, dest)
	}
	comment := *n.GitHub.PullRequestComment
	rest := *n.GitHub
	rest.PullRequestComment = nil
	if rest.Status != nil || rest.Deployment != nil || rest.CheckRun != nil {
		n.GitHub = &rest
		if err := g.engine.Send(n, dest); err != nil {
			return err
		}
	}
	// Render left the rendered repository URL and revision in the paths
	// (see renderGitHubPaths).
	return g.comment(context.Background(), rest.RepoURLPath, rest.RevisionPath, comment)
}

// comment puts the comment on every pull request that has the revision:
// a comment of its own, or, with a tag, an edit of the comment that
// carries the tag when there is one.
func (g *githubSender) comment(ctx context.Context, repoURL, revision string, c services.GitHubPullRequestComment) error {
	owner, repo, ok := strings.Cut(fullNameByRepoURL(repoURL), "/")
	if !ok || owner == "" || repo == "" || revision == "" {
		return fmt.Errorf("github: no repository and revision to comment on (repository %q)", repoURL)
	}
	body := truncate(c.Content, githubMaxComment-len("…"))
	pulls, _, err := g.client.PullRequests.ListPullRequestsWithCommit(ctx, owner, repo, revision, &github.ListOptions{PerPage: githubMaxPulls})
	if err != nil {
		return fmt.Errorf("github: list the pull requests of %s: %w", revision, err)
	}
	tag := ""
	if c.CommentTag != "" {
		tag = fmt.Sprintf(commentTagFormat, c.CommentTag)
	}
	for _, pr := range pulls {
		if tag != "" {
			comments, _, err := g.client.Issues.ListComments(ctx, owner, repo, pr.GetNumber(),
				&github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: githubMaxComments}})
			if err != nil {
				return fmt.Errorf("github: list the comments of pull request %d: %w", pr.GetNumber(), err)
			}
			if id := taggedComment(comments, tag); id != 0 {
				if _, _, err := g.client.Issues.EditComment(ctx, owner, repo, id, &github.IssueComment{Body: &body}); err != nil {
					return fmt.Errorf("github: edit comment %d: %w", id, err)
				}
				continue
			}
		}
		if _, _, err := g.client.Issues.CreateComment(ctx, owner, repo, pr.GetNumber(), &github.IssueComment{Body: &body}); err != nil {
			return fmt.Errorf("github: comment on pull request %d: %w", pr.GetNumber(), err)
		}
	}
	return nil
}

// commentTagFormat marks a tagged comment, as Argo CD Notifications
// marks it, so that comments it left are edited too.
const commentTagFormat = "<!-- argocd-notifications %s -->"

func taggedComment(comments []*github.IssueComment, tag string) int64 {
	for _, c := range comments {
		if strings.Contains(c.GetBody(), tag) {
			return c.GetID()
		}
	}
	return 0
}

// renderGitHubPaths renders the github part's repository URL and
// revision templates into the paths themselves when it comments on pull
// requests: the engine keeps the rendered values where only its own
// sender reads them.
func renderGitHubPaths(n *services.Notification, vars map[string]any) error {
	if n.GitHub == nil || n.GitHub.PullRequestComment == nil {
		return nil
	}
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	for _, p := range []*string{&n.GitHub.RepoURLPath, &n.GitHub.RevisionPath} {
		t, err := template.New("github").Funcs(funcs).Parse(*p)
		if err != nil {
			return fmt.Errorf("github: %w", err)
		}
		var out strings.Builder
		if err := t.Execute(&out, vars); err != nil {
			return fmt.Errorf("github: %w", err)
		}
		*p = out.String()
	}
	return nil
}
