package scm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGitLabProjects(t *testing.T) {
	f := newFakeForge(t, map[string]answer{
		"/api/v4/groups/platform%2Fapps/projects?include_subgroups=true&per_page=100&topic=k8s&with_shared=false": {
			header: map[string]string{"X-Next-Page": "2"},
			body: []obj{{"id": 11, "path": "api", "namespace": obj{"full_path": "platform/apps"}, "ssh_url_to_repo": "git@gl:platform/apps/api.git",
				"http_url_to_repo": "https://gl/platform/apps/api.git", "default_branch": "main", "topics": []string{"k8s", "go"}}},
		},
		"/api/v4/groups/platform%2Fapps/projects?include_subgroups=true&page=2&per_page=100&topic=k8s&with_shared=false": {
			body: []obj{{"id": 12, "path": "old", "namespace": obj{"full_path": "platform/apps/legacy"}, "ssh_url_to_repo": "git@gl:old.git",
				"default_branch": "feature/x", "tag_list": []string{"k8s"}}},
		},
		"/api/v4/projects/11/repository/branches/main":                                          {body: obj{"name": "main", "commit": obj{"id": sha1}}},
		"/api/v4/projects/12/repository/branches/feature%2Fx":                                   {body: obj{"name": "feature/x", "commit": obj{"id": sha2}}},
		"/api/v4/projects/11/repository/files/deploy%2Fapp.yaml":                                {body: obj{}},
		"/api/v4/projects/12/repository/tree?path=deploy%2Fapp.yaml&per_page=1&ref=feature%2Fx": {body: []obj{}},
	})
	raw := spec(t, obj{
		"gitlab": obj{"group": "platform/apps", "includeSubgroups": true, "includeSharedProjects": false, "topic": "k8s", "api": f.URL,
			"tokenRef": obj{"secretName": "gl", "key": "token"}},
		"filters": []obj{{"pathsExist": []string{"deploy/app.yaml"}}, {"pathsExist": []string{"/overlays/"}, "labelMatch": "^go$"}},
	})
	res, err := SCMProvider(t.Context(), raw, false, secrets(map[string]string{"gl/token": "glpat-1"}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Params {
		got = append(got, p["organization"].(string)+"/"+p["repository"].(string)+"@"+p["branch"].(string)+" "+p["labels"].(string))
	}
	if diff := cmp.Diff(got, []string{"platform/apps/api@main k8s,go"}); diff != "" {
		t.Errorf("projects (-got +want):\n%s", diff)
	}
	if got := f.authOf("/api/v4/projects/11/repository/branches/main"); got != "Bearer glpat-1" {
		t.Errorf("Authorization = %q, want the token as a bearer token", got)
	}
}

func TestGitLabMergeRequests(t *testing.T) {
	f := newFakeForge(t, map[string]answer{
		"/api/v4/projects/platform%2Fapi/merge_requests?labels=preview%2Cteam&per_page=100&state=opened": {
			header: map[string]string{"Link": `</api/v4/projects/platform%2Fapi/merge_requests?labels=preview%2Cteam&page=2&per_page=100&state=opened>; rel="next"`},
			body:   []obj{{"iid": 3, "title": "Fix", "source_branch": "fix", "target_branch": "main", "sha": sha1, "author": obj{"username": "cy"}, "labels": []string{"preview", "team"}}},
		},
		"/api/v4/projects/platform%2Fapi/merge_requests?labels=preview%2Cteam&page=2&per_page=100&state=opened": {
			body: []obj{{"iid": 4, "title": "WIP: big", "source_branch": "big", "target_branch": "dev", "sha": sha2, "author": obj{"username": "di"}}},
		},
	})
	raw := spec(t, obj{
		"gitlab":  obj{"project": "platform/api", "api": f.URL + "/api/v4/", "labels": []string{"preview", "team"}, "pullRequestState": "opened"},
		"filters": []obj{{"targetBranchMatch": "^main$"}, {"branchMatch": "^big$", "titleMatch": "^WIP"}},
	})
	res, err := PullRequests(t.Context(), raw, false, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Params {
		got = append(got, p["number"].(string)+" "+p["author"].(string))
	}
	if diff := cmp.Diff(got, []string{"3 cy", "4 di"}); diff != "" {
		t.Errorf("merge requests (-got +want):\n%s", diff)
	}
}
