package webhook

import (
	"context"
	"net/http"
	"testing"

	"github.com/graphcd/graphcd/controller/appset"
)

// setsRecorder records the pull request events handed to the sets.
type setsRecorder struct{ got []appset.PullRequestRepo }

func (s *setsRecorder) RefreshPushed(context.Context, func(string, string) bool) (int, error) {
	return 0, nil
}

func (s *setsRecorder) RefreshPullRequest(_ context.Context, repo appset.PullRequestRepo) (int, error) {
	s.got = append(s.got, repo)
	return 1, nil
}

func TestPullRequestEventsRefreshSets(t *testing.T) {
	tests := []struct {
		provider, event, body string
		want                  appset.PullRequestRepo
	}{
		{"github", "pull_request", `{"action":"opened","repository":{"full_name":"acme/web"}}`,
			appset.PullRequestRepo{Provider: "github", Owner: "acme", Repo: "web"}},
		{"gitea", "pull_request", `{"action":"closed","repository":{"full_name":"fleet/svc"}}`,
			appset.PullRequestRepo{Provider: "gitea", Owner: "fleet", Repo: "svc"}},
		{"gitea", "pull_request_sync", `{"action":"synchronized","repository":{"full_name":"fleet/svc"}}`,
			appset.PullRequestRepo{Provider: "gitea", Owner: "fleet", Repo: "svc"}},
		{"gitlab", "Merge Request Hook", `{"project":{"id":42,"path_with_namespace":"group/sub/app"}}`,
			appset.PullRequestRepo{Provider: "gitlab", Owner: "group/sub", Repo: "app", ProjectID: "42"}},
		{"bitbucket", "pullrequest:created", `{"repository":{"full_name":"team/repo"}}`,
			appset.PullRequestRepo{Provider: "bitbucket", Owner: "team", Repo: "repo"}},
		{"bitbucketserver", "pr:opened", `{"pullRequest":{"toRef":{"repository":{"slug":"repo","project":{"key":"PRJ"}}}}}`,
			appset.PullRequestRepo{Provider: "bitbucketServer", Owner: "PRJ", Repo: "repo"}},
	}
	for _, tt := range tests {
		t.Run(tt.provider+" "+tt.event, func(t *testing.T) {
			h, rec := testHandler(nil, StaticSecrets{}, nil)
			sets := &setsRecorder{}
			h.opts.Sets = sets
			w := serve(h, delivery(t, tt.provider, tt.event, []byte(tt.body), ""))
			if w.Code != http.StatusOK || len(sets.got) != 1 || sets.got[0] != tt.want {
				t.Fatalf("status %d (%s), sets asked %+v, want %+v", w.Code, w.Body, sets.got, tt.want)
			}
			if got := rec.refreshed(); len(got) != 0 {
				t.Errorf("refreshed apps %v on a pull request event", got)
			}
		})
	}
	// A comment is not a change of the pull requests; a payload that is
	// not JSON is refused.
	h, _ := testHandler(nil, StaticSecrets{}, nil)
	sets := &setsRecorder{}
	h.opts.Sets = sets
	if w := serve(h, delivery(t, "bitbucketserver", "pr:comment:added", []byte(`{}`), "")); w.Code != http.StatusOK || len(sets.got) != 0 {
		t.Errorf("comment: status %d, sets asked %+v", w.Code, sets.got)
	}
	if w := serve(h, delivery(t, "github", "pull_request", []byte(`{"repository":`), "")); w.Code != http.StatusBadRequest {
		t.Errorf("bad payload: status %d, want 400", w.Code)
	}
}
