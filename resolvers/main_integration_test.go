//go:build integration

package resolvers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver"
	"github.com/graphcd/graphcd/apiserver/actioncfg"
	"github.com/graphcd/graphcd/apiserver/appindex"
	"github.com/graphcd/graphcd/apiserver/appops"
	"github.com/graphcd/graphcd/apiserver/catalog"
	"github.com/graphcd/graphcd/apiserver/secretops"
	"github.com/graphcd/graphcd/config/crd"
	"github.com/graphcd/graphcd/controller/manifests"
	"github.com/graphcd/graphcd/controller/project"
	"github.com/graphcd/graphcd/internal/appstate"
	"github.com/graphcd/graphcd/internal/clusters"
	"github.com/graphcd/graphcd/internal/eventbus"
	"github.com/graphcd/graphcd/internal/kubewatch"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/testenv/localredis"
	"github.com/graphcd/graphcd/reposerver/inproc"
	"github.com/graphcd/graphcd/reposerver/repocreds"
	"github.com/graphcd/graphcd/resolvers"
)

// The shared fixtures: one local cluster, a client for Applications, and
// one API server watching every namespace (tests isolate by namespace).
var (
	cluster *localcluster.Cluster
	kube    client.Client
	apiURL  string
	index   *appindex.Index
	objects *catalog.Catalog
	// secretsNS holds the cluster and repository Secrets the API lists.
	secretsNS   string
	clusterList *catalog.Clusters
	repoList    *catalog.Repositories
	kubeEvents  *catalog.Events
	// states is where tests put what the controller would write.
	states     = &countingStates{Memory: appstate.NewMemory()}
	repoTester *inproc.Local
	// eventLists counts the API's requests for Events.
	eventLists atomic.Int64
	// events is the API's event bus; tests publish on it as the
	// controller would.
	events   *eventbus.Memory
	redisSrv *localredis.Server
)

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Minimal}, &cluster, startRedis, startAPI))
}

// startAPI installs the CRDs and serves the API from an index of every
// namespace's Applications.
func startAPI(c *localcluster.Cluster) (func(), error) {
	ctx, cancel := context.WithCancel(context.Background())
	fail := func(err error) (func(), error) { cancel(); return nil, err }
	if err := crd.Install(ctx, apiextensionsclientset.NewForConfigOrDie(c.Config)); err != nil {
		return fail(err)
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return fail(err)
	}
	if err := corev1.AddToScheme(scheme); err != nil {
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
	objects, index, events = cat, cat.Apps, eventbus.NewMemory()
	secretsNS = "graphcd-api"
	for _, name := range []string{secretsNS, "graphcd"} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return fail(err)
		}
	}
	// The default project, as the controller creates it at start: the
	// project of apps that name none, in every test namespace.
	def := project.DefaultProject()
	def.Namespace = "graphcd"
	if err := kube.Create(ctx, def); err != nil {
		return fail(err)
	}
	work, err := os.MkdirTemp("", "graphcd-api-repo-")
	if err != nil {
		return fail(err)
	}
	if repoTester, err = inproc.New(inproc.Options{WorkDir: work}); err != nil {
		return fail(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	registry, err := clusters.New(clusters.Options{Client: c.Client, Namespace: secretsNS, InCluster: c.Config, Logger: quiet})
	if err != nil {
		return fail(err)
	}
	if clusterList, err = catalog.StartClusters(ctx, registry, quiet); err != nil {
		return fail(err)
	}
	repoList = catalog.NewRepositories(c.Client, secretsNS)
	counted := rest.CopyConfig(c.Config)
	counted.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if strings.HasSuffix(req.URL.Path, "/events") {
				eventLists.Add(1)
			}
			return rt.RoundTrip(req)
		})
	}
	kubeEvents = catalog.NewEvents(kubernetes.NewForConfigOrDie(counted))
	ts, err := newAPI(events)
	if err != nil {
		return fail(err)
	}
	apiURL = ts.URL
	return func() { ts.Close(); cancel() }, nil
}

// apiCreds is the repository credential store every API newAPI serves
// shares.
var apiCreds = sync.OnceValue(func() *repocreds.Store { return repocreds.New(cluster.Client, secretsNS) })

// apiSettings follows graphcd-cm of secretsNS for every API the tests
// serve, as one server process does.
var apiSettings = sync.OnceValues(func() (*catalog.Settings, error) {
	s := catalog.NewSettings(kubewatch.NewSource(context.Background(), cluster.Client, secretsNS))
	s.Followers = []func(map[string]string){apiActions.Update}
	return s, s.Start(context.Background())
})

// apiActions are the resource actions of that graphcd-cm.
var apiActions = &actioncfg.Source{}

// newAPI serves the API over the shared index with events from bus.
func newAPI(bus resolvers.EventSource) (*httptest.Server, error) {
	opts, err := apiOptions(bus)
	if err != nil {
		return nil, err
	}
	return serveAPI(opts)
}

// serveAPIWith serves an API like newAPI, with edit's changes to its
// options, until the test ends.
func serveAPIWith(t *testing.T, bus resolvers.EventSource, edit func(*apiserver.Options)) *httptest.Server {
	t.Helper()
	opts, err := apiOptions(bus)
	if err != nil {
		t.Fatal(err)
	}
	edit(&opts)
	ts, err := serveAPI(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.Close)
	return ts
}

// apiOptions are the options of an API over the shared fixtures with
// events from bus, as graphcd server sets them, without authentication.
func apiOptions(bus resolvers.EventSource) (apiserver.Options, error) {
	creds := apiCreds()
	settings, err := apiSettings()
	if err != nil {
		return apiserver.Options{}, err
	}
	return apiserver.Options{
		Listen: "127.0.0.1:0",
		API: resolvers.Config{
			Apps: index, Projects: objects, Namespace: "graphcd",
			Clusters: clusterList, Repositories: repoList, KubeEvents: kubeEvents,
			ProjectWriter: appops.Service{Client: kube}, RepoTester: repoTester, States: states, Logs: fakeLogs{},
			Settings: settings, Resources: catalog.NewResources(clusterList),
			Secrets: secretops.Service{Client: cluster.Client, Namespace: secretsNS},
			Writer:  appops.Service{Client: kube}, Events: bus,
			AppSets: objects, AppSetWriter: appops.Service{Client: kube}, AppSetSources: &resolvers.GeneratorSources{Client: kube}, Links: settings, Actions: apiActions,
			AppEvents: kubeEvents, Repo: repoTester, RepoCreds: creds,
			Manifests: &manifests.Renderer{Repo: repoTester, Credentials: creds.Lookup, Keys: kube},
		},
	}, nil
}

// serveAPI serves apiserver.New(opts) over httptest.
func serveAPI(opts apiserver.Options) (*httptest.Server, error) {
	srv, err := apiserver.New(opts)
	if err != nil {
		return nil, err
	}
	return httptest.NewServer(srv.Handler()), nil
}

// startRedis runs the Redis the tests of several API replicas share.
func startRedis(*localcluster.Cluster) (func(), error) {
	srv, err := localredis.Start(context.Background())
	if err != nil {
		return nil, err
	}
	redisSrv = srv
	return func() { _ = srv.Stop() }, nil
}

// response is a GraphQL response with the data left raw.
type response struct {
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

// query posts a GraphQL request and returns the HTTP status and response.
func query(t *testing.T, q string, vars map[string]any) (int, response) {
	t.Helper()
	return queryAt(t, apiURL, "", q, vars)
}

// queryAt posts a GraphQL request to the API at base, with token as the
// bearer token unless empty.
func queryAt(t *testing.T, base, token, q string, vars map[string]any) (int, response) {
	t.Helper()
	return queryFrom(t, base, token, "", q, vars)
}

// queryFrom is queryAt through a proxy: it sends X-Forwarded-For xff when
// not empty.
func queryFrom(t *testing.T, base, token, xff, q string, vars map[string]any) (int, response) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": q, "variables": vars})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/api/graphql", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out response
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, raw)
	}
	return resp.StatusCode, out
}

// data runs a query that must succeed and decodes its data into out.
func data(t *testing.T, q string, vars map[string]any, out any) {
	t.Helper()
	code, resp := query(t, q, vars)
	if code != http.StatusOK || len(resp.Errors) > 0 {
		t.Fatalf("query failed: HTTP %d, errors %+v", code, resp.Errors)
	}
	if err := json.Unmarshal(resp.Data, out); err != nil {
		t.Fatalf("decode data: %v\n%s", err, resp.Data)
	}
}

// errorCode runs a query that must fail and returns the code of its first
// error.
func errorCode(t *testing.T, q string, vars map[string]any) string {
	t.Helper()
	_, resp := query(t, q, vars)
	if len(resp.Errors) == 0 {
		t.Fatalf("query succeeded, want an error: %s", resp.Data)
	}
	code, _ := resp.Errors[0].Extensions["code"].(string)
	return code
}

// eventually retries check until it returns nil or a minute passes.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func ptr[T any](v T) *T { return &v }

// errNotYet tells eventually to try again.
var errNotYet = errors.New("not yet")

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// countingStates counts batch reads of application states, per
// namespace of the apps read.
type countingStates struct {
	*appstate.Memory
	mu      sync.Mutex
	batches map[string]int
}

func (c *countingStates) GetMany(ctx context.Context, apps []types.NamespacedName) ([]*appstate.State, error) {
	c.mu.Lock()
	if c.batches == nil {
		c.batches = map[string]int{}
	}
	seen := map[string]bool{}
	for _, a := range apps {
		if !seen[a.Namespace] {
			seen[a.Namespace] = true
			c.batches[a.Namespace]++
		}
	}
	c.mu.Unlock()
	return c.Memory.GetMany(ctx, apps)
}

// reads returns how many batch reads included apps of ns.
func (c *countingStates) reads(ns string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.batches[ns]
}
