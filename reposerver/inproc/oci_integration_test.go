//go:build integration

package inproc_test

import (
	"archive/tar"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/archive"
	"github.com/graphcd/graphcd/reposerver/inproc"
	"github.com/graphcd/graphcd/reposerver/oci"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

const (
	ociUser     = "ociuser"
	ociPassword = "oci-s3cret-pa55"
)

// manifestsLayer is an artifact's content as `oras push` packs a
// directory: a plain ConfigMap and a kustomization beside it.
func manifestsLayer(t *testing.T, value string) reposervertest.Layer {
	t.Helper()
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  value: " + value + "\n"
	}
	return reposervertest.Layer{MediaType: oci.MediaTypeLayer, Data: reposervertest.TarGz(t,
		reposervertest.TarEntry{Name: "apps/", Type: tar.TypeDir},
		reposervertest.TarEntry{Name: "apps/plain/cm.yaml", Body: cm("plain")},
		reposervertest.TarEntry{Name: "apps/kust/kustomization.yaml", Body: "resources:\n- cm.yaml\nnamePrefix: k-\n"},
		reposervertest.TarEntry{Name: "apps/kust/cm.yaml", Body: cm("kust")},
	)}
}

// blobCounter counts the blob downloads a registry serves.
type blobCounter struct{ n atomic.Int32 }

func (c *blobCounter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
			c.n.Add(1)
		}
		h.ServeHTTP(w, r)
	})
}

func ociRequest(reg *reposervertest.Registry, repo, path, revision string) reposerver.ManifestRequest {
	url := "oci://" + reg.Host + "/" + repo
	return reposerver.ManifestRequest{
		Repo: reposerver.Repository{URL: url, Credentials: &reposerver.Credentials{
			Username: ociUser, Password: ociPassword, CACert: reg.CAPEM(),
		}},
		Source:  v1alpha1.ApplicationSource{RepoURL: url, Path: path, TargetRevision: revision},
		AppName: "guestbook", Namespace: "demo",
	}
}

func configValue(t *testing.T, res *reposerver.ManifestResponse) string {
	t.Helper()
	if len(res.Manifests) != 1 {
		t.Fatalf("rendered %d objects, want 1", len(res.Manifests))
	}
	v, _, _ := unstructuredString(res.Manifests[0].Object, "data", "value")
	return v
}

func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[f]
	}
	s, ok := cur.(string)
	return s, ok, nil
}

// An artifact renders at a tag, a semver constraint and a digest, each
// reporting the manifest digest as its revision; a path in it is detected
// like a Git path; a re-tagged artifact renders again after a refresh.
func TestOCIArtifactSource(t *testing.T) {
	var blobs blobCounter
	reg := reposervertest.ServeRegistry(t, ociUser, ociPassword, blobs.wrap)
	d100 := reg.PushArtifact(t, "team/guestbook", []reposervertest.Layer{manifestsLayer(t, "one")}, "1.0.0")
	d110 := reg.PushArtifact(t, "team/guestbook", []reposervertest.Layer{manifestsLayer(t, "one-one")}, "1.1.0", "latest")
	d200 := reg.PushArtifact(t, "team/guestbook", []reposervertest.Layer{manifestsLayer(t, "two")}, "2.0.0")
	l := newLocal(t)

	for _, tc := range []struct {
		name, path, revision string
		wantType             v1alpha1.ApplicationSourceType
		wantDigest           string
		wantName, wantValue  string
	}{
		{"tag", "apps/plain", "1.0.0", v1alpha1.ApplicationSourceTypeDirectory, d100, "plain", "one"},
		{"constraint", "apps/plain", "^1.0", v1alpha1.ApplicationSourceTypeDirectory, d110, "plain", "one-one"},
		{"tag latest", "apps/plain", "latest", v1alpha1.ApplicationSourceTypeDirectory, d110, "plain", "one-one"},
		{"highest version", "apps/plain", "", v1alpha1.ApplicationSourceTypeDirectory, d200, "plain", "two"},
		{"digest", "apps/plain", d100, v1alpha1.ApplicationSourceTypeDirectory, d100, "plain", "one"},
		{"kustomize", "apps/kust", "2.0.0", v1alpha1.ApplicationSourceTypeKustomize, d200, "k-kust", "two"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := l.GenerateManifests(t.Context(), ociRequest(reg, "team/guestbook", tc.path, tc.revision))
			if err != nil {
				t.Fatal(err)
			}
			if res.Revision != tc.wantDigest || res.SourceType != tc.wantType {
				t.Errorf("revision %s type %s, want %s %s", res.Revision, res.SourceType, tc.wantDigest, tc.wantType)
			}
			if got := configValue(t, res); got != tc.wantValue || res.Manifests[0].GetName() != tc.wantName {
				t.Errorf("rendered %s with value %q, want %s with %q", res.Manifests[0].GetName(), got, tc.wantName, tc.wantValue)
			}
		})
	}

	t.Run("ResolveRevision", func(t *testing.T) {
		req := ociRequest(reg, "team/guestbook", "", "")
		got, err := l.ResolveRevision(t.Context(), req.Repo, "~1.0.0")
		if err != nil || got != d100 {
			t.Errorf("ResolveRevision(~1.0.0) = %q, %v; want %s", got, err, d100)
		}
		refs, err := l.ListRefs(t.Context(), req.Repo)
		if err != nil || len(refs.Tags) != 4 {
			t.Errorf("ListRefs = %v, %v; want 4 tags", refs, err)
		}
		if err := l.TestRepository(t.Context(), req.Repo); err != nil {
			t.Errorf("TestRepository: %v", err)
		}
		if _, err := l.ListCommits(t.Context(), req.Repo, "1.0.0", 5); !errors.Is(err, reposerver.ErrNotGit) {
			t.Errorf("ListCommits err = %v, want ErrNotGit", err)
		}
	})

	t.Run("one download per digest", func(t *testing.T) {
		before := blobs.n.Load()
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() {
				req := ociRequest(reg, "team/guestbook", "apps/plain", "1.1.0")
				req.AppName, req.NoCache = fmt.Sprintf("app-%d", i), true
				_, errs[i] = l.GenerateManifests(t.Context(), req)
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		// 1.1.0 was unpacked by the constraint case already.
		if got := blobs.n.Load() - before; got != 0 {
			t.Errorf("%d blob downloads for an unpacked digest, want 0", got)
		}
		if _, err := l.GenerateManifests(t.Context(), ociRequest(reg, "team/guestbook", "apps/plain", "1.1.0")); err != nil {
			t.Fatal(err)
		}
		res, err := l.GenerateManifests(t.Context(), ociRequest(reg, "team/guestbook", "apps/plain", "1.1.0"))
		if err != nil || !res.Cached {
			t.Errorf("second render: cached %v, err %v; want from the cache", res != nil && res.Cached, err)
		}
	})

	t.Run("re-tagged", func(t *testing.T) {
		moved := reg.PushArtifact(t, "team/guestbook", []reposervertest.Layer{manifestsLayer(t, "one-again")}, "1.0.0")
		req := ociRequest(reg, "team/guestbook", "apps/plain", "1.0.0")
		res, err := l.GenerateManifests(t.Context(), req)
		if err != nil || res.Revision != d100 {
			t.Fatalf("before a refresh: revision %v, err %v; want the resolved %s kept for the revision cache's TTL", res, err, d100)
		}
		l.InvalidateRevision(req.Repo.URL)
		res, err = l.GenerateManifests(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Revision != moved || res.Cached || configValue(t, res) != "one-again" {
			t.Errorf("after a refresh: revision %s cached %v value %q; want %s rendered anew with one-again", res.Revision, res.Cached, configValue(t, res), moved)
		}
	})

	t.Run("credentials", func(t *testing.T) {
		for name, creds := range map[string]*reposerver.Credentials{
			"wrong password": {Username: ociUser, Password: "wrong-pa55word-value", CACert: reg.CAPEM()},
			"none":           {CACert: reg.CAPEM()},
		} {
			// A digest another caller's credentials pulled is still refused.
			req := ociRequest(reg, "team/guestbook", "apps/plain", d100)
			req.Repo.Credentials = creds
			_, err := l.GenerateManifests(t.Context(), req)
			if err == nil {
				t.Errorf("%s: rendered", name)
				continue
			}
			if strings.Contains(err.Error(), "wrong-pa55word-value") || strings.Contains(err.Error(), ociPassword) {
				t.Errorf("%s: error shows a password: %v", name, err)
			}
		}
		req := ociRequest(reg, "team/guestbook", "apps/plain", "1.0.0")
		req.Repo.Credentials.CACert = nil
		if _, err := l.GenerateManifests(t.Context(), req); err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("untrusted registry: err = %v, want a certificate error", err)
		}
	})

	t.Run("signature keys", func(t *testing.T) {
		req := ociRequest(reg, "team/guestbook", "apps/plain", "1.0.0")
		req.SignatureKeys = []string{"any key"}
		if _, err := l.GenerateManifests(t.Context(), req); !errors.Is(err, inproc.ErrArtifactUnsigned) {
			t.Errorf("err = %v, want ErrArtifactUnsigned", err)
		}
	})
}

// A Helm chart pushed as an OCI artifact renders from its root, the
// chart's top directory dropped, as Argo CD's path "." does.
func TestOCIArtifactHelmChart(t *testing.T) {
	reg := reposervertest.ServeRegistry(t, ociUser, ociPassword, nil)
	chart := reposervertest.TarGz(t,
		reposervertest.TarEntry{Name: "demo/Chart.yaml", Body: "apiVersion: v2\nname: demo\nversion: 0.3.0\n"},
		reposervertest.TarEntry{Name: "demo/values.yaml", Body: "value: from-chart\n"},
		reposervertest.TarEntry{Name: "demo/templates/cm.yaml", Body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  value: {{ .Values.value }}\n"},
	)
	d := reg.PushArtifact(t, "charts/demo", []reposervertest.Layer{{MediaType: oci.MediaTypeHelmChart, Data: chart}}, "0.3.0")
	req := ociRequest(reg, "charts/demo", ".", "0.3.0")
	req.Source.Helm = &v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{{Name: "value", Value: "from-app"}}}
	res, err := newLocal(t).GenerateManifests(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.SourceType != v1alpha1.ApplicationSourceTypeHelm || res.Revision != d || configValue(t, res) != "from-app" {
		t.Errorf("type %s revision %s value %q; want Helm %s from-app", res.SourceType, res.Revision, configValue(t, res), d)
	}
}

// Hostile artifacts are refused with an error that says why, and leave
// nothing in the artifact cache.
func TestOCIArtifactRefusesHostileContent(t *testing.T) {
	tamper := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.URL.Path, "/v2/team/tampered/blobs/") || r.Method != http.MethodGet {
				h.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			body := rec.Body.Bytes()
			if len(body) > 0 {
				body[len(body)/2] ^= 0xff
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(body)
		})
	}
	reg := reposervertest.ServeRegistry(t, ociUser, ociPassword, tamper)
	layer := func(entries ...reposervertest.TarEntry) []reposervertest.Layer {
		return []reposervertest.Layer{{MediaType: oci.MediaTypeLayer, Data: reposervertest.TarGz(t, entries...)}}
	}
	ok := reposervertest.TarEntry{Name: "apps/plain/cm.yaml", Body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"}
	many := []reposervertest.TarEntry{ok}
	for i := range archive.DefaultMaxEntries {
		many = append(many, reposervertest.TarEntry{Name: fmt.Sprintf("apps/many/%05d.yaml", i)})
	}
	bomb := []reposervertest.TarEntry{ok}
	for i := range 30 {
		bomb = append(bomb, reposervertest.TarEntry{Name: fmt.Sprintf("apps/bomb/%02d.bin", i), Size: 4 << 20})
	}
	for _, tc := range []struct {
		name    string
		repo    string
		layers  []reposervertest.Layer
		wantErr error
		wantMsg string
	}{
		{name: "entry climbing out", repo: "team/hostile", layers: layer(ok, reposervertest.TarEntry{Name: "apps/../../evil.yaml", Body: "x"}), wantMsg: "leaves the archive's root"},
		{name: "absolute entry", repo: "team/hostile", layers: layer(ok, reposervertest.TarEntry{Name: "/etc/cron.d/evil", Body: "x"}), wantMsg: "absolute path"},
		{name: "symlink out", repo: "team/hostile", layers: layer(ok, reposervertest.TarEntry{Name: "apps/plain/passwd.yaml", Type: tar.TypeSymlink, Link: "../../../../etc/passwd"}), wantMsg: "outside the archive's root"},
		{name: "too many files", repo: "team/hostile", layers: layer(many...), wantErr: archive.ErrTooLarge},
		{name: "gzip bomb", repo: "team/hostile", layers: layer(bomb...), wantErr: archive.ErrTooLarge},
		{name: "layer over the limit", repo: "team/hostile", layers: layer(ok, reposervertest.TarEntry{Name: "apps/noise.bin", Body: noise(t)}), wantErr: archive.ErrTooLarge},
		{name: "digest mismatch", repo: "team/tampered", layers: layer(ok), wantMsg: "mismatch"},
		{name: "layer media type", repo: "team/hostile", layers: []reposervertest.Layer{{MediaType: "application/vnd.oci.image.layer.v1.tar", Data: []byte("x")}}, wantMsg: "is not accepted"},
		{name: "two content layers", repo: "team/hostile", layers: append(layer(ok), layer(ok, ok)...), wantMsg: "want exactly one"},
		{name: "no content layer", repo: "team/hostile", layers: []reposervertest.Layer{{MediaType: "application/vnd.example.sbom+json", Data: []byte("{}")}}, wantMsg: "0 content layers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			l, err := inproc.New(inproc.Options{WorkDir: work, OCILimits: oci.Limits{MaxLayerSize: 1 << 20}})
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "layer over the limit" {
				l, err = inproc.New(inproc.Options{WorkDir: work, OCILimits: oci.Limits{MaxLayerSize: 256}})
				if err != nil {
					t.Fatal(err)
				}
			}
			tag := strings.ReplaceAll(tc.name, " ", "-")
			reg.PushArtifact(t, tc.repo, tc.layers, tag)
			_, err = l.GenerateManifests(t.Context(), ociRequest(reg, tc.repo, "apps/plain", tag))
			if !reposervertest.WantError(t, err, tc.wantErr, tc.wantMsg) {
				t.Fatal("rendered a hostile artifact")
			}
			left, err := os.ReadDir(filepath.Join(work, "oci"))
			if err != nil {
				t.Fatal(err)
			}
			if len(left) != 0 {
				t.Errorf("artifact cache holds %d entries after a refused artifact", len(left))
			}
		})
	}
}

// noise is 8 KiB that gzip cannot make much smaller.
func noise(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4<<10)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// Registry credentials go to the registry alone: a blob the registry
// redirects to another host and port is fetched without them.
func TestOCIArtifactCredentialsStayWithTheRegistry(t *testing.T) {
	data := manifestsLayer(t, "elsewhere")
	var sawAuth atomic.Bool
	store := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			sawAuth.Store(true)
		}
		_, _ = w.Write(data.Data)
	}))
	t.Cleanup(store.Close)
	layerPath := "/v2/team/redirected/blobs/" + reposervertest.Digest(data.Data)
	redirect := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && r.URL.Path == layerPath {
				http.Redirect(w, r, store.URL+"/blob", http.StatusTemporaryRedirect)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	reg := reposervertest.ServeRegistry(t, ociUser, ociPassword, redirect)
	d := reg.PushArtifact(t, "team/redirected", []reposervertest.Layer{data}, "1.0.0")
	req := ociRequest(reg, "team/redirected", "apps/plain", "1.0.0")
	// One bundle trusts both test servers' certificates (httptest shares one).
	res, err := newLocal(t).GenerateManifests(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision != d || configValue(t, res) != "elsewhere" {
		t.Errorf("revision %s value %q, want %s elsewhere", res.Revision, configValue(t, res), d)
	}
	if sawAuth.Load() {
		t.Error("the blob store got the registry's Authorization header")
	}
}
