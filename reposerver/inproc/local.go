package inproc

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/egress"
	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/cache"
	"github.com/graphcd/graphcd/reposerver/git"
	"github.com/graphcd/graphcd/reposerver/gittree"
	"github.com/graphcd/graphcd/reposerver/oci"
	"github.com/graphcd/graphcd/reposerver/render"
	"github.com/graphcd/graphcd/reposerver/render/helm"
	"github.com/graphcd/graphcd/reposerver/render/kustomize"
	"github.com/graphcd/graphcd/reposerver/render/plugin"
)

// Options configure Local.
type Options struct {
	// WorkDir holds Git working copies, pulled charts and unpacked OCI
	// artifacts.
	WorkDir string
	// Cache stores rendered manifests; nil disables caching.
	Cache *cache.Cache
	// Limits bound one render's output.
	Limits render.Limits
	// OCILimits bound what an OCI artifact source downloads and unpacks
	// (zero fields: the oci package's defaults).
	OCILimits oci.Limits
	// RenderTimeout bounds one render (default 90 s).
	RenderTimeout time.Duration
	// RevisionCacheTTL is how long resolved revisions are reused (default
	// 3 min).
	RevisionCacheTTL time.Duration
	// PluginSocketDir holds the Unix sockets of config-management plugin
	// servers (graphcd cmp-server); "" disables plugins.
	PluginSocketDir string
	// PluginTimeout bounds one plugin call (default plugin.DefaultClientTimeout).
	PluginTimeout time.Duration
	// AllowFileURLs permits file:// and local-path Git repositories (the
	// CLI's `admin render --repo PATH`; off for servers).
	AllowFileURLs bool
	// RootCAs are the certificate authorities of HTTPS servers that
	// value files are fetched from; nil means the system's.
	RootCAs *x509.CertPool
	// Worker, when set, runs each Helm, Kustomize and directory render in
	// a worker process under a memory limit; nil renders in this process.
	Worker *WorkerOptions
	Logger *slog.Logger
}

// DefaultRenderTimeout bounds a render when Options leave it unset.
const DefaultRenderTimeout = 90 * time.Second

// Local is the in-process Service.
type Local struct {
	opts   Options
	git    *git.Client
	egress *egress.Client
	// snapshots hold copies of remote bases' repositories.
	snapshots *snapshots
	charts    string
	oci       *oci.Puller
	flights   singleflight.Group
	workers   *workers // nil: render in process
	log       *slog.Logger
	// life ends every render in progress when Close is called; renders
	// are shared by identical requests, so no one caller's context may.
	life  context.Context
	close context.CancelFunc
}

var _ reposerver.Service = (*Local)(nil)

// New returns an in-process Service.
func New(opts Options) (*Local, error) {
	if opts.WorkDir == "" {
		return nil, errors.New("reposerver: WorkDir is required")
	}
	if opts.RenderTimeout <= 0 {
		opts.RenderTimeout = DefaultRenderTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	charts := filepath.Join(opts.WorkDir, "charts")
	if err := os.MkdirAll(charts, 0o700); err != nil {
		return nil, fmt.Errorf("reposerver: create chart cache: %w", err)
	}
	artifacts, err := oci.NewPuller(oci.Options{
		CacheDir: filepath.Join(opts.WorkDir, "oci"), RevisionCacheTTL: opts.RevisionCacheTTL, Limits: opts.OCILimits,
	})
	if err != nil {
		return nil, fmt.Errorf("reposerver: %w", err)
	}
	var w *workers
	if opts.Worker != nil {
		var err error
		if w, err = newWorkers(*opts.Worker); err != nil {
			return nil, err
		}
	}
	life, closeLife := context.WithCancel(context.Background())
	return &Local{
		workers: w,
		life:    life,
		close:   closeLife,
		opts:    opts,
		git: git.New(git.Options{
			WorkDir:          filepath.Join(opts.WorkDir, "git"),
			RevisionCacheTTL: opts.RevisionCacheTTL,
			AllowFileURLs:    opts.AllowFileURLs,
			Logger:           opts.Logger,
		}),
		egress:    egress.New(egress.Options{RootCAs: opts.RootCAs}),
		snapshots: newSnapshots(filepath.Join(opts.WorkDir, "snapshots")),
		charts:    charts,
		oci:       artifacts,
		log:       opts.Logger,
	}, nil
}

// isChart reports whether the source is a chart from a Helm repository or
// OCI registry rather than a path in Git or in an OCI artifact.
func isChart(req reposerver.ManifestRequest) bool {
	return !isArtifact(req) && (req.Source.Chart != "" || req.Repo.Type == reposerver.RepoTypeHelm)
}

// isArtifact reports whether the source is a path in an OCI artifact
// (Argo CD's OCI source): an oci:// URL, or a repository of type oci,
// without a chart. A Helm repository Secret that matches the URL lends
// its credentials and does not make it a chart.
func isArtifact(req reposerver.ManifestRequest) bool {
	return req.Source.Chart == "" && (req.Repo.Type == reposerver.RepoTypeOCI || oci.HasScheme(req.Repo.URL))
}

// isOCIRepo reports whether repo holds OCI artifacts rather than Git
// commits or Helm charts.
func isOCIRepo(repo reposerver.Repository) bool {
	return repo.Type == reposerver.RepoTypeOCI || (repo.Type != reposerver.RepoTypeHelm && oci.HasScheme(repo.URL))
}

// ociAuth is how repo's registry is reached.
func ociAuth(repo reposerver.Repository) oci.Auth {
	a := oci.Auth{PlainHTTP: repo.InsecureOCIForceHTTP}
	if c := repo.Credentials; c != nil {
		a.Username, a.Password, a.CACert, a.Insecure = c.Username, c.Password, c.CACert, c.Insecure
		a.TLSClientCert, a.TLSClientKey = c.TLSClientCert, c.TLSClientKey
	}
	return a
}

// revisionOf is the revision req renders: Revision, else the source's
// targetRevision.
func revisionOf(req reposerver.ManifestRequest) string {
	if req.Revision != "" {
		return req.Revision
	}
	return req.Source.TargetRevision
}

// ref is a source a render reads value files from ($ref/path), at its
// resolved revision.
type ref struct {
	name     string
	src      reposerver.RefSource
	revision string
	// files are the value files as the rendered source names them.
	files []string
}

// resolveRefs finds the ref sources req's value files name and resolves
// their revisions. A value file naming a ref the request does not carry,
// or one in a Helm repository, is an error: value files are read from Git.
func (l *Local) resolveRefs(ctx context.Context, req reposerver.ManifestRequest) ([]ref, error) {
	used := helm.RefValueFiles(req.Source)
	if len(used) == 0 {
		return nil, nil
	}
	names := slices.Sorted(maps.Keys(used))
	out := make([]ref, 0, len(names))
	for _, name := range names {
		src, ok := req.RefSources[name]
		if !ok {
			return nil, fmt.Errorf("values file %q: no source of the application has ref %q", used[name][0], strings.TrimPrefix(name, "$"))
		}
		if src.Repo.Type == reposerver.RepoTypeHelm {
			return nil, fmt.Errorf("values file %q: source %s is a Helm repository; value files are read from Git sources", used[name][0], name)
		}
		if isOCIRepo(src.Repo) || oci.HasScheme(src.Repo.URL) {
			return nil, fmt.Errorf("values file %q: source %s is an OCI repository; value files are read from Git sources", used[name][0], name)
		}
		rev, err := l.ResolveRevision(ctx, src.Repo, src.TargetRevision)
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", name, err)
		}
		out = append(out, ref{name: name, src: src, revision: rev, files: used[name]})
	}
	return out, nil
}

// maxFetchedValuesSize bounds the value files one render reads from
// other sources and from URLs, all together: they are held in memory and
// handed to the render worker, so a source naming one large file many
// times over must not cost more.
const maxFetchedValuesSize = 32 << 20

// fetchedFiles are the value files read for one render, within
// maxFetchedValuesSize.
type fetchedFiles struct {
	files map[string][]byte
	size  int
}

// add keeps data as value file name, or fails when the budget is spent.
func (f *fetchedFiles) add(name string, data []byte) error {
	if f.size += len(data); f.size > maxFetchedValuesSize {
		return fmt.Errorf("value files of other sources and URLs: more than %d bytes in all: %w", maxFetchedValuesSize, render.ErrTooLarge)
	}
	if f.files == nil {
		f.files = map[string][]byte{}
	}
	f.files[name] = data
	return nil
}

// readRefs reads the value files of refs into out, each from its own
// checkout, held only while its files are read: a render never holds two
// working copies at once, so renders cannot wait on each other's. A file
// that does not exist is left out for the renderer to judge
// (ignoreMissingValueFiles). With signatureKeys, each ref's commit must
// be signed as the rendered source's must.
func (l *Local) readRefs(ctx context.Context, refs []ref, env render.BuildEnv, signatureKeys []string, out *fetchedFiles) error {
	for _, r := range refs {
		if err := l.readRef(ctx, r, env, signatureKeys, out); err != nil {
			return err
		}
	}
	return nil
}

func (l *Local) readRef(ctx context.Context, r ref, env render.BuildEnv, signatureKeys []string, out *fetchedFiles) error {
	dir, release, err := l.git.Checkout(ctx, r.src.Repo.URL, r.src.Repo.Credentials, r.revision, git.CheckoutOptions{})
	if err != nil {
		return fmt.Errorf("source %s: %w", r.name, err)
	}
	defer release()
	if len(signatureKeys) > 0 {
		if _, err := git.VerifyCommitSignature(dir, r.revision, signatureKeys); err != nil {
			return fmt.Errorf("source %s revision %s: %w", r.name, shortSHA(r.revision), err)
		}
	}
	for _, f := range r.files {
		data, err := helm.ReadRefFile(dir, f, env)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := out.add(f, data); err != nil {
			return err
		}
	}
	return nil
}

// fetchRemote fetches the value files src names by URL into out, with
// no credentials, under the schemes tools allow (see package egress).
func (l *Local) fetchRemote(ctx context.Context, src v1alpha1.ApplicationSource, env render.BuildEnv, tools reposerver.ToolOptions, out *fetchedFiles) error {
	remote := helm.RemoteValueFiles(src, env)
	for _, name := range slices.Sorted(maps.Keys(remote)) {
		data, err := l.egress.Get(ctx, remote[name], tools.ValuesFileSchemes(), helm.MaxValuesFileSize)
		if errors.Is(err, egress.ErrTooLarge) {
			err = fmt.Errorf("%w: %w", err, render.ErrTooLarge)
		}
		if errors.Is(err, egress.ErrSchemeNotAllowed) {
			err = fmt.Errorf("%w (helm.valuesFileSchemes)", err)
		}
		if err != nil {
			return fmt.Errorf("values file %q: %w", name, err)
		}
		if err := out.add(name, data); err != nil {
			return err
		}
	}
	return nil
}

// GenerateManifests implements Service. Identical concurrent requests share
// one render.
func (l *Local) GenerateManifests(ctx context.Context, req reposerver.ManifestRequest) (_ *reposerver.ManifestResponse, err error) {
	ctx, span := startRenderSpan(ctx, req)
	defer func() { endRenderSpan(span, err) }()
	revision, err := l.resolveSource(ctx, req)
	if err != nil {
		return nil, err
	}
	renderRevision(span, revision)
	refs, err := l.resolveRefs(ctx, req)
	if err != nil {
		return nil, err
	}
	var refKeys map[string]refKey
	for _, r := range refs {
		if refKeys == nil {
			refKeys = map[string]refKey{}
		}
		refKeys[r.name] = refKey{Repo: repourl.Normalize(r.src.Repo.URL), Revision: r.revision}
	}
	// The source stays whole, target revision included: the build
	// environment (ARGOCD_APP_SOURCE_TARGET_REVISION) may put it into
	// the manifests.
	repos, err := repoKeys(req.Repos)
	if err != nil {
		return nil, err
	}
	ck := cacheKey{
		Repo: repourl.Normalize(req.Repo.URL), Revision: revision, Source: req.Source,
		AppName: req.AppName, Project: req.Project, Namespace: req.Namespace, KubeVersion: req.KubeVersion,
		APIVersions: req.APIVersions, Limits: l.opts.Limits, SignatureKeys: req.SignatureKeys, Refs: refKeys,
		Tools: req.Tools, Repos: repos,
	}
	key, err := cache.KeyOf(ck)
	if err != nil {
		return nil, err
	}
	if !req.NoCache && cacheable(req, revision) {
		if res, ok, err := l.fromCache(ctx, key); ok {
			cacheHits.Inc()
			renderFrom(span, "cache")
			return res, err
		}
	}
	v, err, shared := l.flights.Do(key, func() (any, error) {
		rctx, stop := l.renderContext(ctx)
		defer stop()
		rendersRun.Inc()
		start := time.Now()
		res, err := l.render(rctx, req, revision, refs)
		renderSeconds.WithLabelValues(strconv.FormatBool(err != nil)).Observe(time.Since(start).Seconds())
		l.toCache(ctx, key, ck.lineage(), res, err)
		return res, err
	})
	if err != nil {
		return nil, err
	}
	res := v.(*reposerver.ManifestResponse)
	if shared {
		renderFrom(span, "shared")
		// Callers own what they get (the controller marks and places the
		// objects): each caller of a shared render gets a copy of its own.
		out := *res
		out.Manifests = make([]*unstructured.Unstructured, len(res.Manifests))
		for i, m := range res.Manifests {
			out.Manifests[i] = m.DeepCopy()
		}
		res = &out
	}
	return res, nil
}

// resolveSource is the revision req renders: a commit SHA (Git), the
// manifest digest (an OCI artifact), or, for a chart, the version or
// constraint as it is (the chart pull resolves it).
func (l *Local) resolveSource(ctx context.Context, req reposerver.ManifestRequest) (string, error) {
	switch {
	case isArtifact(req):
		return l.oci.Resolve(ctx, req.Repo.URL, ociAuth(req.Repo), revisionOf(req))
	case isChart(req):
		return revisionOf(req), nil
	default:
		return l.ResolveRevision(ctx, req.Repo, revisionOf(req))
	}
}

// renderContext carries ctx's values but ends only when Local is closed:
// the render it runs is shared with every identical request.
func (l *Local) renderContext(ctx context.Context) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(l.life, cancel)
	return rctx, func() {
		stop()
		cancel()
	}
}

// Close stops every render in progress (killing its worker process), ends
// the idle workers and makes later renders fail at once: for a server that
// is shutting down.
func (l *Local) Close() {
	l.close()
	if l.workers != nil {
		l.workers.close()
	}
}

// worker process when Options.Worker is set), plugins over their socket.
func (l *Local) render(ctx context.Context, req reposerver.ManifestRequest, revision string, refs []ref) (*reposerver.ManifestResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, l.opts.RenderTimeout)
	defer cancel()
	rreq := render.Request{
		Path: req.Source.Path, Source: req.Source, AppName: req.AppName, Project: req.Project, Namespace: req.Namespace, Revision: revision,
		KubeVersion: req.KubeVersion, APIVersions: req.APIVersions, Limits: l.opts.Limits,
	}
	var fetched fetchedFiles
	if err := l.readRefs(ctx, refs, rreq.BuildEnv(), req.SignatureKeys, &fetched); err != nil {
		return nil, err
	}
	if err := l.fetchRemote(ctx, req.Source, rreq.BuildEnv(), req.Tools, &fetched); err != nil {
		return nil, err
	}
	rreq.FetchedFiles = fetched.files
	if isChart(req) {
		dir, err := l.pullChart(ctx, req, revision)
		if err != nil {
			return nil, err
		}
		objs, err := l.runJob(ctx, l.newJob(v1alpha1.ApplicationSourceTypeHelm, rreq, dir, req))
		if err != nil {
			return nil, fmt.Errorf("render chart %s %s: %w", req.Source.Chart, revision, err)
		}
		return &reposerver.ManifestResponse{Manifests: objs, Revision: revision, SourceType: v1alpha1.ApplicationSourceTypeHelm}, nil
	}
	dir, release, err := l.tree(ctx, req, revision, git.CheckoutOptions{Submodules: true})
	if err != nil {
		return nil, err
	}
	defer func() { release() }()
	if len(req.SignatureKeys) > 0 {
		keyID, err := git.VerifyCommitSignature(dir, revision, req.SignatureKeys)
		if err != nil {
			return nil, fmt.Errorf("revision %s: %w", shortSHA(revision), err)
		}
		l.log.DebugContext(ctx, "commit signature verified", "revision", revision, "key", keyID)
	}
	rreq.RepoRoot = dir
	tool, err := l.detect(ctx, dir, req.Source)
	if err != nil {
		return nil, err
	}
	if tool == v1alpha1.ApplicationSourceTypeKustomize {
		rreq.KustomizeBuildOptions = req.Tools.KustomizeBuildOptions
		needs, err := kustomize.Scan(dir, req.Source.Path)
		if err != nil {
			return nil, fmt.Errorf("kustomize %s: %w", req.Source.Path, err)
		}
		if len(needs.Remotes) > 0 || (len(needs.Charts) > 0 && kustomize.HelmEnabled(rreq.KustomizeBuildOptions)) {
			// The working copy goes back while the bases are fetched:
			// a render holds one working copy at a time (a base in
			// the same repository at another commit needs it).
			release()
			release = func() {}
			set, err := l.fetchRemotes(ctx, req, needs, &fetched)
			if err != nil {
				return nil, fmt.Errorf("kustomize %s: %w", req.Source.Path, err)
			}
			defer set.release()
			if len(set.needed) > 0 {
				return nil, &reposerver.RepositoriesNeededError{URLs: set.needed}
			}
			rreq.RemoteBases, rreq.HelmCharts, rreq.FetchedFiles = set.bases, set.charts, fetched.files
			if dir, release, err = l.tree(ctx, req, revision, git.CheckoutOptions{Submodules: true}); err != nil {
				return nil, err
			}
			rreq.RepoRoot = dir
		}
	}
	var objs []*unstructured.Unstructured
	switch tool {
	case v1alpha1.ApplicationSourceTypeHelm, v1alpha1.ApplicationSourceTypeKustomize, v1alpha1.ApplicationSourceTypeDirectory:
		objs, err = l.runJob(ctx, l.newJob(tool, rreq, "", req))
	case v1alpha1.ApplicationSourceTypePlugin:
		if l.opts.PluginSocketDir == "" {
			return nil, errors.New("the source needs a config-management plugin, and this repository server has no plugin socket directory")
		}
		objs, err = plugin.Render(ctx, rreq, plugin.ClientOptions{SocketDir: l.opts.PluginSocketDir, Timeout: l.opts.PluginTimeout})
	default:
		err = fmt.Errorf("source type %s is not supported by this repository server", tool)
	}
	if err != nil {
		return nil, fmt.Errorf("render %s path %q at %s: %w", tool, req.Source.Path, shortSHA(revision), err)
	}
	return &reposerver.ManifestResponse{Manifests: objs, Revision: revision, SourceType: tool}, nil
}

// ErrArtifactUnsigned refuses an OCI artifact to a project with
// signatureKeys: an artifact carries no commit signature to verify.
var ErrArtifactUnsigned = errors.New("the project requires commits signed by its signatureKeys, and an OCI artifact carries no commit signature")

// tree returns the files of a path source at revision: a Git working copy,
// or an OCI artifact's unpacked content (shared, read-only; release does
// nothing). An artifact is refused when signatures are required.
func (l *Local) tree(ctx context.Context, req reposerver.ManifestRequest, revision string, opts git.CheckoutOptions) (string, func(), error) {
	if !isArtifact(req) {
		return l.git.Checkout(ctx, req.Repo.URL, req.Repo.Credentials, revision, opts)
	}
	if len(req.SignatureKeys) > 0 {
		return "", nil, fmt.Errorf("OCI artifact %s: %w", repourl.Redact(req.Repo.URL), ErrArtifactUnsigned)
	}
	dir, err := l.oci.Pull(ctx, req.Repo.URL, ociAuth(req.Repo), revision)
	if err != nil {
		return "", nil, err
	}
	return dir, func() {}, nil
}

// detect is DetectSourceType, then, for what would be a plain directory,
// the discovery rules of the configured plugins (as Argo CD's sidecar
// plugins claim apps).
func (l *Local) detect(ctx context.Context, dir string, src v1alpha1.ApplicationSource) (v1alpha1.ApplicationSourceType, error) {
	tool, err := DetectSourceType(dir, src)
	if err != nil || tool != v1alpha1.ApplicationSourceTypeDirectory || src.Directory != nil || l.opts.PluginSocketDir == "" {
		return tool, err
	}
	if _, ok, err := plugin.Discover(ctx, l.opts.PluginSocketDir, dir, cleanRel(src.Path)); errors.Is(err, fs.ErrNotExist) {
		return tool, nil // no plugin server has started yet
	} else if err != nil {
		return "", err
	} else if ok {
		return v1alpha1.ApplicationSourceTypePlugin, nil
	}
	return tool, nil
}

// shortSHA shortens a commit SHA to 8 characters, and a digest to its
// algorithm and 12 characters.
func shortSHA(s string) string {
	if algo, hex, ok := strings.Cut(s, ":"); ok {
		if len(hex) > 12 {
			hex = hex[:12]
		}
		return algo + ":" + hex
	}
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

func (l *Local) pullChart(ctx context.Context, req reposerver.ManifestRequest, version string) (string, error) {
	pr := helm.PullRequest{
		RepoURL: req.Repo.URL, Chart: req.Source.Chart, Version: version,
		EnableOCI: req.Repo.EnableOCI, CacheDir: l.charts,
	}
	if c := req.Repo.Credentials; c != nil {
		pr.Username, pr.Password, pr.CACert, pr.Insecure = c.Username, c.Password, c.CACert, c.Insecure
	}
	pr.PlainHTTP = req.Repo.InsecureOCIForceHTTP
	if req.Source.Helm != nil {
		pr.PassCredentials = req.Source.Helm.PassCredentials
	}
	return helm.Pull(ctx, pr)
}

// ResolveRevision implements Service. For charts the version constraint is
// returned as it is: the chart pull resolves it. For an OCI repository it
// is the digest of the manifest the tag, constraint or digest names.
func (l *Local) ResolveRevision(ctx context.Context, repo reposerver.Repository, revision string) (string, error) {
	if repo.Type == reposerver.RepoTypeHelm {
		return revision, nil
	}
	if isOCIRepo(repo) {
		return l.oci.Resolve(ctx, repo.URL, ociAuth(repo), revision)
	}
	return l.git.ResolveRevision(ctx, repo.URL, repo.Credentials, revision)
}

// ListRefs implements Service.
func (l *Local) ListRefs(ctx context.Context, repo reposerver.Repository) (git.Refs, error) {
	if repo.Type == reposerver.RepoTypeHelm {
		return git.Refs{}, errors.New("list refs: not a Git repository")
	}
	if isOCIRepo(repo) {
		tags, err := l.oci.Tags(ctx, repo.URL, ociAuth(repo))
		return git.Refs{Tags: tags}, err
	}
	return l.git.ListRefs(ctx, repo.URL, repo.Credentials)
}

// TestRepository implements Service.
func (l *Local) TestRepository(ctx context.Context, repo reposerver.Repository) error {
	if repo.Type == reposerver.RepoTypeHelm {
		return errors.New("test repository: Helm repositories are checked when a chart is pulled")
	}
	if isOCIRepo(repo) {
		return l.oci.Test(ctx, repo.URL, ociAuth(repo))
	}
	return l.git.TestRepository(ctx, repo.URL, repo.Credentials)
}

// ListCommits implements Service.
func (l *Local) ListCommits(ctx context.Context, repo reposerver.Repository, revision string, limit int) ([]reposerver.Commit, error) {
	if repo.Type == reposerver.RepoTypeHelm || isOCIRepo(repo) {
		return nil, fmt.Errorf("list commits: %w", reposerver.ErrNotGit)
	}
	sha, err := l.ResolveRevision(ctx, repo, revision)
	if err != nil {
		return nil, err
	}
	return l.git.Log(ctx, repo.URL, repo.Credentials, sha, limit)
}

// MatchTree implements Service: it matches req in a checkout of the
// resolved commit, confined to it.
func (l *Local) MatchTree(ctx context.Context, repo reposerver.Repository, revision string, req gittree.Request) (*gittree.Result, error) {
	if repo.Type == reposerver.RepoTypeHelm || isOCIRepo(repo) {
		return nil, fmt.Errorf("match tree: %w", reposerver.ErrNotGit)
	}
	sha, err := l.ResolveRevision(ctx, repo, revision)
	if err != nil {
		return nil, err
	}
	dir, release, err := l.git.Checkout(ctx, repo.URL, repo.Credentials, sha, git.CheckoutOptions{})
	if err != nil {
		return nil, err
	}
	defer release()
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer func() { _ = root.Close() }()
	res, err := gittree.Match(root.FS(), req) // errors name paths in the checkout
	if err != nil {
		return nil, err
	}
	res.Revision = sha
	return res, nil
}

// InvalidateRevision forgets the resolved revisions of repoURL, so the next
// request sees new commits at once (a refresh, a webhook).
func (l *Local) InvalidateRevision(repoURL string) {
	l.git.InvalidateRevision(repoURL)
	l.oci.Invalidate(repoURL)
}
