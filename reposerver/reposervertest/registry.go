package reposervertest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sirupsen/logrus"
	"golang.org/x/crypto/bcrypt"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"

	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"           // the registry's htpasswd auth
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory" // and its in-memory storage
)

// Registry is a distribution registry running in the test process over
// TLS, with htpasswd auth for one user.
type Registry struct {
	Server *httptest.Server
	// Host is the registry's host:port, as repository URLs name it.
	Host           string
	User, Password string
}

// ServeRegistry starts a Registry for user with password. wrap, when not
// nil, stands between the registry and its clients (a hostile or
// counting middleman).
func ServeRegistry(tb testing.TB, user, password string, wrap func(http.Handler) http.Handler) *Registry {
	tb.Helper()
	logrus.SetLevel(logrus.ErrorLevel)
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		tb.Fatal(err)
	}
	htpasswd := filepath.Join(tb.TempDir(), "htpasswd")
	if err := os.WriteFile(htpasswd, []byte(user+":"+string(hash)+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	cfg := &configuration.Configuration{}
	cfg.Storage = configuration.Storage{
		"inmemory":    configuration.Parameters{},
		"maintenance": configuration.Parameters{"uploadpurging": map[any]any{"enabled": false}},
	}
	cfg.Auth = configuration.Auth{"htpasswd": configuration.Parameters{"realm": "test-registry", "path": htpasswd}}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	var h http.Handler = handlers.NewApp(ctx, cfg)
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewTLSServer(h)
	tb.Cleanup(srv.Close)
	return &Registry{Server: srv, Host: srv.Listener.Addr().String(), User: user, Password: password}
}

// CAPEM is the registry's certificate, to trust as a CA.
func (r *Registry) CAPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.Server.Certificate().Raw})
}

// repository opens name ("team/app") in the registry as its user.
func (r *Registry) repository(tb testing.TB, name string) *remote.Repository {
	tb.Helper()
	rep, err := remote.NewRepository(r.Host + "/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	rep.Client = &auth.Client{
		Client:     r.Server.Client(),
		Cache:      auth.NewCache(),
		Credential: auth.StaticCredential(r.Host, auth.Credential{Username: r.User, Password: r.Password}),
	}
	return rep
}

// Layer is one layer of an artifact PushArtifact pushes.
type Layer struct {
	MediaType string
	Data      []byte
}

// PushArtifact pushes an OCI image manifest of layers (and an empty
// config) to repository name ("team/app"), tags it with each of tags, and
// returns its digest, as `oras push` does.
func (r *Registry) PushArtifact(tb testing.TB, name string, layers []Layer, tags ...string) string {
	tb.Helper()
	ctx := tb.Context()
	rep := r.repository(tb, name)
	descs := make([]ocispec.Descriptor, len(layers))
	for i, l := range layers {
		descs[i] = content.NewDescriptorFromBytes(l.MediaType, l.Data)
		if err := rep.Push(ctx, descs[i], bytes.NewReader(l.Data)); err != nil {
			tb.Fatalf("push layer: %v", err)
		}
	}
	desc, err := oras.PackManifest(ctx, rep, oras.PackManifestVersion1_1, "application/vnd.graphcd.test", oras.PackManifestOptions{Layers: descs})
	if err != nil {
		tb.Fatalf("push manifest: %v", err)
	}
	for _, tag := range tags {
		if err := rep.Tag(ctx, desc, tag); err != nil {
			tb.Fatalf("tag %s: %v", tag, err)
		}
	}
	return desc.Digest.String()
}

// TarEntry is one entry of an archive TarGz builds.
type TarEntry struct {
	Name string
	Body string
	// Size, when > 0, writes that many zero bytes instead of Body.
	Size int64
	// Type is the tar type flag; 0 is a regular file.
	Type byte
	Link string
}

// TarGz builds a gzipped tar archive of entries, in their order.
func TarGz(tb testing.TB, entries ...TarEntry) []byte {
	tb.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	zeros := make([]byte, 1<<20)
	for _, e := range entries {
		hd := &tar.Header{Name: e.Name, Mode: 0o644, Typeflag: e.Type, Linkname: e.Link}
		if hd.Typeflag == 0 {
			hd.Typeflag = tar.TypeReg
		}
		if hd.Typeflag == tar.TypeReg {
			hd.Size = int64(len(e.Body))
			if e.Size > 0 {
				hd.Size = e.Size
			}
		}
		if err := tw.WriteHeader(hd); err != nil {
			tb.Fatal(err)
		}
		if hd.Typeflag != tar.TypeReg {
			continue
		}
		if e.Size == 0 {
			if _, err := tw.Write([]byte(e.Body)); err != nil {
				tb.Fatal(err)
			}
			continue
		}
		for left := e.Size; left > 0; {
			n := min(left, int64(len(zeros)))
			if _, err := tw.Write(zeros[:n]); err != nil {
				tb.Fatal(err)
			}
			left -= n
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// Digest is the sha256 digest of data.
func Digest(data []byte) string {
	return digest.FromBytes(data).String()
}

// WantError checks err against a table test's expectation: wrapping
// target when it is not nil, else holding substr when that is not "".
// It reports whether an error was expected, so the caller checks the
// success case only when it returns false.
func WantError(tb testing.TB, err, target error, substr string) bool {
	tb.Helper()
	switch {
	case target != nil:
		if !errors.Is(err, target) {
			tb.Fatalf("err = %v, want %v", err, target)
		}
	case substr != "":
		if err == nil || !strings.Contains(err.Error(), substr) {
			tb.Fatalf("err = %v, want one containing %q", err, substr)
		}
	default:
		if err != nil {
			tb.Fatal(err)
		}
		return false
	}
	return true
}
