package helm

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
)

// Credentials authenticate to a chart repository.
type Credentials struct {
	Username, Password string
	CACert             []byte // PEM bundle trusted besides the system roots
	Insecure           bool   // skip TLS verification
	PlainHTTP          bool   // OCI registry over http
}

// Dependencies says how Render fetches the chart dependencies that
// Chart.yaml declares but charts/ does not hold.
type Dependencies struct {
	// CacheDir caches fetched dependency charts (see PullRequest.CacheDir).
	// When empty, dependencies from http(s) and oci repositories fail.
	CacheDir string
	// Credentials returns the credentials for a repository URL; nil or a
	// nil result means anonymous access.
	Credentials func(repoURL string) *Credentials
	// Limits bound each download.
	Limits DownloadLimits
}

// buildDependencies adds to ch every dependency it declares that is not
// already in its charts/ directory, the in-memory equivalent of
// `helm dependency build` on a copy of the chart: the version comes from
// Chart.lock when it has the dependency, else from Chart.yaml's range.
// file:// dependencies are read from t relative to chartDir and must stay
// inside t; http(s) and oci dependencies are pulled into the cache.
func buildDependencies(ctx context.Context, t *tree, chartDir string, ch *chart.Chart, opts Dependencies, passCredentials bool) error {
	if ch.Metadata == nil {
		return nil
	}
	present := map[string]bool{}
	for _, sub := range ch.Dependencies() {
		present[sub.Name()] = true
	}
	for _, dep := range ch.Metadata.Dependencies {
		if dep == nil || present[dep.Name] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		sub, err := fetchDependency(ctx, t, chartDir, dep, lockedVersion(ch, dep), opts, passCredentials)
		if err != nil {
			return fmt.Errorf("dependency %q: %w", dep.Name, err)
		}
		if sub.Name() != dep.Name {
			return fmt.Errorf("dependency %q: repository returned chart %q", dep.Name, sub.Name())
		}
		ch.AddDependency(sub)
		present[dep.Name] = true
	}
	return nil
}

// lockedVersion returns the version Chart.lock pins dep to, or dep's range.
func lockedVersion(ch *chart.Chart, dep *chart.Dependency) string {
	if ch.Lock != nil {
		for _, l := range ch.Lock.Dependencies {
			if l != nil && l.Name == dep.Name && l.Repository == dep.Repository && l.Version != "" {
				return l.Version
			}
		}
	}
	return dep.Version
}

func fetchDependency(ctx context.Context, t *tree, chartDir string, dep *chart.Dependency, version string, opts Dependencies, passCredentials bool) (*chart.Chart, error) {
	repoURL := strings.TrimSpace(dep.Repository)
	switch {
	case repoURL == "":
		return nil, errors.New("no repository and not in charts/")
	case strings.HasPrefix(repoURL, "file://"):
		rel, err := relPath(filepath.ToSlash(filepath.Join(chartDir, filepath.FromSlash(strings.TrimPrefix(repoURL, "file://")))))
		if err != nil {
			return nil, err
		}
		return t.loadChart(filepath.ToSlash(rel))
	case strings.HasPrefix(repoURL, "@") || strings.HasPrefix(repoURL, "alias:"):
		return nil, fmt.Errorf("repository alias %q is not supported; use the repository URL", repoURL)
	case strings.HasPrefix(repoURL, "http://"), strings.HasPrefix(repoURL, "https://"), strings.HasPrefix(repoURL, "oci://"):
	default:
		return nil, errors.New("repository URL scheme is not file, http, https or oci")
	}
	if opts.CacheDir == "" {
		return nil, errors.New("no dependency cache directory configured")
	}
	req := PullRequest{
		RepoURL:         repoURL,
		Chart:           dep.Name,
		Version:         version,
		PassCredentials: passCredentials,
		CacheDir:        opts.CacheDir,
		Limits:          opts.Limits,
	}
	if opts.Credentials != nil {
		if c := opts.Credentials(repoURL); c != nil {
			req.Username, req.Password = c.Username, c.Password
			req.CACert, req.Insecure, req.PlainHTTP = c.CACert, c.Insecure, c.PlainHTTP
		}
	}
	dir, err := Pull(ctx, req)
	if err != nil {
		return nil, err
	}
	pt, err := openTree(dir)
	if err != nil {
		return nil, err
	}
	defer pt.close()
	return pt.loadChart(".")
}
