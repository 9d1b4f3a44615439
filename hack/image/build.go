package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"

	"github.com/graphcd/graphcd/internal/testenv/graphcdbin"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

const defaultSource = "https://github.com/graphcd/graphcd"

// The image's user: non-root, with a home of its own, as distroless's
// "nonroot" (the uid Kubernetes manifests name in runAsUser).
const (
	uid         = 65532
	binaryPath  = "usr/local/bin/graphcd"
	caPath      = "etc/ssl/certs/ca-certificates.crt"
	homePath    = "home/nonroot"
	versionPkg  = "github.com/graphcd/graphcd/internal/version"
	defaultUser = "65532:65532"
	// refNameAnnotation names an image in an OCI layout's index.json.
	refNameAnnotation = "org.opencontainers.image.ref.name"
)

type options struct {
	out, version, revision, source string
	platforms                      []v1.Platform
	// created is the time of every file and of the image; zero is the
	// Unix epoch.
	created time.Time
}

type result struct {
	layout   string
	tarballs []string
	digest   v1.Hash
}

var platformRE = regexp.MustCompile(`^linux/(amd64|arm64)$`)

func parsePlatform(s string) (v1.Platform, error) {
	if !platformRE.MatchString(s) {
		return v1.Platform{}, fmt.Errorf("platform %q: want linux/amd64 or linux/arm64", s)
	}
	os, arch, _ := strings.Cut(s, "/")
	return v1.Platform{OS: os, Architecture: arch}, nil
}

// build compiles graphcd for every platform and writes the layout and the
// tarballs under opts.out.
func build(ctx context.Context, opts options) (*result, error) {
	if len(opts.platforms) == 0 {
		return nil, fmt.Errorf("no platforms")
	}
	if opts.created.IsZero() {
		opts.created = time.Unix(0, 0).UTC()
	}
	if err := os.MkdirAll(opts.out, 0o750); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "graphcd-image-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(work) }()

	ca := caBundle()
	res := &result{layout: filepath.Join(opts.out, "oci")}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range opts.platforms {
		bin := filepath.Join(work, "graphcd-"+p.Architecture)
		if err := compile(ctx, bin, p, opts); err != nil {
			return nil, err
		}
		img, err := platformImage(bin, ca, p, opts)
		if err != nil {
			return nil, err
		}
		tag, err := name.NewTag("graphcd:" + tagSafe(opts.version) + "-" + p.Architecture)
		if err != nil {
			return nil, err
		}
		tb := filepath.Join(opts.out, "graphcd-"+p.OS+"-"+p.Architecture+".tar")
		if err := tarball.WriteToFile(tb, tag, img); err != nil {
			return nil, fmt.Errorf("write %s: %w", tb, err)
		}
		res.tarballs = append(res.tarballs, tb)
		plat := p
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &plat}})
	}
	idx, ok := mutate.Annotations(idx, labels(opts)).(v1.ImageIndex)
	if !ok {
		return nil, fmt.Errorf("annotating the index")
	}
	if err := os.RemoveAll(res.layout); err != nil {
		return nil, err
	}
	// The layout's index.json names the image index by the version, as
	// tools expect (skopeo copy --all oci:bin/image/oci:<version> ...); the
	// index is a blob, and its digest is the one a registry shows.
	lp, err := layout.Write(res.layout, empty.Index)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", res.layout, err)
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{refNameAnnotation: tagSafe(opts.version)})); err != nil {
		return nil, fmt.Errorf("write %s: %w", res.layout, err)
	}
	if res.digest, err = idx.Digest(); err != nil {
		return nil, err
	}
	return res, nil
}

// compile builds a static graphcd for p, reproducibly.
func compile(ctx context.Context, out string, p v1.Platform, opts options) error {
	ldflags := fmt.Sprintf("-s -w -X %s.Version=%s -X %s.Commit=%s", versionPkg, opts.version, versionPkg, opts.revision)
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", graphcdbin.Tags, "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, "./cmd/graphcd")
	cmd.Dir = localcluster.RepoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture, "GOFLAGS=")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for %s/%s: %w", p.OS, p.Architecture, err)
	}
	return nil
}

// platformImage is the image for one platform: one layer, a config that
// runs graphcd as the non-root user, OCI media types and labels.
func platformImage(bin string, ca []byte, p v1.Platform, opts options) (v1.Image, error) {
	exe, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	files, err := rootFS(exe, ca, opts.created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(files)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	created := v1.Time{Time: opts.created}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: created, CreatedBy: "hack/image: graphcd, CA certificates, /etc/passwd", Comment: "graphcd " + opts.version},
	})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Created = p.OS, p.Architecture, created
	cfg.Config = v1.Config{
		Entrypoint: []string{"/" + binaryPath},
		Cmd:        []string{"server"},
		User:       defaultUser,
		WorkingDir: "/" + homePath,
		Env:        []string{"PATH=/usr/local/bin", "HOME=/" + homePath, "SSL_CERT_FILE=/" + caPath},
		Labels:     labels(opts),
	}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return nil, err
	}
	out, ok := mutate.Annotations(img, labels(opts)).(v1.Image)
	if !ok {
		return nil, fmt.Errorf("annotating the image")
	}
	return out, nil
}

// labels are the OCI annotations of the image, its index and its config.
func labels(opts options) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "graphcd",
		"org.opencontainers.image.description": "GitOps continuous delivery for Kubernetes with a GraphQL API",
		"org.opencontainers.image.source":      opts.source,
		"org.opencontainers.image.revision":    opts.revision,
		"org.opencontainers.image.version":     opts.version,
		"org.opencontainers.image.created":     opts.created.UTC().Format(time.RFC3339),
	}
}

// entry is one file or directory of the image.
type entry struct {
	path  string
	dir   bool
	mode  uint32 // permissions, and 0o1000 for the sticky bit
	owner int
	data  []byte
}

// entries are the image's files, in a fixed order: owned by root except
// the user's home.
func entries(exe, ca []byte) []entry {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/%s:/sbin/nologin\n", uid, uid, homePath)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", uid)
	return []entry{
		{path: "etc", dir: true, mode: 0o755},
		{path: "etc/group", mode: 0o644, data: []byte(group)},
		{path: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{path: "etc/ssl", dir: true, mode: 0o755},
		{path: "etc/ssl/certs", dir: true, mode: 0o755},
		{path: caPath, mode: 0o644, data: ca},
		{path: "home", dir: true, mode: 0o755},
		{path: homePath, dir: true, mode: 0o700, owner: uid},
		{path: "tmp", dir: true, mode: 0o1777},
		{path: "usr", dir: true, mode: 0o755},
		{path: "usr/local", dir: true, mode: 0o755},
		{path: "usr/local/bin", dir: true, mode: 0o755},
		{path: binaryPath, mode: 0o755, data: exe},
	}
}

// rootFS is the layer's tar of entries, every time set to created.
func rootFS(exe, ca []byte, created time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries(exe, ca) {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: e.path, Mode: int64(e.mode), Uid: e.owner, Gid: e.owner, Size: int64(len(e.data)), ModTime: created, Format: tar.FormatPAX}
		if e.dir {
			h.Typeflag, h.Name, h.Size = tar.TypeDir, e.path+"/", 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeRootFS writes the entries for platform p under dir, for the
// Dockerfile's final stage to copy (ownership is the Dockerfile's to set).
func writeRootFS(ctx context.Context, dir string, p v1.Platform, opts options) error {
	work, err := os.MkdirTemp("", "graphcd-rootfs-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()
	bin := filepath.Join(work, "graphcd")
	if err := compile(ctx, bin, p, opts); err != nil {
		return err
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	for _, e := range entries(exe, caBundle()) {
		path := filepath.Join(dir, filepath.FromSlash(e.path))
		mode := os.FileMode(e.mode & 0o777)
		if e.mode&0o1000 != 0 {
			mode |= os.ModeSticky
		}
		if e.dir {
			err = os.MkdirAll(path, 0o700)
		} else {
			err = os.WriteFile(path, e.data, 0o600)
		}
		if err == nil {
			err = os.Chmod(path, mode) // the image's own modes, umask aside
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// caBundle is the Mozilla NSS root store as PEM, from the Go module
// golang.org/x/crypto/x509roots/fallback, so the bundle depends on the
// module version alone, not on the machine that builds the image. Roots
// that NSS trusts only with constraints X.509 cannot carry are left out,
// as Debian's ca-certificates leaves them out.
func caBundle() []byte {
	var b bytes.Buffer
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate})
	}
	return b.Bytes()
}

var tagUnsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// tagSafe makes version usable in an image tag.
func tagSafe(version string) string {
	return tagUnsafe.ReplaceAllString(version, "_")
}
