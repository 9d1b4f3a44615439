package webhook

import (
	"strconv"
	"strings"

	"github.com/graphcd/graphcd/controller/appset"
)

// pullRequestParsers read a pull (merge) request event of each provider
// whose pullRequest generator graphcd runs: the repository it is about.
// ok is false for other events.
var pullRequestParsers = map[string]func(event string, body []byte) (repo appset.PullRequestRepo, ok bool, err error){
	"github": func(event string, body []byte) (appset.PullRequestRepo, bool, error) {
		if event != "pull_request" {
			return appset.PullRequestRepo{}, false, nil
		}
		return fullNameRepo("github", body)
	},
	"gitea": func(event string, body []byte) (appset.PullRequestRepo, bool, error) {
		// Gitea names the kinds of change: pull_request (opened, closed,
		// reopened, edited), pull_request_sync (pushed), pull_request_label.
		if event != "pull_request" && event != "pull_request_sync" && event != "pull_request_label" {
			return appset.PullRequestRepo{}, false, nil
		}
		return fullNameRepo("gitea", body)
	},
	"gitlab": func(event string, body []byte) (appset.PullRequestRepo, bool, error) {
		if event != "Merge Request Hook" {
			return appset.PullRequestRepo{}, false, nil
		}
		var p struct {
			Project struct {
				ID                int64  `json:"id"`
				PathWithNamespace string `json:"path_with_namespace"`
			} `json:"project"`
		}
		if err := decode(body, &p); err != nil {
			return appset.PullRequestRepo{}, true, err
		}
		owner, name := splitFullName(p.Project.PathWithNamespace)
		return appset.PullRequestRepo{Provider: "gitlab", Owner: owner, Repo: name, ProjectID: strconv.FormatInt(p.Project.ID, 10)}, true, nil
	},
	"bitbucket": func(event string, body []byte) (appset.PullRequestRepo, bool, error) {
		if !strings.HasPrefix(event, "pullrequest:") || strings.HasPrefix(event, "pullrequest:comment") {
			return appset.PullRequestRepo{}, false, nil
		}
		return fullNameRepo("bitbucket", body)
	},
	"bitbucketserver": func(event string, body []byte) (appset.PullRequestRepo, bool, error) {
		if !strings.HasPrefix(event, "pr:") || strings.HasPrefix(event, "pr:comment") {
			return appset.PullRequestRepo{}, false, nil
		}
		var p struct {
			PullRequest struct {
				ToRef struct {
					Repository struct {
						Slug    string `json:"slug"`
						Project struct {
							Key string `json:"key"`
						} `json:"project"`
					} `json:"repository"`
				} `json:"toRef"`
			} `json:"pullRequest"`
		}
		if err := decode(body, &p); err != nil {
			return appset.PullRequestRepo{}, true, err
		}
		r := p.PullRequest.ToRef.Repository
		return appset.PullRequestRepo{Provider: "bitbucketServer", Owner: r.Project.Key, Repo: r.Slug}, true, nil
	},
}

// fullNameRepo reads repository.full_name ("owner/name").
func fullNameRepo(provider string, body []byte) (appset.PullRequestRepo, bool, error) {
	var p struct {
		Repository struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
	}
	if err := decode(body, &p); err != nil {
		return appset.PullRequestRepo{}, true, err
	}
	owner, name := splitFullName(p.Repository.FullName)
	return appset.PullRequestRepo{Provider: provider, Owner: owner, Repo: name}, true, nil
}

// splitFullName splits "a/b/c" at its last slash: GitLab's namespaces
// nest.
func splitFullName(s string) (owner, name string) {
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return "", s
	}
	return s[:i], s[i+1:]
}
