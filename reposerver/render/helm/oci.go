package helm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"helm.sh/helm/v3/pkg/registry"
	"oras.land/oras-go/v2/content"
	orasregistry "oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// maxOCITags bounds the tags read to resolve a version constraint.
const maxOCITags = 10000

// pullOCI resolves ref.Version to a tag of the OCI repository, checks the
// manifest's chart layer against the size limit, then downloads and
// verifies (size and digest) that layer before unpacking it.
func pullOCI(ctx context.Context, ref PullRequest) (string, error) {
	name := strings.TrimPrefix(ref.RepoURL, "oci://")
	name = strings.TrimSuffix(name, "/")
	if ref.Chart != "" {
		name += "/" + strings.Trim(ref.Chart, "/")
	}
	parsed, err := orasregistry.ParseReference(name)
	if err != nil {
		return "", fmt.Errorf("pull OCI chart: invalid reference %q: %w", name, err)
	}
	version := ref.Version
	if parsed.Reference != "" {
		if version == "" {
			version = parsed.Reference
		}
		parsed.Reference = ""
	}
	shown := parsed.String()

	hc, err := newHTTPClient(ref.CACert, ref.Insecure)
	if err != nil {
		return "", fmt.Errorf("pull OCI chart %s: %w", shown, err)
	}
	rep, err := remote.NewRepository(shown)
	if err != nil {
		return "", fmt.Errorf("pull OCI chart %s: %w", shown, err)
	}
	rep.PlainHTTP = ref.PlainHTTP
	client := &auth.Client{Client: hc, Cache: auth.NewCache()}
	if ref.Username != "" || ref.Password != "" {
		client.Credential = auth.StaticCredential(parsed.Registry, auth.Credential{Username: ref.Username, Password: ref.Password})
	}
	rep.Client = client

	tag, err := resolveOCITag(ctx, rep, version)
	if err != nil {
		return "", fmt.Errorf("pull OCI chart %s: %w", shown, err)
	}
	chartVersion := strings.ReplaceAll(tag, "_", "+")
	if dir, ok := cachedChart(ref.CacheDir, "oci", shown, "", chartVersion); ok {
		return dir, nil
	}

	desc, rc, err := rep.FetchReference(ctx, tag)
	if err != nil {
		return "", fmt.Errorf("pull OCI chart %s:%s: fetch manifest: %w", shown, tag, err)
	}
	raw, err := content.ReadAll(rc, desc)
	_ = rc.Close()
	if err != nil {
		return "", fmt.Errorf("pull OCI chart %s:%s: read manifest: %w", shown, tag, err)
	}
	if desc.MediaType != ocispec.MediaTypeImageManifest {
		return "", fmt.Errorf("pull OCI chart %s:%s: manifest media type %q is not an OCI image manifest", shown, tag, desc.MediaType)
	}
	var manifest ocispec.Manifest
	if err := json.Unmarshal(raw, &manifest); err != nil {
		return "", fmt.Errorf("pull OCI chart %s:%s: parse manifest: %w", shown, tag, err)
	}
	layer, err := chartLayer(manifest)
	if err != nil {
		return "", fmt.Errorf("pull OCI chart %s:%s: %w", shown, tag, err)
	}
	if layer.Size > ref.Limits.MaxChartSize {
		return "", fmt.Errorf("pull OCI chart %s:%s: chart layer of %d bytes is more than %d: %w", shown, tag, layer.Size, ref.Limits.MaxChartSize, ErrDownloadTooLarge)
	}
	lrc, err := rep.Fetch(ctx, layer)
	if err != nil {
		return "", fmt.Errorf("pull OCI chart %s:%s: fetch chart layer: %w", shown, tag, err)
	}
	archive, err := content.ReadAll(lrc, layer)
	_ = lrc.Close()
	if err != nil {
		return "", fmt.Errorf("pull OCI chart %s:%s: read chart layer: %w", shown, tag, err)
	}
	return storeChart(ref.CacheDir, "oci", shown, "", chartVersion, archive, ref.Limits)
}

// chartLayer picks the single Helm chart layer of a manifest.
func chartLayer(m ocispec.Manifest) (ocispec.Descriptor, error) {
	var found []ocispec.Descriptor
	for _, l := range m.Layers {
		if l.MediaType == registry.ChartLayerMediaType || l.MediaType == registry.LegacyChartLayerMediaType {
			found = append(found, l)
		}
	}
	switch len(found) {
	case 0:
		return ocispec.Descriptor{}, errors.New("manifest has no Helm chart layer")
	case 1:
		return found[0], nil
	default:
		return ocispec.Descriptor{}, errors.New("manifest has more than one Helm chart layer")
	}
}

// resolveOCITag turns a version or constraint into a tag. An exact
// version is used as is (with "+" spelled "_" as Helm pushes it); a
// constraint is matched against the repository's tags, newest first.
func resolveOCITag(ctx context.Context, rep *remote.Repository, version string) (string, error) {
	version = versionConstraint(version)
	if exactVersion(version) {
		return strings.ReplaceAll(version, "+", "_"), nil
	}
	constraint := "*"
	if version != "" {
		constraint = version
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return "", fmt.Errorf("version constraint %q: %w", version, err)
	}
	type candidate struct {
		tag string
		v   *semver.Version
	}
	var matches []candidate
	seen := 0
	errStop := errors.New("too many tags")
	err = rep.Tags(ctx, "", func(tags []string) error {
		for _, t := range tags {
			seen++
			if seen > maxOCITags {
				return errStop
			}
			v, err := semver.NewVersion(strings.ReplaceAll(t, "_", "+"))
			if err != nil || !c.Check(v) {
				continue
			}
			matches = append(matches, candidate{tag: t, v: v})
		}
		return nil
	})
	if errors.Is(err, errStop) {
		return "", fmt.Errorf("list tags: more than %d tags", maxOCITags)
	}
	if err != nil {
		return "", fmt.Errorf("list tags: %w", err)
	}
	if len(matches) == 0 {
		return "", fmt.Errorf("no tag matches version %q", constraint)
	}
	sort.Slice(matches, func(i, j int) bool { return matches[i].v.GreaterThan(matches[j].v) })
	return matches[0].tag, nil
}
