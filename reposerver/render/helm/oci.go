package helm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"helm.sh/helm/v3/pkg/registry"
	orasregistry "oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/graphcd/graphcd/reposerver/oci"
)

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

	rep, err := oci.NewRepository(shown, oci.Auth{
		Username: ref.Username, Password: ref.Password, CACert: ref.CACert, Insecure: ref.Insecure, PlainHTTP: ref.PlainHTTP,
	})
	if err != nil {
		return "", fmt.Errorf("pull OCI chart %s: %w", shown, err)
	}
	tag, err := resolveOCITag(ctx, rep, version)
	if err != nil {
		return "", fmt.Errorf("pull OCI chart %s: %w", shown, err)
	}
	chartVersion := strings.ReplaceAll(tag, "_", "+")
	if dir, ok := cachedChart(ref.CacheDir, "oci", shown, "", chartVersion); ok {
		return dir, nil
	}
	_, manifest, err := oci.FetchManifest(ctx, rep, tag)
	if err != nil {
		return "", fmt.Errorf("pull OCI chart %s:%s: %w", shown, tag, err)
	}
	layer, err := chartLayer(manifest)
	if err != nil {
		return "", fmt.Errorf("pull OCI chart %s:%s: %w", shown, tag, err)
	}
	archive, err := oci.FetchBlob(ctx, rep, layer, ref.Limits.MaxChartSize)
	if err != nil {
		return "", fmt.Errorf("pull OCI chart %s:%s: chart %w", shown, tag, err)
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
	return oci.HighestTag(ctx, rep, version)
}
