package helm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/repo"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/reposerver/archive"
	"github.com/graphcd/graphcd/reposerver/oci"
)

// Download limits used where a DownloadLimits field is zero.
const (
	// DefaultMaxIndexSize bounds a repository's index.yaml: 64 MiB.
	DefaultMaxIndexSize int64 = 64 << 20
	// DefaultMaxChartSize bounds a compressed chart archive: 20 MiB.
	DefaultMaxChartSize int64 = 20 << 20
	// DefaultMaxDecompressedSize bounds an unpacked chart: 100 MiB, as
	// Helm's own loader does.
	DefaultMaxDecompressedSize = archive.DefaultMaxSize
)

// maxChartFileSize bounds one file of a chart, as Helm's loader does.
const maxChartFileSize = archive.DefaultMaxFileSize

// ErrDownloadTooLarge is wrapped when an index, a chart archive or an
// unpacked chart exceeds its DownloadLimits. It is archive.ErrTooLarge,
// which OCI artifact pulls wrap too.
var ErrDownloadTooLarge = archive.ErrTooLarge

// DownloadLimits bound what Pull fetches and unpacks.
type DownloadLimits struct {
	MaxIndexSize        int64 // bytes of index.yaml; 0 means DefaultMaxIndexSize
	MaxChartSize        int64 // bytes of the compressed .tgz; 0 means DefaultMaxChartSize
	MaxDecompressedSize int64 // bytes of all unpacked files; 0 means DefaultMaxDecompressedSize
}

// WithDefaults returns l with every zero (or negative) field set to its
// default.
func (l DownloadLimits) WithDefaults() DownloadLimits {
	if l.MaxIndexSize <= 0 {
		l.MaxIndexSize = DefaultMaxIndexSize
	}
	if l.MaxChartSize <= 0 {
		l.MaxChartSize = DefaultMaxChartSize
	}
	if l.MaxDecompressedSize <= 0 {
		l.MaxDecompressedSize = DefaultMaxDecompressedSize
	}
	return l
}

// PullRequest names a chart in a Helm repository and says how to reach it.
type PullRequest struct {
	// RepoURL is an HTTP(S) Helm repository ("https://charts.example.com"),
	// an OCI repository ("oci://registry.example.com/charts"), or an OCI
	// repository without scheme when EnableOCI is set, as Argo CD allows.
	RepoURL string
	// Chart is the chart's name. For OCI it is appended to RepoURL; it may
	// be empty when RepoURL already names the chart.
	Chart string
	// Version is an exact version or a semver constraint ("1.2.3",
	// "^1.2", ">=1.0 <2"); empty or "*" picks the latest release, as
	// Argo CD's targetRevision for charts does.
	Version string
	// Username and Password authenticate to the repository (basic auth).
	Username, Password string
	// CACert is a PEM bundle trusted in addition to the system roots.
	CACert []byte
	// Insecure skips TLS certificate verification.
	Insecure bool
	// PlainHTTP talks to an OCI registry over http instead of https.
	PlainHTTP bool
	// EnableOCI treats a RepoURL without scheme as an OCI repository.
	EnableOCI bool
	// PassCredentials sends the credentials to a chart URL on another host
	// than the repository's (Helm's --pass-credentials).
	PassCredentials bool
	// CacheDir holds unpacked charts keyed by repository, chart and
	// version; a later Pull of the same version reuses them. Required.
	CacheDir string
	// Limits bound the download; zero fields take the defaults.
	Limits DownloadLimits
}

// Pull fetches a chart from a Helm HTTP repository (index.yaml, then the
// .tgz it points to) or an OCI registry, unpacks it into ref.CacheDir and
// returns the absolute directory of the unpacked chart, ready to render
// with ChartSource{Dir: dir}. Every download is size-bounded and digests
// are verified where the repository publishes them.
func Pull(ctx context.Context, ref PullRequest) (string, error) {
	if ref.CacheDir == "" {
		return "", errors.New("pull chart: no cache directory")
	}
	ref.Limits = ref.Limits.WithDefaults()
	if isOCI(ref) {
		return pullOCI(ctx, ref)
	}
	return pullHTTP(ctx, ref)
}

func isOCI(ref PullRequest) bool {
	if strings.HasPrefix(ref.RepoURL, "oci://") {
		return true
	}
	return ref.EnableOCI && !strings.Contains(ref.RepoURL, "://")
}

// pullHTTP resolves ref.Version in the repository's index and downloads
// the chart archive it names.
func pullHTTP(ctx context.Context, ref PullRequest) (string, error) {
	base, user, pass, err := parseRepoURL(ref)
	if err != nil {
		return "", err
	}
	shown := base.Redacted()
	if ref.Chart == "" {
		return "", fmt.Errorf("pull chart from %s: no chart name", shown)
	}
	hc, err := oci.HTTPClient(ref.CACert, ref.Insecure, nil, nil)
	if err != nil {
		return "", fmt.Errorf("pull chart %s from %s: %w", ref.Chart, shown, err)
	}
	if exactVersion(ref.Version) {
		if dir, ok := cachedChart(ref.CacheDir, "http", base.String(), ref.Chart, ref.Version); ok {
			return dir, nil
		}
	}

	indexURL := base.JoinPath("index.yaml")
	raw, err := httpGet(ctx, hc, indexURL, user, pass, ref.Limits.MaxIndexSize)
	if err != nil {
		return "", fmt.Errorf("fetch index of %s: %w", shown, err)
	}
	var idx repo.IndexFile
	if err := yaml.Unmarshal(raw, &idx); err != nil {
		return "", fmt.Errorf("parse index of %s: %w", shown, err)
	}
	for name, versions := range idx.Entries {
		kept := versions[:0]
		for _, v := range versions {
			if v != nil && v.Metadata != nil {
				kept = append(kept, v)
			}
		}
		idx.Entries[name] = kept
	}
	idx.SortEntries()
	cv, err := idx.Get(ref.Chart, versionConstraint(ref.Version))
	if err != nil {
		return "", fmt.Errorf("find chart %s %q in %s: %w", ref.Chart, ref.Version, shown, err)
	}
	if dir, ok := cachedChart(ref.CacheDir, "http", base.String(), ref.Chart, cv.Version); ok {
		return dir, nil
	}
	if len(cv.URLs) == 0 {
		return "", fmt.Errorf("chart %s %s in %s has no download URL", ref.Chart, cv.Version, shown)
	}
	chartURL, err := resolveChartURL(base, cv.URLs[0])
	if err != nil {
		return "", fmt.Errorf("chart %s %s in %s: %w", ref.Chart, cv.Version, shown, err)
	}
	cu, cp := user, pass
	if !ref.PassCredentials && !sameOrigin(base, chartURL) {
		cu, cp = "", ""
	}
	archive, err := httpGet(ctx, hc, chartURL, cu, cp, ref.Limits.MaxChartSize)
	if err != nil {
		return "", fmt.Errorf("download chart %s %s from %s: %w", ref.Chart, cv.Version, shown, err)
	}
	if cv.Digest != "" {
		sum := sha256.Sum256(archive)
		if !strings.EqualFold(hex.EncodeToString(sum[:]), strings.TrimPrefix(cv.Digest, "sha256:")) {
			return "", fmt.Errorf("download chart %s %s from %s: digest mismatch", ref.Chart, cv.Version, shown)
		}
	}
	return storeChart(ref.CacheDir, "http", base.String(), ref.Chart, cv.Version, archive, ref.Limits)
}

// parseRepoURL checks the repository URL and moves any user info out of
// it, so the URL can be shown in errors and used as a cache key.
func parseRepoURL(ref PullRequest) (*url.URL, string, string, error) {
	u, err := url.Parse(ref.RepoURL)
	if err != nil {
		return nil, "", "", errors.New("pull chart: repository URL does not parse")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, "", "", fmt.Errorf("pull chart: repository URL scheme %q is not http, https or oci", u.Scheme)
	}
	user, pass := ref.Username, ref.Password
	if u.User != nil {
		if user == "" {
			user = u.User.Username()
			pass, _ = u.User.Password()
		}
		u.User = nil
	}
	u.RawQuery, u.Fragment = "", ""
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, user, pass, nil
}

// resolveChartURL resolves a chart URL from the index against the
// repository URL (relative URLs are common) and checks its scheme.
func resolveChartURL(base *url.URL, ref string) (*url.URL, error) {
	r, err := url.Parse(ref)
	if err != nil {
		return nil, errors.New("chart URL does not parse")
	}
	dir := *base
	dir.Path += "/"
	u := dir.ResolveReference(r)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("chart URL scheme %q is not http or https", u.Scheme)
	}
	return u, nil
}

func sameOrigin(a, b *url.URL) bool {
	return a.Scheme == b.Scheme && strings.EqualFold(a.Host, b.Host)
}

// httpGet fetches u and returns at most limit bytes of its body; a longer
// body fails with ErrDownloadTooLarge. Errors never show credentials.
func httpGet(ctx context.Context, hc *http.Client, u *url.URL, user, pass string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	if user != "" || pass != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u.Redacted(), resp.Status)
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("GET %s: %d bytes is more than %d: %w", u.Redacted(), resp.ContentLength, limit, ErrDownloadTooLarge)
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: read body: %w", u.Redacted(), err)
	}
	if n > limit {
		return nil, fmt.Errorf("GET %s: body is more than %d bytes: %w", u.Redacted(), limit, ErrDownloadTooLarge)
	}
	return buf.Bytes(), nil
}

// exactVersion reports whether v names one version rather than a range.
func exactVersion(v string) bool {
	if v == "" || strings.ContainsAny(v, "*xX^~<>=|, ") {
		return false
	}
	_, err := semver.NewVersion(v)
	return err == nil
}

// versionConstraint maps Argo CD's "latest" spellings to Helm's.
func versionConstraint(v string) string {
	v = strings.TrimSpace(v)
	if v == "*" || v == "latest" {
		return ""
	}
	return v
}

// cacheKey names a cached chart by where it came from and its version.
func cacheKey(kind, repoURL, chartName, version string) string {
	h := sha256.New()
	for _, s := range []string{kind, repoURL, chartName, version} {
		_, _ = io.WriteString(h, s)
		_, _ = h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:40]
}

// cachedChart returns the unpacked chart dir of a previous Pull, if any.
func cachedChart(cacheDir, kind, repoURL, chartName, version string) (string, bool) {
	dir := filepath.Join(cacheDir, cacheKey(kind, repoURL, chartName, version), "chart")
	if fi, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err == nil && fi.Mode().IsRegular() {
		abs, err := filepath.Abs(dir)
		return abs, err == nil
	}
	return "", false
}

// storeChart unpacks archive into a fresh directory of the cache and moves
// it into place atomically, so a concurrent Pull never sees half a chart.
func storeChart(cacheDir, kind, repoURL, chartName, version string, archive []byte, lim DownloadLimits) (string, error) {
	if err := os.MkdirAll(cacheDir, 0o750); err != nil {
		return "", fmt.Errorf("create chart cache: %w", err)
	}
	tmp, err := os.MkdirTemp(cacheDir, ".pull-")
	if err != nil {
		return "", fmt.Errorf("create chart cache entry: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := extractChart(bytes.NewReader(archive), filepath.Join(tmp, "chart"), lim); err != nil {
		return "", fmt.Errorf("unpack chart %s %s: %w", chartName, version, err)
	}
	final := filepath.Join(cacheDir, cacheKey(kind, repoURL, chartName, version))
	if err := os.Rename(tmp, final); err != nil && !errors.Is(err, fs.ErrExist) {
		// Another Pull may have stored the same chart meanwhile.
		if dir, ok := cachedChart(cacheDir, kind, repoURL, chartName, version); ok {
			return dir, nil
		}
		return "", fmt.Errorf("store chart %s %s in cache: %w", chartName, version, err)
	}
	if dir, ok := cachedChart(cacheDir, kind, repoURL, chartName, version); ok {
		return dir, nil
	}
	return "", fmt.Errorf("store chart %s %s in cache: entry missing after unpack", chartName, version)
}
