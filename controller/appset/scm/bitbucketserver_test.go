package scm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBitbucketServerRepositories(t *testing.T) {
	clone := func(slug string) obj {
		return obj{"clone": []obj{{"name": "http", "href": "https://bbs/scm/ops/" + slug + ".git"}, {"name": "ssh", "href": "ssh://git@bbs/ops/" + slug + ".git"}}}
	}
	f := newFakeForge(t, map[string]answer{
		"/rest/api/1.0/projects/OPS/repos?limit=100": {body: obj{"isLastPage": false, "nextPageStart": 1,
			"values": []obj{{"id": 1, "slug": "infra", "project": obj{"key": "OPS"}, "links": clone("infra")}}}},
		"/rest/api/1.0/projects/OPS/repos?limit=100&start=1": {body: obj{"isLastPage": true,
			"values": []obj{{"id": 2, "slug": "empty", "project": obj{"key": "OPS"}, "links": clone("empty")}}}},
		"/rest/api/1.0/projects/OPS/repos/infra/branches?limit=100": {body: obj{"isLastPage": false, "nextPageStart": 1,
			"values": []obj{{"displayId": "main", "latestCommit": sha1}}}},
		"/rest/api/1.0/projects/OPS/repos/infra/branches?limit=100&start=1": {body: obj{"isLastPage": true,
			"values": []obj{{"displayId": "hotfix", "latestCommit": sha2}}}},
		"/rest/api/1.0/projects/OPS/repos/empty/branches?limit=100": {body: obj{"isLastPage": true, "values": []obj{}}},
	})
	raw := spec(t, obj{"cloneProtocol": "https", "filters": []obj{{"branchMatch": "^main$"}},
		"bitbucketServer": obj{"project": "OPS", "api": f.URL, "allBranches": true,
			"basicAuth": obj{"username": "bot", "passwordRef": obj{"secretName": "bb", "key": "password"}}}})
	res, err := SCMProvider(t.Context(), raw, false, secrets(map[string]string{"bb/password": "hunter2"}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{{"organization": "OPS", "repository": "infra", "repository_id": int64(1), "url": "https://bbs/scm/ops/infra.git",
		"branch": "main", "branchNormalized": "main", "sha": sha1, "short_sha": "01234567", "short_sha_7": "0123456", "labels": ""}}
	if diff := cmp.Diff(res.Params, want); diff != "" {
		t.Errorf("params (-got +want):\n%s", diff)
	}
	if got := f.authOf("/rest/api/1.0/projects/OPS/repos"); got != "Basic Ym90Omh1bnRlcjI=" {
		t.Errorf("Authorization = %q, want basic auth of bot:hunter2", got)
	}
}

func TestBitbucketServerPullRequests(t *testing.T) {
	f := newFakeForge(t, map[string]answer{
		"/rest/api/1.0/projects/OPS/repos/infra/pull-requests?limit=100&state=OPEN": {body: obj{"isLastPage": true, "values": []obj{
			{"id": 9, "title": "Bump", "fromRef": obj{"displayId": "bump", "latestCommit": sha2}, "toRef": obj{"displayId": "main"},
				"author": obj{"user": obj{"name": "ed"}}},
		}}},
	})
	raw := spec(t, obj{"bitbucketServer": obj{"project": "OPS", "repo": "infra", "api": f.URL,
		"bearerToken": obj{"tokenRef": obj{"secretName": "bb", "key": "token"}}}})
	res, err := PullRequests(t.Context(), raw, false, secrets(map[string]string{"bb/token": "bbs-token"}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{{"number": "9", "title": "Bump", "branch": "bump", "branch_slug": "bump", "target_branch": "main",
		"target_branch_slug": "main", "head_sha": sha2, "head_short_sha": "fedcba98", "head_short_sha_7": "fedcba9", "author": "ed"}}
	if diff := cmp.Diff(res.Params, want); diff != "" {
		t.Errorf("params (-got +want):\n%s", diff)
	}
	if got := f.authOf("/rest/api/1.0/projects/OPS/repos/infra/pull-requests"); got != "Bearer bbs-token" {
		t.Errorf("Authorization = %q, want the bearer token", got)
	}
}
