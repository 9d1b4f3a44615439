package inproc

import (
	"context"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/git"
	"github.com/graphcd/graphcd/reposerver/render"
)

// GetAppDetails implements Service for sources in Git and OCI artifacts.
func (l *Local) GetAppDetails(ctx context.Context, req reposerver.ManifestRequest) (*reposerver.AppDetails, error) {
	if isChart(req) {
		return &reposerver.AppDetails{SourceType: v1alpha1.ApplicationSourceTypeHelm, Helm: &reposerver.HelmDetails{}}, nil
	}
	revision, err := l.resolveSource(ctx, req)
	if err != nil {
		return nil, err
	}
	dir, release, err := l.tree(ctx, req, revision, git.CheckoutOptions{})
	if err != nil {
		return nil, err
	}
	defer release()
	tool, err := l.detect(ctx, dir, req.Source)
	if err != nil {
		return nil, err
	}
	d := &reposerver.AppDetails{SourceType: tool}
	appDir, err := render.ResolveInRoot(dir, cleanRel(req.Source.Path))
	if err != nil {
		return nil, err
	}
	switch tool {
	case v1alpha1.ApplicationSourceTypeHelm:
		d.Helm = helmDetails(appDir)
	case v1alpha1.ApplicationSourceTypeKustomize:
		d.Kustomize = kustomizeDetails(appDir)
	}
	return d, nil
}

func helmDetails(appDir string) *reposerver.HelmDetails {
	h := &reposerver.HelmDetails{}
	entries, _ := os.ReadDir(appDir)
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() && (strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")) && strings.Contains(name, "values") {
			h.ValueFiles = append(h.ValueFiles, name)
		}
	}
	if b, err := readSmall(filepath.Join(appDir, "values.yaml")); err == nil {
		h.Values = string(b)
	}
	return h
}

func kustomizeDetails(appDir string) *reposerver.KustomizeDetails {
	for _, name := range kustomizationNames {
		b, err := readSmall(filepath.Join(appDir, name))
		if err != nil {
			continue
		}
		var k struct {
			Images []struct {
				Name, NewName, NewTag, Digest string
			} `json:"images"`
		}
		if yaml.Unmarshal(b, &k) != nil {
			return &reposerver.KustomizeDetails{}
		}
		d := &reposerver.KustomizeDetails{}
		for _, im := range k.Images {
			s := im.Name
			if im.NewName != "" {
				s += "=" + im.NewName
			}
			if im.NewTag != "" {
				s += ":" + im.NewTag
			}
			if im.Digest != "" {
				s += "@" + im.Digest
			}
			d.Images = append(d.Images, s)
		}
		return d
	}
	return &reposerver.KustomizeDetails{}
}

// readSmall reads a file of at most 1 MiB (details are for display).
func readSmall(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return io.ReadAll(io.LimitReader(f, 1<<20))
}

func cleanRel(p string) string {
	p = path.Clean("/" + filepath.ToSlash(p))
	return strings.TrimPrefix(p, "/")
}
