//go:build integration

package webhook

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appops"
	"github.com/graphcd/graphcd/apiserver/catalog"
	"github.com/graphcd/graphcd/config/crd"
	"github.com/graphcd/graphcd/controller/appset"
	"github.com/graphcd/graphcd/internal/kubewatch"
	giteaforge "github.com/graphcd/graphcd/internal/testenv/gitea"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// The shared fixtures: one local control plane, a client for
// Applications and a catalog of every namespace's Applications (tests
// isolate by namespace).
var (
	cluster *localcluster.Cluster
	kube    client.Client
	objects *catalog.Catalog
)

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Minimal}, &cluster, startCatalog))
}

func startCatalog(c *localcluster.Cluster) (func(), error) {
	ctx, cancel := context.WithCancel(context.Background())
	fail := func(err error) (func(), error) { cancel(); return nil, err }
	if err := crd.Install(ctx, apiextensionsclientset.NewForConfigOrDie(c.Config)); err != nil {
		return fail(err)
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return fail(err)
	}
	var err error
	if kube, err = client.New(c.Config, client.Options{Scheme: scheme}); err != nil {
		return fail(err)
	}
	cat, ready, err := catalog.Start(ctx, c.Config, "", nil)
	if err != nil {
		return fail(err)
	}
	select {
	case <-ready:
	case <-time.After(time.Minute):
		return fail(fmt.Errorf("application index did not sync"))
	}
	objects = cat
	return cancel, nil
}

// createNamespace makes a namespace for one test.
func createNamespace(t *testing.T, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cluster.Client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// writeSecret creates or replaces graphcd-secret in namespace with data.
func writeSecret(t *testing.T, namespace string, data map[string]string) {
	t.Helper()
	secrets := cluster.Client.CoreV1().Secrets(namespace)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: SecretName}, StringData: data}
	_, err := secrets.Update(t.Context(), s, metav1.UpdateOptions{})
	if err != nil {
		_, err = secrets.Create(t.Context(), s, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// eventually polls cond until it holds; the test's own deadline bounds
// the wait.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-t.Context().Done():
			t.Fatalf("test ended waiting until %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// startHandler serves the webhook over HTTP with the secrets of
// graphcd-secret in secretsNS.
func startHandler(t *testing.T, secretsNS string) string {
	t.Helper()
	watch := NewSecretWatch(kubewatch.NewSource(t.Context(), cluster.Client, secretsNS))
	if err := watch.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	h := New(Options{Apps: objects.Apps, Refresher: appops.Service{Client: kube}, Secrets: watch, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// post sends r to the handler at url.
func post(t *testing.T, url string, r *http.Request) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, r.Body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = r.Header
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}

func TestPushSetsRefreshAnnotation(t *testing.T) {
	secretsNS := "webhook-secrets"
	createNamespace(t, secretsNS)
	data := map[string]string{}
	for _, c := range pushCases {
		for k, v := range secretsFor(c.provider, c.secret) {
			data[k] = v
		}
	}
	writeSecret(t, secretsNS, data)
	url := startHandler(t, secretsNS)

	for _, c := range pushCases {
		t.Run(c.provider, func(t *testing.T) {
			ns := "webhook-" + c.provider
			createNamespace(t, ns)
			apps := appsFor(c)
			for _, a := range apps {
				app := newApp(a.name, a.repoURL, a.target)
				app.Namespace = ns
				app.Spec.Destination = v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "default"}
				if err := kube.Create(t.Context(), app); err != nil {
					t.Fatal(err)
				}
			}
			eventually(t, "the index holds the apps", func() bool {
				for _, a := range apps {
					if objects.Apps.Get(types.NamespacedName{Namespace: ns, Name: a.name}) == nil {
						return false
					}
				}
				return true
			})

			// A forged delivery changes nothing.
			if got := post(t, url, delivery(t, c.provider, c.event, readFixture(t, c.fixture), wrongSecret(c.provider))); got != http.StatusUnauthorized {
				t.Fatalf("forged delivery: status %d, want 401", got)
			}
			checkRefreshed(t, ns, apps, func(fixtureApp) bool { return false })

			if got := post(t, url, delivery(t, c.provider, c.event, readFixture(t, c.fixture), c.secret)); got != http.StatusOK {
				t.Fatalf("status %d, want 200", got)
			}
			checkRefreshed(t, ns, apps, func(a fixtureApp) bool { return a.want })
		})
	}
}

// checkRefreshed reads each app from the API server and checks it has
// the refresh annotation exactly when want says so.
func checkRefreshed(t *testing.T, ns string, apps []fixtureApp, want func(fixtureApp) bool) {
	t.Helper()
	for _, a := range apps {
		got := &v1alpha1.Application{}
		if err := kube.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: a.name}, got); err != nil {
			t.Fatal(err)
		}
		v, has := got.Annotations[v1alpha1.ArgoRefreshAnnotation]
		switch {
		case want(a) && v != v1alpha1.RefreshNormal:
			t.Errorf("app %s (%s at %q): refresh annotation %q, want %q", a.name, a.repoURL, a.target, v, v1alpha1.RefreshNormal)
		case !want(a) && has:
			t.Errorf("app %s (%s at %q) was refreshed", a.name, a.repoURL, a.target)
		}
	}
}

func TestSecretChangesApplyWithoutRestart(t *testing.T) {
	ns := "webhook-rotate"
	createNamespace(t, ns)
	url := startHandler(t, ns)
	body := readFixture(t, "github-ping.json")

	// No Secret yet: accepted without a check.
	if got := post(t, url, delivery(t, "github", "ping", body, "")); got != http.StatusOK {
		t.Fatalf("no secret configured: status %d, want 200", got)
	}
	writeSecret(t, ns, map[string]string{KeyGitHub: "first\n"})
	eventually(t, "an unsigned delivery is refused", func() bool {
		return post(t, url, delivery(t, "github", "ping", body, "")) == http.StatusUnauthorized
	})
	if got := post(t, url, delivery(t, "github", "ping", body, "first")); got != http.StatusOK {
		t.Fatalf("signed with the secret: status %d, want 200", got)
	}
	writeSecret(t, ns, map[string]string{KeyGitHub: "second"})
	eventually(t, "the old secret is refused", func() bool {
		return post(t, url, delivery(t, "github", "ping", body, "first")) == http.StatusUnauthorized
	})
	if got := post(t, url, delivery(t, "github", "ping", body, "second")); got != http.StatusOK {
		t.Fatalf("signed with the new secret: status %d, want 200", got)
	}
}

// TestPushReachesInProcessController posts a push to a real graphcd
// server running its controller: the matched apps are handed to the
// controller's queue (the log says queued, none annotated), and a
// subscriber sees each of them go OutOfSync with the pushed change.
func TestPushReachesInProcessController(t *testing.T) {
	const n = 3
	repo := newMonorepo(t, n)
	srv := startGraphcdServer(t)
	createBenchApps(t, srv.ns, cluster.Namespace(t), repo.url, n)
	api := srv.login(t)
	waitSynced(t, srv.ns, repo.head, n)
	setAutoSync(t, srv.ns, n, false)

	events := subscribeSyncEvents(t, api)
	defer events.stop()
	repo.commitAll(t, n, 1)
	if code := postPush(t, srv.base+"/api/webhook", repo, n); code != http.StatusOK {
		t.Fatalf("webhook: status %d, want 200", code)
	}
	if got := events.collect(t, n, time.Now()); len(got) != n {
		t.Fatalf("%d of %d apps went OutOfSync", len(got), n)
	}
	if logs := srv.logs.String(); !strings.Contains(logs, "matched=3 queued=3 annotated=0 failed=0") {
		t.Errorf("the webhook's log line does not say all 3 apps were queued:\n%s", srv.logs.tail(4000))
	}
}

// TestMaxPayloadFromConfigMap: graphcd-cm's webhook.maxPayloadSizeMB (Argo
// CD's key) sets the body limit.
func TestMaxPayloadFromConfigMap(t *testing.T) {
	ns := "webhook-limit"
	createNamespace(t, ns)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "graphcd-cm"}, Data: map[string]string{"webhook.maxPayloadSizeMB": "1"}}
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	limits := catalog.NewSettings(kubewatch.NewSource(t.Context(), cluster.Client, ns))
	if err := limits.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	h := New(Options{Apps: objects.Apps, Refresher: appops.Service{Client: kube}, Secrets: StaticSecrets{},
		Limits: limits, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	ping := readFixture(t, "github-ping.json")
	if got := post(t, srv.URL, delivery(t, "github", "ping", ping, "")); got != http.StatusOK {
		t.Fatalf("a small delivery: status %d, want 200", got)
	}
	big := append(bytes.Repeat([]byte(" "), 3<<19), ping...) // 1.5 MiB of JSON whitespace, then the ping
	if got := post(t, srv.URL, delivery(t, "github", "ping", big, "")); got != http.StatusRequestEntityTooLarge {
		t.Fatalf("a 1.5 MiB delivery with a 1 MB limit: status %d, want 413", got)
	}
}

// A push annotates the ApplicationSets whose git generators (nested in a
// matrix too) read the pushed repository at a pushed branch, and no
// other.
func TestPushRefreshesApplicationSets(t *testing.T) {
	const ns = "webhook-sets"
	createNamespace(t, ns)
	gh := pushCases[0]
	gen := func(repoURL, revision string) v1alpha1.ApplicationSetGenerator {
		return v1alpha1.ApplicationSetGenerator{Git: &v1alpha1.GitGenerator{RepoURL: repoURL, Revision: revision, Directories: []v1alpha1.GitDirectoryGeneratorItem{{Path: "*"}}}}
	}
	nestedGit := func(repoURL string) v1alpha1.ApplicationSetGenerator {
		return v1alpha1.ApplicationSetGenerator{Matrix: &v1alpha1.MatrixGenerator{Generators: []v1alpha1.ApplicationSetNestedGenerator{
			{List: &v1alpha1.ListGenerator{}},
			{Git: &v1alpha1.GitGenerator{RepoURL: repoURL, Directories: []v1alpha1.GitDirectoryGeneratorItem{{Path: "*"}}}},
		}}}
	}
	sets := map[string]struct {
		gen  v1alpha1.ApplicationSetGenerator
		want bool
	}{
		"pushed-branch": {gen(gh.repoForms[1], "main"), true},
		"nested":        {nestedGit(gh.repoForms[0]), true},
		"other-branch":  {gen(gh.repoForms[0], "develop"), false},
		"other-repo":    {gen(gh.otherRepo, "main"), false},
	}
	for name, s := range sets {
		set := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.ApplicationSetSpec{Generators: []v1alpha1.ApplicationSetGenerator{s.gen}}}
		if err := kube.Create(t.Context(), set); err != nil {
			t.Fatal(err)
		}
	}
	h := New(Options{Apps: objects.Apps, Refresher: appops.Service{Client: kube}, Secrets: StaticSecrets{}, Sets: appset.PushRefresher{Client: kube, Namespace: ns},
		Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	if got := post(t, srv.URL, delivery(t, gh.provider, gh.event, readFixture(t, gh.fixture), "")); got != http.StatusOK {
		t.Fatalf("status %d, want 200", got)
	}
	for name, s := range sets {
		var got v1alpha1.ApplicationSet
		if err := kube.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: name}, &got); err != nil {
			t.Fatal(err)
		}
		if refreshed := got.Annotations[appset.RefreshAnnotation] == "true"; refreshed != s.want {
			t.Errorf("set %s refreshed = %v, want %v", name, refreshed, s.want)
		}
	}
}

// A real Gitea's pull request webhook refreshes the sets whose pull
// request generators list that repository's pull requests, and no other.
func TestGiteaPullRequestRefreshesApplicationSets(t *testing.T) {
	const ns = "webhook-pr-sets"
	createNamespace(t, ns)
	forge, err := giteaforge.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := forge.Stop(); err != nil {
			t.Error(err)
		}
	})
	ctx := t.Context()
	if err := forge.CreateOrg(ctx, "fleet"); err != nil {
		t.Fatal(err)
	}
	for _, repo := range []string{"web", "other"} {
		if _, err := forge.CreateRepo(ctx, "fleet", repo); err != nil {
			t.Fatal(err)
		}
	}
	for name, repo := range map[string]string{"web-previews": "web", "other-previews": "other"} {
		set := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.ApplicationSetSpec{
			Generators: []v1alpha1.ApplicationSetGenerator{{PullRequest: &runtime.RawExtension{Raw: []byte(`{"gitea":{"owner":"fleet","repo":"` + repo + `","api":"` + forge.URL + `"}}`)}}},
		}}
		if err := kube.Create(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	const secret = "pr-hook-secret"
	h := New(Options{Apps: objects.Apps, Refresher: appops.Service{Client: kube}, Secrets: StaticSecrets{KeyGogs: secret},
		Sets: appset.PushRefresher{Client: kube, Namespace: ns}, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	hook := map[string]any{"type": "gitea", "active": true, "events": []string{"pull_request"},
		"config": map[string]string{"url": srv.URL + "/api/webhook", "content_type": "json", "secret": secret}}
	if err := forge.Do(ctx, http.MethodPost, "/repos/fleet/web/hooks", hook, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := forge.CommitFile(ctx, "fleet", "web", "feature", "main", "CHANGE.md", "a change\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := forge.OpenPullRequest(ctx, "fleet", "web", "feature", "main", "A change"); err != nil {
		t.Fatal(err)
	}
	refreshed := func(name string) bool {
		var got v1alpha1.ApplicationSet
		if err := kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &got); err != nil {
			t.Fatal(err)
		}
		return got.Annotations[appset.RefreshAnnotation] == "true"
	}
	deadline := time.Now().Add(time.Minute)
	for !refreshed("web-previews") {
		if time.Now().After(deadline) {
			t.Fatal("Gitea's pull request webhook never refreshed the set of its repository")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if refreshed("other-previews") {
		t.Error("the set of another repository was refreshed too")
	}
}
