package main

import (
	"archive/tar"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image holds graphcd and nothing else that is not needed, runs as the
// non-root user, carries its labels, loads from the docker tarball as the
// same image, and the graphcd inside runs here. The test builds this
// machine's platform only: the other differs by GOARCH alone, and
// compiling graphcd for it would add minutes to a first `make test`
// (`make image` builds both).
func TestImage(t *testing.T) {
	plat, err := parsePlatform("linux/" + runtime.GOARCH)
	if err != nil {
		t.Skip(err)
	}
	opts := options{
		out: t.TempDir(), version: "v9.8.7-test", revision: "0123456789abcdef", source: defaultSource,
		created:   time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
		platforms: []v1.Platform{plat},
	}
	res, err := build(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}

	idx := namedIndex(t, res.layout, opts.version)
	if d, _ := idx.Digest(); d != res.digest {
		t.Errorf("layout index digest %s, build printed %s", d, res.digest)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.MediaType != types.OCIImageIndex || len(im.Manifests) != 1 || im.Manifests[0].Platform.Architecture != runtime.GOARCH {
		t.Fatalf("index %s with manifests %+v, want an OCI index of one for linux/%s", im.MediaType, im.Manifests, runtime.GOARCH)
	}
	if im.Annotations["org.opencontainers.image.revision"] != opts.revision || im.Annotations["org.opencontainers.image.version"] != opts.version {
		t.Errorf("index annotations = %v", im.Annotations)
	}
	for _, desc := range im.Manifests {
		arch := desc.Platform.Architecture
		t.Run(arch, func(t *testing.T) {
			img, err := idx.Image(desc.Digest)
			if err != nil {
				t.Fatal(err)
			}
			checkImage(t, img, arch, opts)
			loaded, err := tarball.ImageFromPath(filepath.Join(opts.out, "graphcd-linux-"+arch+".tar"), nil)
			if err != nil {
				t.Fatal(err)
			}
			// docker load writes its own manifest: the config and the
			// layer are what must be the same.
			if a, b := configOf(t, loaded), configOf(t, img); a != b {
				t.Errorf("the docker tarball's config is %s, the layout's %s", a, b)
			}
			if a, b := diffIDs(t, loaded), diffIDs(t, img); !slices.Equal(a, b) {
				t.Errorf("the docker tarball's layers are %v, the layout's %v", a, b)
			}
		})
	}

	// The same inputs give the same image, to the byte.
	again := opts
	again.out = t.TempDir()
	res2, err := build(t.Context(), again)
	if err != nil {
		t.Fatal(err)
	}
	im2, err := namedIndex(t, res2.layout, opts.version).IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im2.Manifests[0].Digest != im.Manifests[0].Digest {
		t.Errorf("a second build of %s gave image %s, the first %s", opts.platforms[0].Architecture, im2.Manifests[0].Digest, im.Manifests[0].Digest)
	}
}

func checkImage(t *testing.T, img v1.Image, arch string, opts options) {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != arch || !cfg.Created.Equal(opts.created) {
		t.Errorf("config os %s arch %s created %v", cfg.OS, cfg.Architecture, cfg.Created)
	}
	c := cfg.Config
	if !slices.Equal(c.Entrypoint, []string{"/usr/local/bin/graphcd"}) || !slices.Equal(c.Cmd, []string{"server"}) || c.User != "65532:65532" {
		t.Errorf("entrypoint %q cmd %q user %q; want graphcd server as 65532", c.Entrypoint, c.Cmd, c.User)
	}
	if !maps.Equal(c.Labels, labels(opts)) || c.Labels["org.opencontainers.image.source"] != defaultSource {
		t.Errorf("labels = %v", c.Labels)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON || m.Annotations["org.opencontainers.image.version"] != opts.version {
		t.Errorf("manifest %s, config %s, annotations %v", m.MediaType, m.Config.MediaType, m.Annotations)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1", len(layers), err)
	}
	entries, exe, ca := readLayer(t, layers[0], opts.created)
	want := []string{
		"etc/ d755 0", "etc/group f644 0", "etc/passwd f644 0", "etc/ssl/ d755 0", "etc/ssl/certs/ d755 0",
		"etc/ssl/certs/ca-certificates.crt f644 0", "home/ d755 0", "home/nonroot/ d700 65532", "tmp/ d1777 0",
		"usr/ d755 0", "usr/local/ d755 0", "usr/local/bin/ d755 0", "usr/local/bin/graphcd f755 0",
	}
	if !slices.Equal(entries, want) {
		t.Errorf("layer entries:\n%s\nwant:\n%s", strings.Join(entries, "\n"), strings.Join(want, "\n"))
	}
	if n := countCerts(t, ca); n < 100 {
		t.Errorf("the CA bundle holds %d certificates, want the NSS store (over 100)", n)
	}
	bin := filepath.Join(t.TempDir(), "graphcd")
	if err := os.WriteFile(bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), bin, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), opts.version) || !strings.Contains(string(out), opts.revision) {
		t.Errorf("graphcd version from the image: %v\n%s", err, out)
	}
}

// readLayer lists the layer's entries as "path type+mode owner", checks
// every time is created, and returns the graphcd binary and CA bundle.
func readLayer(t *testing.T, l v1.Layer, created time.Time) (entries []string, exe, ca []byte) {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		kind := "f"
		if h.Typeflag == tar.TypeDir {
			kind = "d"
		}
		entries = append(entries, fmt.Sprintf("%s %s%o %d", h.Name, kind, h.Mode&0o7777, h.Uid))
		if !h.ModTime.Equal(created) {
			t.Errorf("%s has time %v, want %v", h.Name, h.ModTime, created)
		}
		switch h.Name {
		case binaryPath:
			exe, _ = io.ReadAll(tr)
		case caPath:
			ca, _ = io.ReadAll(tr)
		}
	}
	return entries, exe, ca
}

func countCerts(t *testing.T, pemData []byte) int {
	t.Helper()
	n := 0
	for {
		var b *pem.Block
		b, pemData = pem.Decode(pemData)
		if b == nil {
			return n
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			t.Errorf("certificate %d: %v", n, err)
		}
		n++
	}
}

// namedIndex returns the image index the layout at path names version.
func namedIndex(t *testing.T, path, version string) v1.ImageIndex {
	t.Helper()
	top, err := layout.ImageIndexFromPath(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Annotations[refNameAnnotation] != version || m.Manifests[0].MediaType != types.OCIImageIndex {
		t.Fatalf("the layout's index.json lists %+v, want one image index named %s", m.Manifests, version)
	}
	idx, err := top.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func configOf(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func diffIDs(t *testing.T, img v1.Image) []v1.Hash {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	return cfg.RootFS.DiffIDs
}
