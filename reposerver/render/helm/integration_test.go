//go:build integration

package helm

import (
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const (
	testUser     = "chartuser"
	testPassword = "s3cret-pa55word"
)

// commonChart loads testdata's common chart, set to version.
func commonChart(t testing.TB, version string) *chart.Chart {
	t.Helper()
	ch, err := loader.LoadDir(filepath.Join("testdata", "repo", "libs", "common"))
	if err != nil {
		t.Fatal(err)
	}
	ch.Metadata.Version = version
	return ch
}

// packageChart writes ch as a .tgz into dir and returns the file's path.
func packageChart(t testing.TB, ch *chart.Chart, dir string) string {
	t.Helper()
	p, err := chartutil.Save(ch, dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// helmRepo is a Helm HTTP repository over TLS with basic auth, serving the
// charts of dir and an index.yaml with relative chart URLs.
type helmRepo struct {
	srv       *httptest.Server
	dir       string
	indexHits atomic.Int32
	chartHits atomic.Int32
}

func newHelmRepo(t testing.TB, versions ...string) *helmRepo {
	t.Helper()
	r := &helmRepo{dir: t.TempDir()}
	for _, v := range versions {
		packageChart(t, commonChart(t, v), r.dir)
	}
	idx, err := repo.IndexDirectory(r.dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.WriteFile(filepath.Join(r.dir, "index.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := http.FileServer(http.Dir(r.dir))
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); !ok || u != testUser || p != testPassword {
			w.Header().Set("WWW-Authenticate", `Basic realm="charts"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		switch {
		case strings.HasSuffix(req.URL.Path, "/index.yaml"):
			r.indexHits.Add(1)
		case strings.HasSuffix(req.URL.Path, ".tgz"):
			r.chartHits.Add(1)
		}
		files.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func caPEM(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

func (r *helmRepo) pull(t testing.TB, cache, version string) (string, error) {
	t.Helper()
	return Pull(t.Context(), PullRequest{
		RepoURL: r.srv.URL, Chart: "common", Version: version,
		Username: testUser, Password: testPassword, CACert: caPEM(r.srv),
		CacheDir: cache,
	})
}

func chartVersionOf(t testing.TB, dir string) string {
	t.Helper()
	md, err := chartutil.LoadChartfile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return md.Version
}

func TestPullHTTPRepository(t *testing.T) {
	r := newHelmRepo(t, "0.1.0", "0.1.5", "0.2.0", "0.3.0-rc.1")
	cache := t.TempDir()
	tests := []struct {
		version string
		want    string
	}{
		{version: "0.1.0", want: "0.1.0"},
		{version: "~0.1.0", want: "0.1.5"},
		{version: ">=0.1.0 <0.2.0", want: "0.1.5"},
		{version: "", want: "0.2.0"},
		{version: "*", want: "0.2.0"},
		{version: ">=0.3.0-0", want: "0.3.0-rc.1"},
	}
	for _, tc := range tests {
		t.Run(tc.version, func(t *testing.T) {
			dir, err := r.pull(t, cache, tc.version)
			if err != nil {
				t.Fatal(err)
			}
			if got := chartVersionOf(t, dir); got != tc.want {
				t.Errorf("pulled %s, want %s", got, tc.want)
			}
		})
	}

	t.Run("cache reused", func(t *testing.T) {
		index, charts := r.indexHits.Load(), r.chartHits.Load()
		if _, err := r.pull(t, cache, "0.1.0"); err != nil {
			t.Fatal(err)
		}
		if _, err := r.pull(t, cache, "^0.1"); err != nil {
			t.Fatal(err)
		}
		// The exact version needs no index; the range needs the index only.
		got := []int32{r.indexHits.Load() - index, r.chartHits.Load() - charts}
		if diff := cmp.Diff(got, []int32{1, 0}); diff != "" {
			t.Errorf("[index chart] downloads (-got +want):\n%s", diff)
		}
	})

	t.Run("render the pulled chart", func(t *testing.T) {
		dir, err := r.pull(t, cache, "0.2.0")
		if err != nil {
			t.Fatal(err)
		}
		req := render.Request{AppName: "redis", Namespace: "db", Source: v1alpha1.ApplicationSource{
			Helm: &v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{{Name: "greeting", Value: "hi"}}},
		}}
		objs, err := Render(t.Context(), req, ChartSource{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"greeting": "hi", "chartVersion": "0.2.0"}
		if diff := cmp.Diff(configData(t, objs, "redis-common"), want); diff != "" {
			t.Errorf("data (-got +want):\n%s", diff)
		}
	})

	t.Run("wrong password", func(t *testing.T) {
		_, err := Pull(t.Context(), PullRequest{
			RepoURL: r.srv.URL, Chart: "common", Version: "0.1.1",
			Username: testUser, Password: "wrong-password-value", CACert: caPEM(r.srv), CacheDir: t.TempDir(),
		})
		if err == nil || !strings.Contains(err.Error(), "401") {
			t.Fatalf("err = %v, want 401", err)
		}
		if strings.Contains(err.Error(), "wrong-password-value") {
			t.Errorf("error shows the password: %v", err)
		}
	})

	t.Run("credentials in the URL are not shown", func(t *testing.T) {
		u := strings.Replace(r.srv.URL, "https://", "https://"+testUser+":"+testPassword+"@", 1)
		_, err := Pull(t.Context(), PullRequest{RepoURL: u, Chart: "nope", CACert: caPEM(r.srv), CacheDir: t.TempDir()})
		if err == nil || strings.Contains(err.Error(), testPassword) {
			t.Errorf("err = %v, want an error without the password", err)
		}
	})

	t.Run("untrusted certificate", func(t *testing.T) {
		_, err := Pull(t.Context(), PullRequest{RepoURL: r.srv.URL, Chart: "common", Username: testUser, Password: testPassword, CacheDir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("err = %v, want a certificate error", err)
		}
	})

	t.Run("no such version", func(t *testing.T) {
		if _, err := r.pull(t, t.TempDir(), "^9"); err == nil {
			t.Error("pulled a version the repository does not have")
		}
	})
}

func TestPullHTTPDigestMismatch(t *testing.T) {
	r := newHelmRepo(t, "0.1.0")
	idx, err := repo.LoadIndexFile(filepath.Join(r.dir, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	idx.Entries["common"][0].Digest = strings.Repeat("0", 64)
	if err := idx.WriteFile(filepath.Join(r.dir, "index.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = r.pull(t, t.TempDir(), "0.1.0")
	if err == nil || !strings.Contains(err.Error(), "digest mismatch") {
		t.Errorf("err = %v, want digest mismatch", err)
	}
}

func TestPullHTTPGzipBomb(t *testing.T) {
	r := newHelmRepo(t)
	// 120 MiB of zeros (over the default 100 MiB unpacked limit) in files
	// under the per-file limit, compressing to a few hundred KiB.
	entries := []reposervertest.TarEntry{{Name: "bomb/Chart.yaml", Body: "apiVersion: v2\nname: bomb\nversion: 1.0.0\n"}}
	for i := range 30 {
		entries = append(entries, reposervertest.TarEntry{Name: fmt.Sprintf("bomb/files/%02d.bin", i), Size: 4 << 20})
	}
	archive := reposervertest.TarGz(t, entries...)
	if err := os.WriteFile(filepath.Join(r.dir, "bomb-1.0.0.tgz"), archive, 0o600); err != nil {
		t.Fatal(err)
	}
	idx := repo.NewIndexFile()
	if err := idx.MustAdd(&chart.Metadata{APIVersion: "v2", Name: "bomb", Version: "1.0.0"}, "bomb-1.0.0.tgz", "", ""); err != nil {
		t.Fatal(err)
	}
	if err := idx.WriteFile(filepath.Join(r.dir, "index.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	if int64(len(archive)) > DefaultMaxChartSize {
		t.Fatalf("bomb archive is %d bytes, meant to be small", len(archive))
	}

	cache := t.TempDir()
	_, err := Pull(t.Context(), PullRequest{
		RepoURL: r.srv.URL, Chart: "bomb", Version: "1.0.0",
		Username: testUser, Password: testPassword, CACert: caPEM(r.srv), CacheDir: cache,
	})
	if !errors.Is(err, ErrDownloadTooLarge) {
		t.Fatalf("err = %v, want ErrDownloadTooLarge", err)
	}
	left, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("cache holds %d entries after a refused chart", len(left))
	}
}

func TestPullHTTPEndlessIndex(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := []byte("# " + strings.Repeat("x", 4093) + "\n")
		_, _ = w.Write([]byte("apiVersion: v1\n"))
		// Bounded at 1 GiB, and ends as soon as the client goes away.
		for i := 0; i < 1<<18 && r.Context().Err() == nil; i++ {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	_, err := Pull(t.Context(), PullRequest{
		RepoURL: srv.URL, Chart: "any", CacheDir: t.TempDir(),
		Limits: DownloadLimits{MaxIndexSize: 1 << 20},
	})
	if !errors.Is(err, ErrDownloadTooLarge) {
		t.Errorf("err = %v, want ErrDownloadTooLarge", err)
	}
}

// ociRegistry runs a distribution registry with htpasswd auth over TLS in
// the test process and returns it with its host:port.
func ociRegistry(t testing.TB) (*httptest.Server, string) {
	t.Helper()
	r := reposervertest.ServeRegistry(t, testUser, testPassword, nil)
	return r.Server, r.Host
}

// pushChart pushes ch with Helm's registry client, as `helm push` does.
func pushChart(t testing.TB, srv *httptest.Server, host string, ch *chart.Chart) {
	t.Helper()
	client, err := registry.NewClient(
		registry.ClientOptHTTPClient(srv.Client()),
		registry.ClientOptBasicAuth(testUser, testPassword),
		registry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "config.json")),
	)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(packageChart(t, ch, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	ref := fmt.Sprintf("%s/charts/%s:%s", host, ch.Name(), ch.Metadata.Version)
	if _, err := client.Push(data, ref); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
}

func TestPullOCIRegistry(t *testing.T) {
	srv, host := ociRegistry(t)
	for _, v := range []string{"0.1.0", "0.1.5", "0.2.0"} {
		pushChart(t, srv, host, commonChart(t, v))
	}
	cache := t.TempDir()
	pull := func(t *testing.T, repoURL, chartName, version string, enableOCI bool, password string) (string, error) {
		return Pull(t.Context(), PullRequest{
			RepoURL: repoURL, Chart: chartName, Version: version, EnableOCI: enableOCI,
			Username: testUser, Password: password, CACert: caPEM(srv), CacheDir: cache,
		})
	}
	tests := []struct {
		name      string
		repoURL   string
		chartName string
		version   string
		enableOCI bool
		want      string
	}{
		{name: "oci scheme exact", repoURL: "oci://" + host + "/charts", chartName: "common", version: "0.1.0", want: "0.1.0"},
		{name: "oci scheme range", repoURL: "oci://" + host + "/charts", chartName: "common", version: "~0.1", want: "0.1.5"},
		{name: "latest", repoURL: "oci://" + host + "/charts", chartName: "common", want: "0.2.0"},
		{name: "full reference", repoURL: "oci://" + host + "/charts/common", version: "0.1.5", want: "0.1.5"},
		{name: "no scheme with enableOCI", repoURL: host + "/charts", chartName: "common", version: "0.2.0", enableOCI: true, want: "0.2.0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := pull(t, tc.repoURL, tc.chartName, tc.version, tc.enableOCI, testPassword)
			if err != nil {
				t.Fatal(err)
			}
			if got := chartVersionOf(t, dir); got != tc.want {
				t.Errorf("pulled %s, want %s", got, tc.want)
			}
		})
	}

	t.Run("render the pulled chart", func(t *testing.T) {
		dir, err := pull(t, "oci://"+host+"/charts", "common", "0.1.0", false, testPassword)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := Render(t.Context(), render.Request{AppName: "oci", Namespace: "ns"}, ChartSource{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"greeting": "hello", "chartVersion": "0.1.0"}
		if diff := cmp.Diff(configData(t, objs, "oci-common"), want); diff != "" {
			t.Errorf("data (-got +want):\n%s", diff)
		}
	})

	t.Run("wrong password", func(t *testing.T) {
		_, err := Pull(t.Context(), PullRequest{
			RepoURL: "oci://" + host + "/charts", Chart: "common", Version: "0.1.1",
			Username: testUser, Password: "wrong-password-value", CACert: caPEM(srv), CacheDir: t.TempDir(),
		})
		if err == nil {
			t.Fatal("pulled with a wrong password")
		}
		if strings.Contains(err.Error(), "wrong-password-value") {
			t.Errorf("error shows the password: %v", err)
		}
	})

	t.Run("missing tag", func(t *testing.T) {
		if _, err := pull(t, "oci://"+host+"/charts", "common", "9.9.9", false, testPassword); err == nil {
			t.Error("pulled a tag the registry does not have")
		}
	})
}

func TestRenderDependenciesFromRepositories(t *testing.T) {
	r := newHelmRepo(t, "0.1.0", "0.2.0")
	ociSrv, ociHost := ociRegistry(t)
	other := commonChart(t, "1.0.0")
	other.Metadata.Name = "other"
	pushChart(t, ociSrv, ociHost, other)

	root := t.TempDir()
	chartDir := filepath.Join(root, "apps", "web")
	writeFile(t, filepath.Join(chartDir, "Chart.yaml"), fmt.Sprintf(`apiVersion: v2
name: web
version: 1.0.0
dependencies:
  - name: common
    version: ">=0.1.0"
    repository: %s
  - name: other
    version: "^1"
    repository: oci://%s/charts
    alias: extra
`, r.srv.URL, ociHost))
	writeFile(t, filepath.Join(chartDir, "values.yaml"), "common:\n  greeting: from web\nextra:\n  greeting: from alias\n")

	creds := func(repoURL string) *Credentials {
		switch {
		case repoURL == r.srv.URL:
			return &Credentials{Username: testUser, Password: testPassword, CACert: caPEM(r.srv)}
		case strings.Contains(repoURL, ociHost):
			return &Credentials{Username: testUser, Password: testPassword, CACert: caPEM(ociSrv)}
		}
		return nil
	}
	req := render.Request{RepoRoot: root, Path: "apps/web", AppName: "web", Namespace: "ns"}
	src := ChartSource{Dependencies: Dependencies{CacheDir: t.TempDir(), Credentials: creds}}

	objs, err := Render(t.Context(), req, src)
	if err != nil {
		t.Fatal(err)
	}
	// Both charts name their ConfigMap after the release; the alias renders
	// "other" with the values under "extra".
	var got []string
	for _, o := range objs {
		data, _, _ := unstructured.NestedStringMap(o.Object, "data")
		got = append(got, o.GetKind()+"/"+o.GetName()+" "+data["greeting"]+" "+data["chartVersion"])
	}
	sort.Strings(got)
	want := []string{"ConfigMap/web-common from alias 1.0.0", "ConfigMap/web-common from web 0.2.0"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("objects (-got +want):\n%s", diff)
	}

	// Chart.lock pins the version the range would not pick.
	writeFile(t, filepath.Join(chartDir, "Chart.lock"), fmt.Sprintf(`dependencies:
- name: common
  repository: %s
  version: 0.1.0
digest: sha256:0000000000000000000000000000000000000000000000000000000000000000
generated: "2026-01-01T00:00:00Z"
`, r.srv.URL))
	objs, err = Render(t.Context(), req, src)
	if err != nil {
		t.Fatal(err)
	}
	if got := configData(t, objs, "web-common")["chartVersion"]; got != "0.1.0" {
		t.Errorf("locked dependency rendered version %s, want 0.1.0", got)
	}

	// The checkout is left as it was: no charts/ directory appears.
	if _, err := os.Stat(filepath.Join(chartDir, "charts")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("charts/ written into the checkout (stat err %v)", err)
	}
}
