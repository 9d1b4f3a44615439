//go:build integration

package resolvers_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// historyCommit is one commit serveHistory makes.
type historyCommit struct {
	author, email, date, message string
	files                        map[string]string
	tag                          string
}

// history is the repository serveHistory serves, oldest commit first.
var history = []historyCommit{
	{"Ana Lyst", "ana@example.com", "2026-01-01T10:00:00Z", "add web\n\nThe first version.", map[string]string{
		"app/web.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {version: \"1\"}\n",
	}, "v1.0.0"},
	{"Bo Ops", "bo@example.com", "2026-01-02T10:00:00Z", "raise web to 2", map[string]string{
		"app/web.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {version: \"2\"}\n",
	}, ""},
	{"Cy Dev", "cy@example.com", "2026-01-03T10:00:00Z", "add api", map[string]string{
		"app/api.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: api}\ndata: {version: \"1\"}\n",
	}, ""},
}

// serveHistory serves the commits of history on branch main over smart
// HTTP on loopback, behind basic auth user:password (see serveRepo), and
// returns the repository URL and the commit SHAs, oldest first.
func serveHistory(t *testing.T, user, password string) (string, []string) {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), gitBin, args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), append([]string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull, "HOME=" + dir}, env...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run(nil, "init", "-q", "-b", "main")
	var shas []string
	for _, c := range history {
		for name, content := range c.files {
			p := filepath.Join(work, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		env := []string{"GIT_AUTHOR_NAME=" + c.author, "GIT_AUTHOR_EMAIL=" + c.email, "GIT_AUTHOR_DATE=" + c.date,
			"GIT_COMMITTER_NAME=ci", "GIT_COMMITTER_EMAIL=ci@example.com", "GIT_COMMITTER_DATE=" + c.date}
		run(env, "add", ".")
		run(env, "commit", "-q", "-m", c.message)
		if c.tag != "" {
			run(env, "tag", c.tag)
		}
		shas = append(shas, run(nil, "rev-parse", "HEAD"))
	}
	return serveRepo(t, work, user, password), shas
}

// serveRepo serves a bare clone of the Git working copy work over smart
// HTTP on loopback, behind basic auth user:password unless user is
// empty, and returns the repository URL.
func serveRepo(t *testing.T, work, user, password string) string {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	clone := exec.CommandContext(t.Context(), gitBin, "clone", "-q", "--bare", work, filepath.Join(root, "apps.git"))
	clone.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "HOME="+root)
	if out, err := clone.CombinedOutput(); err != nil {
		t.Fatalf("git clone --bare %s: %v: %s", work, err, out)
	}
	backend := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"}, Env: []string{
		"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull,
	}}
	var lc net.ListenConfig
	l, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); user != "" && (!ok || u != user || p != password) {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return "http://" + l.Addr().String() + "/apps.git"
}

// addRepoSecret stores the credentials of url in a repository Secret, where
// the API finds them.
func addRepoSecret(t *testing.T, url, user, password string) {
	t.Helper()
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "repo-", Namespace: secretsNS, Labels: map[string]string{"graphcd.io/secret-type": "repository"}},
		StringData: map[string]string{"url": url, "username": user, "password": password},
	}
	created, err := cluster.Client.CoreV1().Secrets(secretsNS).Create(t.Context(), sec, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Secrets(secretsNS).Delete(context.Background(), created.Name, metav1.DeleteOptions{})
	})
	// The store rereads Secrets every few seconds; a parallel test's
	// lookup may have just filled it without this one.
	apiCreds().Invalidate()
}

// manifestSummary is "name=version" for each rendered ConfigMap.
func manifestSummary(t *testing.T, docs []string) []string {
	t.Helper()
	out := []string{}
	for _, d := range docs {
		var cm corev1.ConfigMap
		if err := yaml.Unmarshal([]byte(d), &cm); err != nil {
			t.Fatalf("manifest is not YAML: %v\n%s", err, d)
		}
		out = append(out, cm.Name+"="+cm.Data["version"])
	}
	return out
}

func TestApplicationManifestsAndRevisions(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	const user, password = "deployer", "manifests-pw-0451"
	url, shas := serveHistory(t, user, password)
	addRepoSecret(t, url, user, password)
	for _, p := range []*v1alpha1.AppProject{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deliver"}, Spec: v1alpha1.AppProjectSpec{SourceRepos: []string{url, "https://charts.example.com"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "narrow"}, Spec: v1alpha1.AppProjectSpec{SourceRepos: []string{"https://git.example.com/only/*"}}},
	} {
		if err := kube.Create(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	src := v1alpha1.ApplicationSource{RepoURL: url, Path: "app", TargetRevision: "main"}
	old := src
	old.TargetRevision = "v1.0.0"
	dest := v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"}
	for _, app := range []*v1alpha1.Application{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: v1alpha1.ApplicationSpec{Project: "deliver", Source: &src, Destination: dest}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blocked"}, Spec: v1alpha1.ApplicationSpec{Project: "narrow", Source: &src, Destination: dest}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "multi"}, Spec: v1alpha1.ApplicationSpec{Project: "deliver", Sources: []v1alpha1.ApplicationSource{src, old}, Destination: dest}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "chart"}, Spec: v1alpha1.ApplicationSpec{Project: "deliver", Destination: dest,
			Source: &v1alpha1.ApplicationSource{RepoURL: "https://charts.example.com", Chart: "web", TargetRevision: "1.0.0"}}},
	} {
		if err := kube.Create(t.Context(), app); err != nil {
			t.Fatal(err)
		}
	}
	waitCount(t, ns, 4)

	const manifestsQ = `query($ns: String, $name: String!, $rev: String, $pos: Int) {
  application(name: $name, namespace: $ns) { manifests(revision: $rev, sourcePosition: $pos) }
}`
	manifests := func(name string, rev *string, pos *int) []string {
		t.Helper()
		var got struct{ Application struct{ Manifests []string } }
		data(t, manifestsQ, map[string]any{"ns": ns, "name": name, "rev": rev, "pos": pos}, &got)
		return manifestSummary(t, got.Application.Manifests)
	}
	for _, tc := range []struct {
		name, app string
		rev       *string
		pos       *int
		want      []string
	}{
		{"target revision", "web", nil, nil, []string{"api=1", "web=2"}},
		{"older commit", "web", ptr(shas[0]), nil, []string{"web=1"}},
		{"short SHA", "web", ptr(shas[1][:10]), nil, []string{"web=2"}},
		{"tag", "web", ptr("v1.0.0"), nil, []string{"web=1"}},
		{"every source", "multi", nil, nil, []string{"api=1", "web=2", "web=1"}},
		{"second source at head", "multi", ptr("main"), ptr(2), []string{"api=1", "web=2", "api=1", "web=2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(manifests(tc.app, tc.rev, tc.pos), tc.want); diff != "" {
				t.Errorf("manifests (-got +want):\n%s", diff)
			}
		})
	}

	const revisionsQ = `query($ns: String, $name: String!, $first: Int!) {
  application(name: $name, namespace: $ns) { revisions(first: $first) { sha author { name email } date subject message tags } }
}`
	type revision struct {
		Sha     string
		Author  struct{ Name, Email string }
		Date    string
		Subject string
		Message string
		Tags    []string
	}
	var got struct {
		Application struct{ Revisions []revision }
	}
	data(t, revisionsQ, map[string]any{"ns": ns, "name": "web", "first": 10}, &got)
	var want []revision
	for i := len(history) - 1; i >= 0; i-- {
		c := history[i]
		r := revision{Sha: shas[i], Date: c.date, Message: c.message + "\n", Tags: []string{}}
		r.Author.Name, r.Author.Email = c.author, c.email
		r.Subject, _, _ = strings.Cut(c.message, "\n")
		if c.tag != "" {
			r.Tags = []string{c.tag}
		}
		want = append(want, r)
	}
	if diff := cmp.Diff(got.Application.Revisions, want); diff != "" {
		t.Errorf("revisions (-got +want):\n%s", diff)
	}
	data(t, revisionsQ, map[string]any{"ns": ns, "name": "web", "first": 2}, &got)
	if diff := cmp.Diff(got.Application.Revisions, want[:2]); diff != "" {
		t.Errorf("first 2 revisions (-got +want):\n%s", diff)
	}
	data(t, revisionsQ, map[string]any{"ns": ns, "name": "chart", "first": 10}, &got)
	if len(got.Application.Revisions) != 0 {
		t.Errorf("a chart from a Helm repository has commits: %+v", got.Application.Revisions)
	}

	for _, tc := range []struct {
		name, q string
		vars    map[string]any
		want    string
	}{
		{"unknown revision", manifestsQ, map[string]any{"name": "web", "rev": "no-such-branch"}, "BAD_USER_INPUT"},
		{"hostile revision", manifestsQ, map[string]any{"name": "web", "rev": "--upload-pack=touch /tmp/x"}, "BAD_USER_INPUT"},
		{"range revision", manifestsQ, map[string]any{"name": "web", "rev": "main..HEAD"}, "BAD_USER_INPUT"},
		{"no such source", manifestsQ, map[string]any{"name": "web", "pos": 2}, "BAD_USER_INPUT"},
		{"too many revisions", revisionsQ, map[string]any{"name": "web", "first": 51}, "BAD_USER_INPUT"},
		{"repository not permitted", manifestsQ, map[string]any{"name": "blocked"}, "FORBIDDEN"},
		{"revisions not permitted", revisionsQ, map[string]any{"name": "blocked", "first": 5}, "FORBIDDEN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.vars["ns"] = ns
			_, resp := query(t, tc.q, tc.vars)
			if len(resp.Errors) == 0 {
				t.Fatalf("query succeeded, want %s: %s", tc.want, resp.Data)
			}
			if code, _ := resp.Errors[0].Extensions["code"].(string); code != tc.want {
				t.Errorf("code %q (%s), want %s", code, resp.Errors[0].Message, tc.want)
			}
			if strings.Contains(resp.Errors[0].Message, password) {
				t.Errorf("the repository password reached the client: %s", resp.Errors[0].Message)
			}
		})
	}
}

// A multi-source app's chart reads its values from a Git source through
// $values: the API renders it with the values repository's own
// credentials, and a revision for the ref's position changes the values.
func TestApplicationManifestsRefValues(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	const user, password = "values-bot", "values-pw-7731"
	url, shas := serveHistory(t, user, password)
	addRepoSecret(t, url, user, password)
	// app/web.yaml is a ConfigMap, read here as a values file: its
	// data.version is the value the chart shows.
	charts := reposervertest.ServeChartRepo(t, reposervertest.ConfigMapChart("web", "1.0.0", map[string]string{"version": "{{ .Values.data.version | quote }}"}, nil))
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deliver"}, Spec: v1alpha1.AppProjectSpec{SourceRepos: []string{url, charts}}}
	if err := kube.Create(t.Context(), proj); err != nil {
		t.Fatal(err)
	}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "chart-values"}, Spec: v1alpha1.ApplicationSpec{
		Project: "deliver", Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"},
		Sources: []v1alpha1.ApplicationSource{
			{RepoURL: charts, Chart: "web", TargetRevision: "1.0.0", Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"$values/app/web.yaml"}}},
			{RepoURL: url, TargetRevision: "main", Ref: "values"},
		},
	}}
	if err := kube.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	waitCount(t, ns, 1)
	const q = `query($ns: String, $rev: String, $pos: Int) {
  application(name: "chart-values", namespace: $ns) { manifests(revision: $rev, sourcePosition: $pos) }
}`
	for _, tc := range []struct {
		name string
		rev  *string
		pos  *int
		want []string
	}{
		{"values at their target revision", nil, nil, []string{"web=2"}},
		{"values at the first commit", ptr(shas[0]), ptr(2), []string{"web=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got struct{ Application struct{ Manifests []string } }
			data(t, q, map[string]any{"ns": ns, "rev": tc.rev, "pos": tc.pos}, &got)
			if diff := cmp.Diff(manifestSummary(t, got.Application.Manifests), tc.want); diff != "" {
				t.Errorf("manifests (-got +want):\n%s", diff)
			}
		})
	}
}

// Reading an app's sources needs the get right, which every path to an
// Application already checks: a caller with only the sync right gets no
// app to ask, from a mutation or a query.
func TestApplicationManifestsNeedGet(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	project := "sources-" + ns
	setPolicy(t, ns, fmt.Sprintf(`
p, role:syncer, applications, sync, %[1]s/*, allow
p, role:reader, applications, get, %[1]s/*, allow
p, role:reader, applications, sync, %[1]s/*, allow
g, syncer, role:syncer
g, reader, role:reader
`, project))
	api := authAPI(t, ns, tokenTable{"syncer-token": {Subject: "syncer"}, "reader-token": {Subject: "reader"}}, nil)
	createApps(t, ns, appSpec{name: "shop", project: project})
	waitCount(t, ns, 1)

	const q = `mutation($ns: String) { syncApplication(input: {application: {name: "shop", namespace: $ns}}) { name manifests } }`
	_, errs := ask(t, api, "syncer-token", q, map[string]any{"ns": ns})
	if codeOf(errs) != "NOT_FOUND" {
		t.Errorf("sync right only: errors %+v, want NOT_FOUND", errs)
	}
	// With get, the check passes and the request reaches the render path,
	// which refuses the app's project: the test creates none.
	_, errs = ask(t, api, "reader-token", q, map[string]any{"ns": ns})
	if len(errs) == 0 || !strings.Contains(errs[0].Message, "references project "+project+" which does not exist") {
		t.Errorf("get right: errors %+v, want the render path's refusal of the missing project", errs)
	}
	const revs = `query($ns: String) { application(name: "shop", namespace: $ns) { revisions { sha } } }`
	if data, errs := ask(t, api, "syncer-token", revs, map[string]any{"ns": ns}); len(errs) > 0 || !strings.Contains(string(data), `"application":null`) {
		t.Errorf("query by a caller who may not get the app: data %s, errors %+v; want a null application", data, errs)
	}
}
