package scm

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBitbucketCloudPullRequests(t *testing.T) {
	f := newFakeForge(t, nil)
	pr := func(id int, branch string) obj {
		return obj{"id": id, "title": "t", "source": obj{"branch": obj{"name": branch}, "commit": obj{"hash": "abcdef123456"}},
			"destination": obj{"branch": obj{"name": "main"}}, "author": obj{"nickname": "fi"}}
	}
	f.answers = map[string]answer{
		"/2.0/repositories/team/app/pullrequests?pagelen=50&state=OPEN": {body: obj{"values": []obj{pr(1, "a")},
			"next": f.URL + "/2.0/repositories/team/app/pullrequests?page=2&pagelen=50&state=OPEN"}},
		"/2.0/repositories/team/app/pullrequests?page=2&pagelen=50&state=OPEN": {body: obj{"values": []obj{pr(2, "b")}}},
	}
	raw := spec(t, obj{"bitbucket": obj{"owner": "team", "repo": "app", "api": f.URL + "/2.0"}})
	res, err := PullRequests(t.Context(), raw, false, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Params {
		got = append(got, p["number"].(string)+" "+p["branch"].(string)+" "+p["head_short_sha"].(string))
	}
	if diff := cmp.Diff(got, []string{"1 a abcdef12", "2 b abcdef12"}); diff != "" {
		t.Errorf("pull requests (-got +want):\n%s", diff)
	}
}

// TestBitbucketCloudNextOffHost refuses a next link to another host:
// the credential would follow it.
func TestBitbucketCloudNextOffHost(t *testing.T) {
	other := newFakeForge(t, map[string]answer{})
	f := newFakeForge(t, map[string]answer{
		"/2.0/repositories/team/app/pullrequests?pagelen=50&state=OPEN": {body: obj{"values": []obj{}, "next": other.URL + "/2.0/steal?page=2"}},
	})
	raw := spec(t, obj{"bitbucket": obj{"owner": "team", "repo": "app", "api": f.URL + "/2.0",
		"bearerToken": obj{"tokenRef": obj{"secretName": "bb", "key": "token"}}}})
	_, err := PullRequests(t.Context(), raw, false, secrets(map[string]string{"bb/token": "bb-token"}), Options{})
	if err == nil || !strings.Contains(err.Error(), "is not on") {
		t.Fatalf("err = %v, want the next page refused", err)
	}
	if got := other.authOf("/2.0/steal"); got != "" {
		t.Errorf("the other host got Authorization %q", got)
	}
}

// TestBitbucketCloudRepositories reaches Bitbucket Cloud's fixed API
// through a transport that sends every request to a fake forge.
func TestBitbucketCloudRepositories(t *testing.T) {
	f := newFakeForge(t, map[string]answer{
		"/2.0/repositories/team?pagelen=100": {body: obj{"next": bitbucketAPI + "/repositories/team?page=2&pagelen=100",
			"values": []obj{{"uuid": "{u1}", "slug": "app", "mainbranch": obj{"name": "main"},
				"links": obj{"clone": []obj{{"name": "https", "href": "https://bb/team/app.git"}, {"name": "ssh", "href": "git@bb:team/app.git"}}}}}}},
		"/2.0/repositories/team?page=2&pagelen=100":                     {body: obj{"values": []obj{{"uuid": "{u2}", "slug": "lib", "mainbranch": obj{"name": "main"}}}}},
		"/2.0/repositories/team/app/refs/branches/main":                 {body: obj{"name": "main", "target": obj{"hash": sha1}}},
		"/2.0/repositories/team/lib/refs/branches/main":                 {body: obj{"name": "main", "target": obj{"hash": sha2}}},
		"/2.0/repositories/team/app/src/" + sha1 + "/chart?format=meta": {body: obj{}},
	})
	target, _ := url.Parse(f.URL)
	opts := Options{Client: func(bool) *http.Client {
		return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.URL.Scheme, r.URL.Host = target.Scheme, target.Host
			return http.DefaultTransport.RoundTrip(r)
		})}
	}}
	raw := spec(t, obj{"bitbucket": obj{"owner": "team", "user": "bot", "appPasswordRef": obj{"secretName": "bb", "key": "pw"}},
		"filters": []obj{{"pathsExist": []string{"chart"}}}})
	res, err := SCMProvider(t.Context(), raw, false, secrets(map[string]string{"bb/pw": "app-pw"}), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Params) != 1 || res.Params[0]["repository_id"] != "{u1}" || res.Params[0]["url"] != "git@bb:team/app.git" {
		t.Errorf("params = %v, want team/app alone", res.Params)
	}
	if got := f.authOf("/2.0/repositories/team"); got != "Basic Ym90OmFwcC1wdw==" {
		t.Errorf("Authorization = %q, want basic auth of bot:app-pw", got)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
