package scm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func githubForge(t *testing.T) *fakeForge {
	t.Helper()
	f := newFakeForge(t, map[string]answer{
		"/api/v3/orgs/acme/repos?per_page=100": {
			body: []obj{{"id": 1, "name": "svc-a", "owner": obj{"login": "acme"}, "clone_url": "https://gh/acme/svc-a.git",
				"ssh_url": "git@gh:acme/svc-a.git", "default_branch": "main", "topics": []string{"deploy", "team-a"}}},
		},
		"/api/v3/orgs/acme/repos?page=2&per_page=100": {
			body: []obj{{"id": 2, "name": "web", "owner": obj{"login": "acme"}, "clone_url": "https://gh/acme/web.git",
				"ssh_url": "git@gh:acme/web.git", "default_branch": "release/v1"}},
		},
		"/api/v3/repos/acme/svc-a/branches/main":                               {body: obj{"name": "main", "commit": obj{"sha": sha1}}},
		"/api/v3/repos/acme/web/branches/release/v1":                           {body: obj{"name": "release/v1", "commit": obj{"sha": sha2}}},
		"/api/v3/repos/acme/svc-a/branches?per_page=100":                       {body: []obj{{"name": "main", "commit": obj{"sha": sha1}}, {"name": "dev", "commit": obj{"sha": sha2}}}},
		"/api/v3/repos/acme/web/branches?per_page=100":                         {body: []obj{{"name": "release/v1", "commit": obj{"sha": sha2}}}},
		"/api/v3/repos/acme/svc-a/contents/deploy/kustomization.yaml?ref=main": {body: obj{}},
		"/api/v3/repos/acme/web/contents/deploy?ref=release%2Fv1":              {body: []obj{}},
		"/api/v3/repos/acme/web/pulls?per_page=100&state=open": {
			header: map[string]string{"Link": `</api/v3/repos/acme/web/pulls?page=2&per_page=100&state=open>; rel="next"`},
			body: []obj{{"number": 7, "title": "Add cache", "head": obj{"ref": "feat/Cache_Layer", "sha": sha1}, "base": obj{"ref": "main"},
				"user": obj{"login": "ann"}, "labels": []obj{{"name": "preview"}, {"name": "big"}}}},
		},
		"/api/v3/repos/acme/web/pulls?page=2&per_page=100&state=open": {
			body: []obj{{"number": 8, "title": "Docs", "head": obj{"ref": "docs", "sha": sha2}, "base": obj{"ref": "main"},
				"user": obj{"login": "bob"}}},
		},
	})
	// The first page's next link is absolute, on the forge's own host.
	a := f.answers["/api/v3/orgs/acme/repos?per_page=100"]
	a.header = map[string]string{"Link": `<` + f.URL + `/api/v3/orgs/acme/repos?page=2&per_page=100>; rel="next", <` + f.URL + `/x>; rel="last"`}
	f.answers["/api/v3/orgs/acme/repos?per_page=100"] = a
	return f
}

var githubSecrets = secrets(map[string]string{"gh/token": "ghp_SECRET"})

func TestGitHubRepositories(t *testing.T) {
	f := githubForge(t)
	raw := spec(t, obj{"github": obj{"organization": "acme", "api": f.URL + "/", "tokenRef": obj{"secretName": "gh", "key": "token"}}})
	res, err := SCMProvider(t.Context(), raw, false, githubSecrets, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"organization": "acme", "repository": "svc-a", "repository_id": int64(1), "url": "git@gh:acme/svc-a.git",
			"branch": "main", "branchNormalized": "main", "sha": sha1, "short_sha": "01234567", "short_sha_7": "0123456", "labels": "deploy,team-a"},
		{"organization": "acme", "repository": "web", "repository_id": int64(2), "url": "git@gh:acme/web.git",
			"branch": "release/v1", "branchNormalized": "release-v1", "sha": sha2, "short_sha": "fedcba98", "short_sha_7": "fedcba9", "labels": ""},
	}
	if diff := cmp.Diff(res.Params, want); diff != "" {
		t.Errorf("params (-got +want):\n%s", diff)
	}
	if got := f.authOf("/api/v3/orgs/acme/repos"); got != "Bearer ghp_SECRET" {
		t.Errorf("Authorization = %q, want the bearer token", got)
	}
}

func TestGitHubAllBranchesHTTPS(t *testing.T) {
	f := githubForge(t)
	raw := spec(t, obj{"cloneProtocol": "https", "github": obj{"organization": "acme", "api": f.URL, "allBranches": true}})
	res, err := SCMProvider(t.Context(), raw, true, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Params {
		got = append(got, p["url"].(string)+"@"+p["branch"].(string))
	}
	want := []string{"https://gh/acme/svc-a.git@main", "https://gh/acme/svc-a.git@dev", "https://gh/acme/web.git@release/v1"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("repositories@branches (-got +want):\n%s", diff)
	}
}

func TestGitHubPullRequests(t *testing.T) {
	f := githubForge(t)
	for _, tc := range []struct {
		name       string
		goTemplate bool
		labels     []string
		want       []map[string]any
	}{{
		name: "fasttemplate",
		want: []map[string]any{
			{"number": "7", "title": "Add cache", "branch": "feat/Cache_Layer", "branch_slug": "feat-cache-layer", "target_branch": "main",
				"target_branch_slug": "main", "head_sha": sha1, "head_short_sha": "01234567", "head_short_sha_7": "0123456", "author": "ann"},
			{"number": "8", "title": "Docs", "branch": "docs", "branch_slug": "docs", "target_branch": "main",
				"target_branch_slug": "main", "head_sha": sha2, "head_short_sha": "fedcba98", "head_short_sha_7": "fedcba9", "author": "bob"},
		},
	}, {
		name: "goTemplate with labels", goTemplate: true, labels: []string{"preview"},
		want: []map[string]any{
			{"number": "7", "title": "Add cache", "branch": "feat/Cache_Layer", "branch_slug": "feat-cache-layer", "target_branch": "main",
				"target_branch_slug": "main", "head_sha": sha1, "head_short_sha": "01234567", "head_short_sha_7": "0123456", "author": "ann",
				"labels": []any{"preview", "big"}},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			raw := spec(t, obj{"requeueAfterSeconds": 60, "values": obj{"env": "pr"}, "template": obj{"metadata": obj{"name": "pr-{{number}}"}},
				"github": obj{"owner": "acme", "repo": "web", "api": f.URL, "tokenRef": obj{"secretName": "gh", "key": "token"}, "labels": tc.labels}})
			res, err := PullRequests(t.Context(), raw, tc.goTemplate, githubSecrets, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(res.Params, tc.want); diff != "" {
				t.Errorf("params (-got +want):\n%s", diff)
			}
			if res.RequeueAfterSeconds == nil || *res.RequeueAfterSeconds != 60 || res.Values["env"] != "pr" || res.Template == nil || res.Template.Name != "pr-{{number}}" {
				t.Errorf("requeueAfterSeconds %v, values %v, template %v: want the spec's", res.RequeueAfterSeconds, res.Values, res.Template)
			}
		})
	}
}

func TestGitHubBase(t *testing.T) {
	for api, want := range map[string]string{
		"":                                "",
		"https://api.github.com":          "https://api.github.com",
		"https://git.example.com/":        "https://git.example.com/api/v3",
		"https://git.example.com/api/v3/": "https://git.example.com/api/v3/",
		"https://api.git.example.com/":    "https://api.git.example.com/",
	} {
		if got := githubBase(api); got != want {
			t.Errorf("githubBase(%q) = %q, want %q", api, got, want)
		}
	}
}
