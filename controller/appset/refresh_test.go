package appset

import "testing"

func TestPullRequestReads(t *testing.T) {
	gitea := PullRequestRepo{Provider: "gitea", Owner: "Fleet", Repo: "svc"}
	gitlab := PullRequestRepo{Provider: "gitlab", Owner: "group/sub", Repo: "app", ProjectID: "42"}
	server := PullRequestRepo{Provider: "bitbucketServer", Owner: "PRJ", Repo: "repo"}
	tests := []struct {
		raw  string
		repo PullRequestRepo
		want bool
	}{
		{`{"gitea":{"owner":"fleet","repo":"svc"}}`, gitea, true},
		{`{"gitea":{"owner":"fleet","repo":"other"}}`, gitea, false},
		{`{"github":{"owner":"fleet","repo":"svc"}}`, gitea, false},
		{`{"gitea":{"owner":"{{ .org }}","repo":"svc"}}`, gitea, true},
		{`{"gitlab":{"project":"42"}}`, gitlab, true},
		{`{"gitlab":{"project":"group/sub/app"}}`, gitlab, true},
		{`{"gitlab":{"project":"7"}}`, gitlab, false},
		{`{"bitbucketServer":{"project":"PRJ","repo":"repo"}}`, server, true},
		{`not json`, gitea, false},
	}
	for _, tt := range tests {
		if got := pullRequestReads([]byte(tt.raw), tt.repo); got != tt.want {
			t.Errorf("pullRequestReads(%s, %+v) = %v, want %v", tt.raw, tt.repo, got, tt.want)
		}
	}
}
