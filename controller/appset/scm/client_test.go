package scm

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// reposAt is a GitHub spec listing acme's repositories at api with the
// gh/token secret.
func reposAt(t *testing.T, api string) []byte {
	t.Helper()
	return spec(t, obj{"github": obj{"organization": "acme", "api": api, "tokenRef": obj{"secretName": "gh", "key": "token"}}})
}

// pages answers n linked pages of one repository each, from first on.
func pages(n int) map[string]answer {
	out := map[string]answer{}
	for i := 1; i <= n; i++ {
		key := "/api/v3/orgs/acme/repos?per_page=100"
		if i > 1 {
			key = "/api/v3/orgs/acme/repos?page=" + string(rune('0'+i)) + "&per_page=100"
		}
		a := answer{body: []obj{{"id": i, "name": "r" + string(rune('0'+i)), "owner": obj{"login": "acme"}}}}
		if i < n {
			a.header = map[string]string{"Link": "</api/v3/orgs/acme/repos?page=" + string(rune('0'+i+1)) + "&per_page=100>; rel=\"next\""}
		}
		out[key] = a
	}
	return out
}

// TestBounds: over a bound is an error, never a silent cut.
func TestBounds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers map[string]answer
		opts    Options
		want    string
	}{
		{name: "pages", answers: pages(3), opts: Options{MaxPages: 2}, want: "more than 2 pages"},
		{name: "items", answers: pages(3), opts: Options{MaxResults: 2}, want: "more than 2 items"},
		{name: "requests", answers: pages(3), opts: Options{MaxRequests: 2}, want: "more than 2 requests"},
		{name: "bytes", answers: map[string]answer{"/api/v3/orgs/acme/repos?per_page=100": {body: strings.Repeat(" ", 200) + "[]"}},
			opts: Options{MaxResponseBytes: 100}, want: "more than 100 bytes"},
		{name: "bytes streamed", answers: map[string]answer{"/api/v3/orgs/acme/repos?per_page=100": {body: strings.Repeat(" ", 10000) + "[]"}},
			opts: Options{MaxResponseBytes: 5000}, want: "more than 5000 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeForge(t, tc.answers)
			_, err := SCMProvider(t.Context(), reposAt(t, f.URL), false, githubSecrets, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("within", func(t *testing.T) {
		f := newFakeForge(t, pages(3))
		if _, err := SCMProvider(t.Context(), reposAt(t, f.URL), false, githubSecrets, Options{MaxPages: 3, MaxResults: 3}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestResultBound bounds the parameter sets across repositories.
func TestResultBound(t *testing.T) {
	f := githubForge(t)
	raw := spec(t, obj{"github": obj{"organization": "acme", "api": f.URL, "allBranches": true}})
	_, err := SCMProvider(t.Context(), raw, false, nil, Options{MaxResults: 2})
	if err == nil || !strings.Contains(err.Error(), "more than 2 repositories and branches") {
		t.Fatalf("err = %v, want the bound", err)
	}
}

// TestRedirectAuthorization sends the token on a redirect within the
// forge's host and never to another host.
func TestRedirectAuthorization(t *testing.T) {
	other := newFakeForge(t, map[string]answer{"/elsewhere": {body: []obj{}}})
	forge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v3/orgs/acme/repos":
			http.Redirect(w, r, "/api/v3/moved", http.StatusFound)
		case "/api/v3/moved":
			if r.Header.Get("Authorization") != "Bearer ghp_SECRET" {
				http.Error(w, "no token on a same-host redirect", http.StatusUnauthorized)
				return
			}
			http.Redirect(w, r, other.URL+"/elsewhere", http.StatusFound)
		}
	}))
	t.Cleanup(forge.Close)
	if _, err := SCMProvider(t.Context(), reposAt(t, forge.URL), false, githubSecrets, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := other.authOf("/elsewhere"); got != "" {
		t.Errorf("another host got Authorization %q", got)
	}
}

// TestErrorsHideToken: a forge echoing the token in its error gets it
// masked, and the message is cut short.
func TestErrorsHideToken(t *testing.T) {
	f := newFakeForge(t, map[string]answer{
		"/api/v3/orgs/acme/repos?per_page=100": {status: http.StatusUnauthorized, body: "bad credentials ghp_SECRET\n" + strings.Repeat("x", 5000)},
	})
	_, err := SCMProvider(t.Context(), reposAt(t, f.URL), false, githubSecrets, Options{})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if strings.Contains(msg, "ghp_SECRET") || !strings.Contains(msg, "401") || !strings.Contains(msg, "bad credentials ***") {
		t.Errorf("err = %q, want the status and the message without the token", msg)
	}
	if strings.Contains(msg, "per_page") || len(msg) > 500 {
		t.Errorf("err = %q: want the URL without its query and a short message", msg)
	}
}

func TestAPIURL(t *testing.T) {
	for _, api := range []string{"file:///etc/passwd", "ftp://forge.example.com", "https://bot:pa55word@forge.example.com", "forge.example.com"} {
		_, err := SCMProvider(t.Context(), reposAt(t, api), false, githubSecrets, Options{})
		if err == nil || strings.Contains(err.Error(), "pa55word") {
			t.Errorf("api %q: err = %v, want a refusal without the password", api, err)
		}
	}
}

func TestContextCanceled(t *testing.T) {
	f := githubForge(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := SCMProvider(ctx, reposAt(t, f.URL), false, githubSecrets, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestSpecErrors: what graphcd cannot run is a clear error.
func TestSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		pull bool
		spec obj
		want string
	}{
		{name: "no provider", spec: obj{}, want: "scmProvider: set one provider of"},
		{name: "two providers", spec: obj{"github": obj{"organization": "a"}, "gitea": obj{"owner": "b"}}, want: "sets gitea and github"},
		{name: "azure", spec: obj{"azureDevOps": obj{"organization": "a"}}, want: "scmProvider.azureDevOps is not supported yet"},
		{name: "codecommit", pull: true, spec: obj{"awsCodeCommit": obj{}}, want: "pullRequest.awsCodeCommit is not supported yet"},
		{name: "github app", spec: obj{"github": obj{"organization": "a", "appSecretName": "app"}}, want: "GitHub App authentication is not supported yet"},
		{name: "clone protocol", spec: obj{"cloneProtocol": "git", "github": obj{"organization": "a"}}, want: `cloneProtocol "git"`},
		{name: "regex", spec: obj{"github": obj{"organization": "a"}, "filters": []obj{{"repositoryMatch": "("}}}, want: "filters[0].repositoryMatch"},
		{name: "long regex", pull: true, spec: obj{"github": obj{"owner": "a", "repo": "b"}, "filters": []obj{{"titleMatch": strings.Repeat("a", 2000)}}},
			want: "filters[0].titleMatch: 2000 characters"},
		{name: "missing field", pull: true, spec: obj{"github": obj{"owner": "a"}}, want: "owner and repo are required"},
		{name: "missing secret", spec: obj{"github": obj{"organization": "a", "tokenRef": obj{"secretName": "s", "key": "k"}}}, want: "tokenRef: secret s has no key k"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := SCMProvider
			if tc.pull {
				run = PullRequests
			}
			_, err := run(t.Context(), spec(t, tc.spec), false, secrets(nil), Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
