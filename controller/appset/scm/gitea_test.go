package scm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGiteaUserRepositories reads a user's repositories (no organization
// of that name) over two pages counted by X-Total-Count, with their
// topics (read, or listed) as labels and all their branches.
func TestGiteaUserRepositories(t *testing.T) {
	f := newFakeForge(t, map[string]answer{
		"/api/v1/users/ann/repos?limit=50&page=1": {header: map[string]string{"X-Total-Count": "51"},
			body: []obj{{"id": 4, "name": "app", "owner": obj{"login": "ann"}, "ssh_url": "ssh://gitea/ann/app.git", "default_branch": "main"}}},
		"/api/v1/users/ann/repos?limit=50&page=2": {header: map[string]string{"X-Total-Count": "51"},
			body: []obj{{"id": 5, "name": "empty", "owner": obj{"login": "ann"}, "ssh_url": "ssh://gitea/ann/empty.git", "default_branch": "main", "topics": []string{}}}},
		"/api/v1/repos/ann/app/topics":                     {body: obj{"topics": []string{"deploy"}}},
		"/api/v1/repos/ann/empty/topics":                   {body: obj{"topics": []string{}}},
		"/api/v1/repos/ann/app/branches?limit=50&page=1":   {body: []obj{{"name": "main", "commit": obj{"id": sha1}}, {"name": "v2", "commit": obj{"id": sha2}}}},
		"/api/v1/repos/ann/empty/branches?limit=50&page=1": {body: []obj{}},
	})
	raw := spec(t, obj{"gitea": obj{"owner": "ann", "api": f.URL, "allBranches": true, "tokenRef": obj{"secretName": "g", "key": "t"}}})
	res, err := SCMProvider(t.Context(), raw, false, secrets(map[string]string{"g/t": "gitea-token"}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Params {
		got = append(got, p["repository"].(string)+"@"+p["branch"].(string)+" "+p["labels"].(string))
	}
	if diff := cmp.Diff(got, []string{"app@main deploy", "app@v2 deploy"}); diff != "" {
		t.Errorf("repositories (-got +want):\n%s", diff)
	}
	if got := f.authOf("/api/v1/repos/ann/app/topics"); got != "token gitea-token" {
		t.Errorf("Authorization = %q, want Gitea's token scheme", got)
	}
}

// TestGiteaPullRequestLabels keeps the pull requests carrying every
// label the spec lists.
func TestGiteaPullRequestLabels(t *testing.T) {
	f := newFakeForge(t, map[string]answer{
		"/api/v1/repos/ann/app/pulls?limit=50&page=1&state=open": {body: []obj{
			{"number": 1, "title": "a", "head": obj{"ref": "a", "sha": sha1}, "base": obj{"ref": "main"}, "labels": []obj{{"name": "preview"}, {"name": "x"}}},
			{"number": 2, "title": "b", "head": obj{"ref": "b", "sha": sha2}, "base": obj{"ref": "main"}, "labels": []obj{{"name": "x"}}},
		}},
	})
	raw := spec(t, obj{"gitea": obj{"owner": "ann", "repo": "app", "api": f.URL, "labels": []string{"preview", "x"}}})
	res, err := PullRequests(t.Context(), raw, true, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Params) != 1 || res.Params[0]["number"] != "1" {
		t.Errorf("params = %v, want pull request 1 alone", res.Params)
	}
}
