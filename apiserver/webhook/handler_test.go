package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appindex"
)

// recorder is a Refresher that notes which apps it was asked to refresh;
// the integration test checks the real annotation.
type recorder struct {
	mu   sync.Mutex
	keys []string
}

func (r *recorder) Refresh(_ context.Context, key types.NamespacedName, hard bool) (*v1alpha1.Application, error) {
	if hard {
		return nil, fmt.Errorf("webhook asked for a hard refresh of %s", key)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys = append(r.keys, key.Name)
	return nil, nil
}

func (r *recorder) refreshed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.keys)
	slices.Sort(out)
	return out
}

func newApp(name, repoURL, target string) *v1alpha1.Application {
	return &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name},
		Spec: v1alpha1.ApplicationSpec{
			Source: &v1alpha1.ApplicationSource{RepoURL: repoURL, TargetRevision: target, Path: "guestbook"},
		},
	}
}

// testHandler serves webhooks against apps with secrets, logging to log
// (nil discards).
func testHandler(apps []*v1alpha1.Application, secrets Secrets, log io.Writer) (*Handler, *recorder) {
	idx := appindex.New()
	for _, a := range apps {
		idx.Upsert(a)
	}
	rec := &recorder{}
	if log == nil {
		log = io.Discard
	}
	h := New(Options{Apps: idx, Refresher: rec, Secrets: secrets, Logger: slog.New(slog.NewTextHandler(log, nil))})
	return h, rec
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestPushRefreshesMatchingApps(t *testing.T) {
	for _, c := range pushCases {
		t.Run(c.provider, func(t *testing.T) {
			var apps []*v1alpha1.Application
			var want []string
			for _, a := range appsFor(c) {
				apps = append(apps, newApp(a.name, a.repoURL, a.target))
				if a.want {
					want = append(want, a.name)
				}
			}
			slices.Sort(want)
			h, rec := testHandler(apps, secretsFor(c.provider, c.secret), nil)
			w := serve(h, delivery(t, c.provider, c.event, readFixture(t, c.fixture), c.secret))
			if w.Code != http.StatusOK {
				t.Fatalf("status %d (%s), want 200", w.Code, w.Body)
			}
			if diff := cmp.Diff(rec.refreshed(), want); diff != "" {
				t.Errorf("refreshed apps (-got +want):\n%s", diff)
			}
		})
	}
}

func TestTagPushRefreshesAppsAtTheTag(t *testing.T) {
	const repo = "https://gitlab.com/team/guestbook.git"
	apps := []*v1alpha1.Application{
		newApp("tag", repo, "v1.0.0"),
		newApp("tag-ref", repo, "refs/tags/v1.0.0"),
		newApp("other-tag", repo, "v1.0.1"),
		newApp("main", repo, "main"),
		newApp("head", repo, "HEAD"),
	}
	h, rec := testHandler(apps, StaticSecrets{}, nil)
	w := serve(h, delivery(t, "gitlab", "Tag Push Hook", readFixture(t, "gitlab-tag-push.json"), ""))
	if w.Code != http.StatusOK {
		t.Fatalf("status %d (%s), want 200", w.Code, w.Body)
	}
	if diff := cmp.Diff(rec.refreshed(), []string{"tag", "tag-ref"}); diff != "" {
		t.Errorf("refreshed apps (-got +want):\n%s", diff)
	}
}

func TestGitLabSystemHookPush(t *testing.T) {
	h, rec := testHandler([]*v1alpha1.Application{newApp("a", "git@gitlab.com:team/guestbook.git", "main")}, StaticSecrets{}, nil)
	w := serve(h, delivery(t, "gitlab", "System Hook", readFixture(t, "gitlab-system-push.json"), ""))
	if w.Code != http.StatusOK {
		t.Fatalf("status %d (%s), want 200", w.Code, w.Body)
	}
	if diff := cmp.Diff(rec.refreshed(), []string{"a"}); diff != "" {
		t.Errorf("refreshed apps (-got +want):\n%s", diff)
	}
}

func TestMultiSourceAppRefreshedOnce(t *testing.T) {
	app := newApp("multi", "", "")
	app.Spec.Source = nil
	app.Spec.Sources = []v1alpha1.ApplicationSource{
		{RepoURL: "https://charts.example.com", Chart: "redis", TargetRevision: "main"},
		{RepoURL: "https://github.com/team/guestbook", TargetRevision: "main"},
		{RepoURL: "git@github.com:team/guestbook.git", TargetRevision: "HEAD"},
	}
	chart := newApp("chart", "https://github.com/team/guestbook", "main")
	chart.Spec.Source.Chart = "guestbook"
	// spec.source is ignored when spec.sources is set, here a chart.
	ignored := newApp("ignored-source", "https://github.com/team/guestbook", "main")
	ignored.Spec.Sources = []v1alpha1.ApplicationSource{{RepoURL: "https://charts.example.com", Chart: "redis", TargetRevision: "1.0.0"}}
	h, rec := testHandler([]*v1alpha1.Application{app, chart, ignored}, StaticSecrets{}, nil)
	serve(h, delivery(t, "github", "push", readFixture(t, "github-push.json"), ""))
	if diff := cmp.Diff(rec.refreshed(), []string{"multi"}); diff != "" {
		t.Errorf("refreshed apps (-got +want):\n%s", diff)
	}
}

func TestSecretChecks(t *testing.T) {
	for _, c := range pushCases {
		body := readFixture(t, c.fixture)
		t.Run(c.provider, func(t *testing.T) {
			apps := []*v1alpha1.Application{newApp("app", c.repoForms[0], "main")}
			tests := []struct {
				name    string
				secrets StaticSecrets
				proof   string // what the delivery proves
				body    []byte // the body sent, when not the one proved
				want    int
			}{
				{name: "good", secrets: secretsFor(c.provider, c.secret), proof: c.secret, want: http.StatusOK},
				{name: "wrong", secrets: secretsFor(c.provider, c.secret), proof: wrongSecret(c.provider), want: http.StatusUnauthorized},
				{name: "missing", secrets: secretsFor(c.provider, c.secret), proof: "", want: http.StatusUnauthorized},
				{name: "none configured", secrets: StaticSecrets{}, proof: "", want: http.StatusOK},
			}
			if c.provider != "gitlab" && c.provider != "bitbucket" && c.provider != "azuredevops" {
				// Signed bodies: a body changed after signing fails.
				tests = append(tests, struct {
					name    string
					secrets StaticSecrets
					proof   string
					body    []byte
					want    int
				}{name: "tampered body", secrets: secretsFor(c.provider, c.secret), proof: c.secret,
					body: bytes.Replace(body, []byte("main"), []byte("prod"), 1), want: http.StatusUnauthorized})
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					h, rec := testHandler(apps, tt.secrets, nil)
					r := delivery(t, c.provider, c.event, body, tt.proof)
					if tt.body != nil {
						r.Body = io.NopCloser(bytes.NewReader(tt.body))
						r.ContentLength = int64(len(tt.body))
					}
					w := serve(h, r)
					if w.Code != tt.want {
						t.Fatalf("status %d (%s), want %d", w.Code, w.Body, tt.want)
					}
					if got := len(rec.refreshed()); (tt.want == http.StatusOK) != (got == 1) {
						t.Errorf("refreshed %d apps with status %d", got, w.Code)
					}
				})
			}
		})
	}
}

// wrongSecret is a proof in provider's form that is not the configured one.
func wrongSecret(provider string) string {
	switch provider {
	case "azuredevops":
		return "hook:wrong"
	case "bitbucket":
		return "{00000000-0000-4000-8000-000000000000}"
	}
	return "not the secret"
}

func TestGitHubLegacySHA1Signature(t *testing.T) {
	body := readFixture(t, "github-push.json")
	secrets := StaticSecrets{KeyGitHub: "s3cret"}
	for _, tt := range []struct {
		name, sig string
		want      int
	}{
		{"good", sha1Sig("s3cret", body), http.StatusOK},
		{"wrong", sha1Sig("other", body), http.StatusUnauthorized},
		{"not hex", "sha1=zz", http.StatusUnauthorized},
		{"no prefix", strings.TrimPrefix(sha1Sig("s3cret", body), "sha1="), http.StatusUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := testHandler(nil, secrets, nil)
			r := delivery(t, "github", "push", body, "")
			r.Header.Set("X-Hub-Signature", tt.sig)
			if w := serve(h, r); w.Code != tt.want {
				t.Fatalf("status %d (%s), want %d", w.Code, w.Body, tt.want)
			}
		})
	}
}

// sha1Sig is GitHub's legacy X-Hub-Signature of body under secret.
func sha1Sig(secret string, body []byte) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write(body)
	return "sha1=" + hex.EncodeToString(m.Sum(nil))
}

func TestEventsOtherThanPushIgnored(t *testing.T) {
	apps := []*v1alpha1.Application{newApp("app", "https://github.com/team/guestbook", "main")}
	tests := []struct {
		provider, event, fixture string
	}{
		{"github", "ping", "github-ping.json"},
		{"github", "pull_request", "github-push.json"},
		{"bitbucketserver", "diagnostics:ping", "bitbucketserver-ping.json"},
		{"gitlab", "Merge Request Hook", "gitlab-push.json"},
		{"gitea", "issues", "gitea-push.json"},
	}
	for _, tt := range tests {
		t.Run(tt.provider+" "+tt.event, func(t *testing.T) {
			h, rec := testHandler(apps, StaticSecrets{}, nil)
			w := serve(h, delivery(t, tt.provider, tt.event, readFixture(t, tt.fixture), ""))
			if w.Code != http.StatusOK {
				t.Fatalf("status %d (%s), want 200", w.Code, w.Body)
			}
			if got := rec.refreshed(); len(got) != 0 {
				t.Errorf("refreshed %v on a %s event", got, tt.event)
			}
		})
	}
	// The event is checked after the secret: a forged ping is refused.
	h, _ := testHandler(apps, StaticSecrets{KeyGitHub: "s"}, nil)
	if w := serve(h, delivery(t, "github", "ping", readFixture(t, "github-ping.json"), "wrong")); w.Code != http.StatusUnauthorized {
		t.Errorf("forged ping: status %d, want 401", w.Code)
	}
}

func TestNullAndMissingFields(t *testing.T) {
	apps := []*v1alpha1.Application{newApp("app", "https://github.com/team/guestbook", "main"), newApp("head", "https://github.com/team/guestbook", "")}
	tests := []struct {
		name, provider, event, body string
		want                        int
	}{
		{"github nulls", "github", "push", string(readFixture(t, "github-nulls.json")), http.StatusOK},
		{"github empty object", "github", "push", `{}`, http.StatusOK},
		{"github null repository fields", "github", "push", `{"ref":"refs/heads/main","repository":{"html_url":null,"clone_url":null,"default_branch":null}}`, http.StatusOK},
		{"github JSON null", "github", "push", `null`, http.StatusOK},
		{"gitlab nulls", "gitlab", "Push Hook", `{"ref":null,"project":null,"repository":null,"commits":null}`, http.StatusOK},
		{"gitlab system hook without event_name", "gitlab", "System Hook", `{"project":null}`, http.StatusOK},
		{"bitbucket nulls", "bitbucket", "repo:push", `{"repository":null,"push":{"changes":[null,{"new":null},{"new":{"name":null}}]}}`, http.StatusOK},
		{"bitbucket server nulls", "bitbucketserver", "repo:refs_changed", `{"repository":{"links":{"clone":[null]}},"changes":[null,{"ref":null}]}`, http.StatusOK},
		{"gitea nulls", "gitea", "push", `{"ref":null,"repository":null}`, http.StatusOK},
		{"azure nulls", "azuredevops", "git.push", `{"eventType":"git.push","publisherId":"tfs","resource":{"refUpdates":[null],"repository":null}}`, http.StatusOK},
		{"azure resource null", "azuredevops", "git.push", `{"eventType":"git.push","publisherId":"tfs","resource":null}`, http.StatusOK},
		{"github wrong type", "github", "push", `{"ref":5}`, http.StatusBadRequest},
		{"github not JSON", "github", "push", `payload=%7B%7D`, http.StatusBadRequest},
		{"github truncated", "github", "push", `{"ref":"refs/heads/main","repository":{`, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, rec := testHandler(apps, StaticSecrets{}, nil)
			w := serve(h, delivery(t, tt.provider, tt.event, []byte(tt.body), ""))
			if w.Code != tt.want {
				t.Fatalf("status %d (%s), want %d", w.Code, w.Body, tt.want)
			}
			if got := rec.refreshed(); len(got) != 0 {
				t.Errorf("refreshed %v from a payload without repository", got)
			}
		})
	}
}

func TestUnknownSender(t *testing.T) {
	h, _ := testHandler(nil, StaticSecrets{}, nil)
	for _, body := range []string{`{"ref":"refs/heads/main"}`, `{"eventType":"git.push"}`, ``} {
		r := httptest.NewRequest(http.MethodPost, "/api/webhook", strings.NewReader(body))
		if w := serve(h, r); w.Code != http.StatusBadRequest {
			t.Errorf("body %q without provider headers: status %d, want 400", body, w.Code)
		}
	}
}

func TestSecretsNotLoaded(t *testing.T) {
	h, rec := testHandler([]*v1alpha1.Application{newApp("app", "https://github.com/team/guestbook", "main")}, &SecretWatch{}, nil)
	w := serve(h, delivery(t, "github", "push", readFixture(t, "github-push.json"), ""))
	if w.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d (%s), want 503", w.Code, w.Body)
	}
	if got := rec.refreshed(); len(got) != 0 {
		t.Errorf("refreshed %v before the secrets were known", got)
	}
}

func TestAppsNotLoaded(t *testing.T) {
	const repo = "https://github.com/team/guestbook"
	idx := appindex.New()
	idx.Upsert(newApp("app", repo, "main"))
	loaded := make(chan struct{})
	rec := &recorder{}
	h := New(Options{Apps: idx, AppsLoaded: loaded, Refresher: rec, Secrets: StaticSecrets{}})
	push := readFixture(t, "github-push.json")
	if w := serve(h, delivery(t, "github", "push", push, "")); w.Code != http.StatusServiceUnavailable {
		t.Fatalf("before the apps are loaded: status %d (%s), want 503", w.Code, w.Body)
	}
	if got := rec.refreshed(); len(got) != 0 {
		t.Errorf("refreshed %v before the apps were loaded", got)
	}
	close(loaded)
	if w := serve(h, delivery(t, "github", "push", push, "")); w.Code != http.StatusOK {
		t.Fatalf("once loaded: status %d (%s), want 200", w.Code, w.Body)
	}
	if diff := cmp.Diff(rec.refreshed(), []string{"app"}); diff != "" {
		t.Errorf("refreshed (-got +want):\n%s", diff)
	}
}

func TestNoSecretWarnsOncePerProvider(t *testing.T) {
	var log bytes.Buffer
	h, _ := testHandler(nil, StaticSecrets{}, &log)
	for range 3 {
		serve(h, delivery(t, "github", "push", readFixture(t, "github-push.json"), ""))
		serve(h, delivery(t, "gitlab", "Push Hook", readFixture(t, "gitlab-push.json"), ""))
	}
	if n := strings.Count(log.String(), "without a secret check"); n != 2 {
		t.Errorf("%d warnings about a missing secret, want one per provider (2):\n%s", n, log.String())
	}
}

// endless is a body that never ends; reading all of it would never
// return.
type endless struct{ read atomic.Int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	e.read.Add(int64(len(p)))
	return len(p), nil
}

func TestOversizedBody(t *testing.T) {
	const limit = 1 << 20
	idx := appindex.New()
	rec := &recorder{}
	var log bytes.Buffer
	h := New(Options{Apps: idx, Refresher: rec, Secrets: StaticSecrets{}, MaxBodyBytes: limit, Logger: slog.New(slog.NewTextHandler(&log, nil))})

	t.Run("declared", func(t *testing.T) {
		body := &endless{}
		r := delivery(t, "github", "push", nil, "")
		r.Body, r.ContentLength = io.NopCloser(body), 100<<20
		if w := serve(h, r); w.Code != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d, want 413", w.Code)
		}
		if n := body.read.Load(); n != 0 {
			t.Errorf("read %d bytes of a body declared too large", n)
		}
	})
	t.Run("streamed", func(t *testing.T) {
		// No Content-Length (chunked): the read stops at the limit.
		body := &endless{}
		r := delivery(t, "github", "push", nil, "")
		r.Body, r.ContentLength = io.NopCloser(body), -1
		if w := serve(h, r); w.Code != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d, want 413", w.Code)
		}
		if n := body.read.Load(); n > 2*limit {
			t.Errorf("read %d bytes with a limit of %d", n, limit)
		}
	})
	t.Run("default limit", func(t *testing.T) {
		if got := New(Options{}).opts.MaxBodyBytes; got != 50<<20 {
			t.Errorf("default limit %d, want 50 MiB", got)
		}
	})
	if !strings.Contains(log.String(), "body too large") {
		t.Errorf("no log line says why:\n%s", log.String())
	}
}

func TestHostileRepositoryURLs(t *testing.T) {
	// A server standing in for a metadata endpoint or a local service:
	// the payload names it; nothing may contact it.
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()

	apps := []*v1alpha1.Application{
		newApp("github", "https://github.com/team/guestbook", "main"),
		// An app may deploy from a local Git server; it matches by string
		// like any other, and is refreshed, not fetched.
		newApp("local", srv.URL+"/team/guestbook.git", "main"),
	}
	urls := []struct{ html, clone, ssh string }{
		{"http://169.254.169.254/latest/meta-data", "http://169.254.169.254/latest/meta-data/iam", ""},
		{"http://localhost/team/guestbook", "http://[::1]:80/team/guestbook.git", "git@127.0.0.1:admin/secrets.git"},
		{"file:///etc/passwd", "/var/run/secrets", "javascript:alert(1)"},
		{srv.URL + "/team/guestbook", srv.URL + "/team/guestbook.git", ""},
		{"http://user:hunter2@169.254.169.254/x", "", ""},
	}
	var log bytes.Buffer
	h, rec := testHandler(apps, StaticSecrets{}, &log)
	for _, u := range urls {
		body := fmt.Sprintf(`{"ref":"refs/heads/main","repository":{"html_url":%q,"clone_url":%q,"ssh_url":%q,"default_branch":"main"}}`, u.html, u.clone, u.ssh)
		if w := serve(h, delivery(t, "github", "push", []byte(body), "")); w.Code != http.StatusOK {
			t.Errorf("%s: status %d (%s), want 200", u.html, w.Code, w.Body)
		}
	}
	if diff := cmp.Diff(rec.refreshed(), []string{"local"}); diff != "" {
		t.Errorf("refreshed apps (-got +want):\n%s", diff)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the URL named in a payload got %d requests", n)
	}
	if strings.Contains(log.String(), "hunter2") {
		t.Errorf("a password from a payload URL reached the log:\n%s", log.String())
	}
	if !strings.Contains(log.String(), "169.254.169.254") || !strings.Contains(log.String(), "matched=0") {
		t.Errorf("no log line tells the push matched nothing:\n%s", log.String())
	}
}

func TestManifestPathsAnnotationFiltersRefreshes(t *testing.T) {
	// The GitHub fixture changes guestbook/deployment.yaml; the apps'
	// source path is guestbook.
	annotated := func(name, paths string) *v1alpha1.Application {
		a := newApp(name, "https://github.com/team/guestbook", "main")
		a.Annotations = map[string]string{ManifestPathsAnnotation: paths}
		return a
	}
	apps := []*v1alpha1.Application{
		annotated("source-path", "."),
		annotated("glob", "/guestbook/*.yaml"),
		annotated("elsewhere", "/charts;../shared"),
		newApp("plain", "https://github.com/team/guestbook", "main"),
	}
	h, rec := testHandler(apps, StaticSecrets{}, nil)
	serve(h, delivery(t, "github", "push", readFixture(t, "github-push.json"), ""))
	if diff := cmp.Diff(rec.refreshed(), []string{"glob", "plain", "source-path"}); diff != "" {
		t.Errorf("refreshed apps (-got +want):\n%s", diff)
	}

	// Bitbucket payloads list no files: every matching app is refreshed.
	for _, a := range apps {
		a.Spec.Source.RepoURL = "https://bitbucket.org/team/guestbook"
	}
	h, rec = testHandler(apps, StaticSecrets{}, nil)
	serve(h, delivery(t, "bitbucket", "repo:push", readFixture(t, "bitbucket-push.json"), ""))
	if diff := cmp.Diff(rec.refreshed(), []string{"elsewhere", "glob", "plain", "source-path"}); diff != "" {
		t.Errorf("refreshed apps without a file list (-got +want):\n%s", diff)
	}
}

func TestLogLinesNameTheDelivery(t *testing.T) {
	var log bytes.Buffer
	h, _ := testHandler(nil, StaticSecrets{KeyGitHub: "s"}, &log)
	serve(h, delivery(t, "github", "push", readFixture(t, "github-push.json"), "wrong"))
	r := delivery(t, "github", "push", readFixture(t, "github-push.json"), "s")
	r.Header.Set("X-GitHub-Delivery", "bad\nid=injected")
	serve(h, r)
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want a refusal and a push logged, got:\n%s", log.String())
	}
	if !strings.Contains(lines[0], "delivery=72d3162e-cc78-11e3-81ab-4c9367dc0958") {
		t.Errorf("refusal without the delivery id: %s", lines[0])
	}
	if strings.Contains(lines[1], "injected") {
		t.Errorf("a delivery id with a newline reached the log: %s", lines[1])
	}
}

// splitQueue is a Queue that takes the apps whose names start with
// "local" and returns the rest, or refuses them all with err.
type splitQueue struct {
	err  error
	took []string
}

func (q *splitQueue) RefreshPushed(_ context.Context, apps []types.NamespacedName) ([]types.NamespacedName, error) {
	if q.err != nil {
		return apps, q.err
	}
	var rest []types.NamespacedName
	for _, k := range apps {
		if strings.HasPrefix(k.Name, "local") {
			q.took = append(q.took, k.Name)
		} else {
			rest = append(rest, k)
		}
	}
	slices.Sort(q.took)
	return rest, nil
}

func TestQueueTakesAppsBeforeTheAnnotation(t *testing.T) {
	c := pushCases[0]
	repo := c.repoForms[0]
	apps := []*v1alpha1.Application{newApp("local-a", repo, ""), newApp("local-b", repo, ""), newApp("remote", repo, "")}
	for _, tc := range []struct {
		name              string
		queue             *splitQueue
		queued, annotated []string
	}{
		{"split", &splitQueue{}, []string{"local-a", "local-b"}, []string{"remote"}},
		{"refused", &splitQueue{err: errors.New("controller stopping")}, nil, []string{"local-a", "local-b", "remote"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx := appindex.New()
			for _, a := range apps {
				idx.Upsert(a)
			}
			rec := &recorder{}
			h := New(Options{Apps: idx, Queue: tc.queue, Refresher: rec, Secrets: secretsFor(c.provider, c.secret), Logger: slog.New(slog.DiscardHandler)})
			if w := serve(h, delivery(t, c.provider, c.event, readFixture(t, c.fixture), c.secret)); w.Code != http.StatusOK {
				t.Fatalf("status %d (%s), want 200", w.Code, w.Body)
			}
			if diff := cmp.Diff(tc.queue.took, tc.queued); diff != "" {
				t.Errorf("queued (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(rec.refreshed(), tc.annotated); diff != "" {
				t.Errorf("annotated (-got +want):\n%s", diff)
			}
		})
	}
}
