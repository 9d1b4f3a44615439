//go:build integration

package inproc_test

import (
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/inproc"
	"github.com/graphcd/graphcd/reposerver/render"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// Value files at a URL are fetched over HTTPS (and HTTP, Argo CD's
// default schemes), with no credentials, whether the chart comes from Git
// or from a private Helm repository; the build environment expands in
// the URL; helm.valuesFileSchemes narrows the schemes; metadata
// addresses, other schemes and oversized files are refused.
func TestGenerateManifestsRemoteValueFiles(t *testing.T) {
	var mu sync.Mutex
	var credentials []string
	files := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if a := r.Header.Get("Authorization"); a != "" {
			credentials = append(credentials, a)
		}
		mu.Unlock()
		switch r.URL.Path {
		case "/prod.yaml":
			_, _ = w.Write([]byte("replicas: 8\n"))
		case "/guestbook.yaml":
			_, _ = w.Write([]byte("replicas: 9\n"))
		case "/big.yaml":
			_, _ = w.Write([]byte("big: \"" + strings.Repeat("x", 11<<20) + "\"\n"))
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/iam", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	})
	tlsSrv := httptest.NewTLSServer(files)
	t.Cleanup(tlsSrv.Close)
	plain := httptest.NewServer(files)
	t.Cleanup(plain.Close)
	l, err := inproc.New(inproc.Options{WorkDir: t.TempDir(), AllowFileURLs: true, RootCAs: poolOf(tlsSrv)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)

	gitURL, _ := newRepo(t)
	fromGit := func(valueFiles ...string) reposerver.ManifestRequest {
		return reposerver.ManifestRequest{
			Repo: reposerver.Repository{URL: gitURL, Credentials: &reposerver.Credentials{Username: "git", Password: "git-secret"}},
			Source: v1alpha1.ApplicationSource{RepoURL: gitURL, Path: "apps/chart", TargetRevision: "main",
				Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: valueFiles}},
			AppName: "guestbook", Namespace: "demo",
		}
	}
	if got := replicas(t, l, fromGit(tlsSrv.URL+"/prod.yaml")); got != "8" {
		t.Errorf("https value file: replicas = %q, want 8", got)
	}
	if got := replicas(t, l, fromGit("values.yaml", tlsSrv.URL+"/$ARGOCD_APP_NAME.yaml")); got != "9" {
		t.Errorf("value file URL with the build environment: replicas = %q, want 9", got)
	}
	if got := replicas(t, l, fromGit(plain.URL+"/prod.yaml")); got != "8" {
		t.Errorf("http value file: replicas = %q, want 8", got)
	}

	// A chart from a private Helm repository: its credentials stay with it.
	chartRepo := reposervertest.ServePrivateChartRepo(t, "charts", "chart-secret",
		reposervertest.ConfigMapChart("web", "1.0.0", map[string]string{"replicas": "{{ .Values.replicas | quote }}"}, map[string]any{"replicas": 1}))
	chartReq := reposerver.ManifestRequest{
		Repo: reposerver.Repository{URL: chartRepo, Type: reposerver.RepoTypeHelm, Credentials: &reposerver.Credentials{Username: "charts", Password: "chart-secret"}},
		Source: v1alpha1.ApplicationSource{RepoURL: chartRepo, Chart: "web", TargetRevision: "1.0.0",
			Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{tlsSrv.URL + "/prod.yaml"}}},
		AppName: "web", Namespace: "demo",
	}
	res, err := l.GenerateManifests(t.Context(), chartReq)
	if err != nil {
		t.Fatalf("chart with a remote value file: %v", err)
	}
	if v, _, _ := unstructured.NestedString(res.Manifests[0].Object, "data", "replicas"); v != "8" {
		t.Errorf("chart with a remote value file: replicas = %q, want 8", v)
	}
	mu.Lock()
	if len(credentials) > 0 {
		t.Errorf("the values server got credentials: %q", credentials)
	}
	mu.Unlock()

	httpsOnly := fromGit(plain.URL + "/prod.yaml")
	httpsOnly.Tools = reposerver.ToolOptions{HelmValuesFileSchemes: []string{"https"}}
	for _, tc := range []struct {
		name string
		req  reposerver.ManifestRequest
		want string
		is   error
	}{
		{"a scheme helm.valuesFileSchemes leaves out", httpsOnly, `URL scheme not allowed: "http" (allowed: https) (helm.valuesFileSchemes)`, nil},
		{"a scheme graphcd does not fetch", fromGit("file:///etc/passwd"), "URL scheme not allowed", nil},
		{"a metadata address", fromGit("http://169.254.169.254/latest/meta-data/iam"), "link-local", nil},
		{"a redirect to a metadata address", fromGit(plain.URL + "/to-metadata"), "link-local", nil},
		{"a missing file", fromGit(tlsSrv.URL + "/missing.yaml"), "404 Not Found", nil},
		{"a file over 10 MiB", fromGit(tlsSrv.URL + "/big.yaml"), "more than", render.ErrTooLarge},
	} {
		_, err := l.GenerateManifests(t.Context(), tc.req)
		if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// poolOf trusts srv's certificate.
func poolOf(srv *httptest.Server) *x509.CertPool {
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	return roots
}
