package oci

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/singleflight"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/reposerver/archive"
	"github.com/graphcd/graphcd/reposerver/render"
	"github.com/graphcd/graphcd/reposerver/revisioncache"
)

// Layer media types an artifact's content may have, as Argo CD accepts
// them by default.
const (
	// MediaTypeLayer is a plain tar+gzip layer (what `oras push` makes of
	// a directory); it unpacks as it is.
	MediaTypeLayer = ocispec.MediaTypeImageLayerGzip
	// MediaTypeHelmChart is a Helm chart (what `helm push` makes); its
	// top directory is dropped, so the chart is the artifact's root.
	MediaTypeHelmChart = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// MaxLayers bounds the layers of one artifact's manifest.
const MaxLayers = 10

// DefaultMaxLayerSize bounds the compressed content layer: 20 MiB, as for
// a chart archive.
const DefaultMaxLayerSize int64 = 20 << 20

// Limits bound what Pull downloads and unpacks.
type Limits struct {
	// MaxLayerSize bounds the compressed content layer; 0 means
	// DefaultMaxLayerSize.
	MaxLayerSize int64
	// Archive bounds the unpacked files (zero fields: archive's defaults,
	// but one file may be as large as a render allows one manifest to be,
	// render.DefaultMaxManifestSize).
	Archive archive.Limits
}

// Options configure a Puller.
type Options struct {
	// CacheDir holds unpacked artifacts, one directory per repository and
	// digest. Required.
	CacheDir string
	// RevisionCacheTTL is how long a tag or constraint stays resolved;
	// 0 means 3 minutes, negative disables the cache.
	RevisionCacheTTL time.Duration
	Limits           Limits
}

// Puller resolves and unpacks OCI artifacts. It is safe for concurrent
// use; concurrent pulls of one digest share one download.
type Puller struct {
	opts     Options
	resolved *revisioncache.Cache
	resolve  singleflight.Group
	pulls    singleflight.Group
}

// NewPuller returns a Puller.
func NewPuller(opts Options) (*Puller, error) {
	if opts.CacheDir == "" {
		return nil, errors.New("oci: CacheDir is required")
	}
	if err := os.MkdirAll(opts.CacheDir, 0o700); err != nil {
		return nil, fmt.Errorf("oci: create artifact cache: %w", err)
	}
	if opts.RevisionCacheTTL == 0 {
		opts.RevisionCacheTTL = 3 * time.Minute
	}
	if opts.Limits.MaxLayerSize <= 0 {
		opts.Limits.MaxLayerSize = DefaultMaxLayerSize
	}
	if opts.Limits.Archive.MaxFileSize <= 0 {
		opts.Limits.Archive.MaxFileSize = render.DefaultMaxManifestSize
	}
	opts.Limits.Archive = opts.Limits.Archive.WithDefaults()
	return &Puller{opts: opts, resolved: revisioncache.New(opts.RevisionCacheTTL)}, nil
}

// HasScheme reports whether repoURL is an oci:// URL.
func HasScheme(repoURL string) bool {
	return len(repoURL) >= 6 && strings.EqualFold(repoURL[:6], "oci://")
}

// repositoryName is repoURL without its oci:// scheme and trailing "/".
func repositoryName(repoURL string) string {
	if HasScheme(repoURL) {
		repoURL = repoURL[6:]
	}
	return strings.TrimSuffix(strings.TrimSpace(repoURL), "/")
}

// open opens repoURL's repository, with errors that show the URL
// without credentials.
func open(repoURL string, a Auth) (*remote.Repository, error) {
	rep, err := NewRepository(repositoryName(repoURL), a)
	if err != nil {
		return nil, fmt.Errorf("OCI repository %s: %w", repourl.Redact(repoURL), err)
	}
	return rep, nil
}

// tagPattern is what a registry accepts as a tag (the distribution spec).
var tagPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// Resolve turns revision into the digest of the manifest it names: a
// digest ("sha256:..."), a tag, or a semantic version constraint over the
// tags ("1.2.x", "^1", ">=1.0 <2"; "" and "*" the highest version).
// A tag that exists wins over a constraint of the same spelling. Every
// answer comes from the registry with a's credentials, a digest's too, so
// an artifact that others' credentials pulled is never handed to a caller
// the registry refuses; answers are kept for the revision cache's TTL
// per repository, credentials and revision.
func (p *Puller) Resolve(ctx context.Context, repoURL string, a Auth, revision string) (string, error) {
	revision = strings.TrimSpace(revision)
	key := revisioncache.Key{Repo: repourl.Normalize(repoURL), Creds: a.fingerprint(), Revision: revision}
	if d, ok := p.resolved.Get(key); ok {
		return d, nil
	}
	gen := p.resolved.Generation(key.Repo)
	v, err, _ := p.resolve.Do(revisioncache.FlightKey(key, gen), func() (any, error) {
		rep, err := open(repoURL, a)
		if err != nil {
			return "", err
		}
		d, err := resolve(ctx, rep, revision)
		if err != nil {
			return "", fmt.Errorf("resolve %s in %s: %w", quoted(revision), repourl.Redact(repoURL), err)
		}
		p.resolved.Put(key, d, gen)
		return d, nil
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

func quoted(revision string) string {
	if revision == "" {
		return `the latest version`
	}
	return fmt.Sprintf("%q", revision)
}

func resolve(ctx context.Context, rep *remote.Repository, revision string) (string, error) {
	if strings.Contains(revision, ":") {
		d, err := digest.Parse(revision)
		if err != nil {
			return "", fmt.Errorf("not a digest: %w", err)
		}
		desc, err := rep.Resolve(ctx, d.String())
		if err != nil {
			return "", err
		}
		if desc.Digest != d {
			return "", fmt.Errorf("registry answered digest %s", desc.Digest)
		}
		return d.String(), nil
	}
	if tagPattern.MatchString(revision) {
		desc, err := rep.Resolve(ctx, revision)
		if err == nil {
			return desc.Digest.String(), nil
		}
		if !errors.Is(err, errdef.ErrNotFound) {
			return "", err
		}
		if _, cerr := semver.NewConstraint(revision); cerr != nil {
			return "", fmt.Errorf("no such tag: %w", err)
		}
	}
	if revision == "latest" {
		revision = ""
	}
	tag, err := HighestTag(ctx, rep, revision)
	if err != nil {
		return "", err
	}
	desc, err := rep.Resolve(ctx, tag)
	if err != nil {
		return "", fmt.Errorf("tag %s: %w", tag, err)
	}
	return desc.Digest.String(), nil
}

// Invalidate forgets the resolved revisions of repoURL (a refresh, a
// webhook).
func (p *Puller) Invalidate(repoURL string) {
	p.resolved.Invalidate(repourl.Normalize(repoURL))
}

// Pull returns the directory holding the content of the artifact at
// digest (from Resolve) in repoURL, downloading and unpacking it the
// first time: the manifest must hold exactly one content layer (a layer
// whose media type ends in "tar" or "tar+gzip", among at most MaxLayers),
// of MediaTypeLayer or MediaTypeHelmChart; other layers (attestations,
// provenance) are ignored. The directory is shared and must not be
// written to.
func (p *Puller) Pull(ctx context.Context, repoURL string, a Auth, dgst string) (string, error) {
	d, err := digest.Parse(dgst)
	if err != nil {
		return "", fmt.Errorf("OCI artifact %s: revision %q is not a digest", repourl.Redact(repoURL), dgst)
	}
	entry := filepath.Join(p.opts.CacheDir, cacheKey(repourl.Normalize(repoURL), d.String()))
	dir := filepath.Join(entry, "root")
	if cached(dir) {
		return dir, nil
	}
	_, err, _ = p.pulls.Do(entry, func() (any, error) {
		if cached(dir) {
			return nil, nil
		}
		return nil, p.pull(ctx, repoURL, a, d, entry)
	})
	if err != nil {
		return "", fmt.Errorf("pull OCI artifact %s@%s: %w", repourl.Redact(repoURL), d, err)
	}
	return dir, nil
}

func (p *Puller) pull(ctx context.Context, repoURL string, a Auth, d digest.Digest, entry string) error {
	rep, err := open(repoURL, a)
	if err != nil {
		return err
	}
	_, m, err := FetchManifest(ctx, rep, d.String())
	if err != nil {
		return err
	}
	layer, err := contentLayer(m)
	if err != nil {
		return err
	}
	data, err := FetchBlob(ctx, rep, layer, p.opts.Limits.MaxLayerSize)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(p.opts.CacheDir, ".pull-")
	if err != nil {
		return fmt.Errorf("create artifact cache entry: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	err = archive.ExtractTarGz(bytes.NewReader(data), filepath.Join(tmp, "root"), archive.Options{
		Limits: p.opts.Limits.Archive, StripTop: layer.MediaType == MediaTypeHelmChart, Links: true,
	})
	if err != nil {
		return fmt.Errorf("unpack layer: %w", err)
	}
	if err := os.Rename(tmp, entry); err != nil && !cached(filepath.Join(entry, "root")) {
		return fmt.Errorf("store artifact in cache: %w", err)
	}
	return nil
}

// contentLayer picks the one content layer of m.
func contentLayer(m ocispec.Manifest) (ocispec.Descriptor, error) {
	if len(m.Layers) > MaxLayers {
		return ocispec.Descriptor{}, fmt.Errorf("manifest has %d layers, more than %d", len(m.Layers), MaxLayers)
	}
	var found []ocispec.Descriptor
	for _, l := range m.Layers {
		if !strings.HasSuffix(l.MediaType, "tar+gzip") && !strings.HasSuffix(l.MediaType, "tar") {
			continue
		}
		if l.MediaType != MediaTypeLayer && l.MediaType != MediaTypeHelmChart {
			return ocispec.Descriptor{}, fmt.Errorf("layer media type %q is not accepted (want %s or %s)", l.MediaType, MediaTypeLayer, MediaTypeHelmChart)
		}
		found = append(found, l)
	}
	if len(found) != 1 {
		return ocispec.Descriptor{}, fmt.Errorf("manifest has %d content layers, want exactly one", len(found))
	}
	return found[0], nil
}

// cacheKey names an unpacked artifact by repository and digest.
func cacheKey(repo, dgst string) string {
	sum := sha256.Sum256([]byte(repo + "\x00" + dgst))
	return hex.EncodeToString(sum[:20])
}

func cached(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}

// Tags lists the tags of repoURL, at most MaxTags.
func (p *Puller) Tags(ctx context.Context, repoURL string, a Auth) ([]string, error) {
	rep, err := open(repoURL, a)
	if err != nil {
		return nil, err
	}
	var out []string
	errStop := errors.New("too many tags")
	err = rep.Tags(ctx, "", func(tags []string) error {
		if len(out)+len(tags) > MaxTags {
			return errStop
		}
		out = append(out, tags...)
		return nil
	})
	if errors.Is(err, errStop) {
		return nil, fmt.Errorf("list tags of %s: more than %d tags", repourl.Redact(repoURL), MaxTags)
	}
	if err != nil {
		return nil, fmt.Errorf("list tags of %s: %w", repourl.Redact(repoURL), err)
	}
	return out, nil
}

// Test checks that a reaches repoURL, reading one page of its tags.
func (p *Puller) Test(ctx context.Context, repoURL string, a Auth) error {
	rep, err := open(repoURL, a)
	if err != nil {
		return err
	}
	rep.TagListPageSize = 1
	errStop := errors.New("first page read")
	if err := rep.Tags(ctx, "", func([]string) error { return errStop }); err != nil && !errors.Is(err, errStop) {
		return fmt.Errorf("OCI repository %s: %w", repourl.Redact(repoURL), err)
	}
	return nil
}
