package inproc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/graphcd/graphcd/internal/egress"
	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/git"
	"github.com/graphcd/graphcd/reposerver/render"
	"github.com/graphcd/graphcd/reposerver/render/helm"
	"github.com/graphcd/graphcd/reposerver/render/kustomize"
)

// Limits of the remote bases of one render.
const (
	// maxRemoteBases bounds the remote bases one render fetches, nested
	// ones included.
	maxRemoteBases = 32
	// maxRemoteDepth bounds how deep remote bases may nest.
	maxRemoteDepth = 8
)

// remoteFileSchemes are the schemes of files a kustomization may name by
// URL: kustomize's.
var remoteFileSchemes = []string{"https", "http"}

// remoteSet is what a render's kustomizations fetched: the bases, the
// files (in fetched), the pulled charts, and the snapshots it holds until
// release.
type remoteSet struct {
	bases    map[string]render.RemoteBase
	charts   map[string]string
	releases []func()
	// needed are the repositories of remote bases the request does not
	// carry.
	needed []string
}

func (s *remoteSet) release() {
	for _, r := range s.releases {
		r()
	}
}

// fetchRemotes fetches what the kustomizations need (found in the
// source's checkout) and what the bases they lead to need, depth first:
// each base from a snapshot of its repository at the revision it names,
// taken through the Git layer with the credentials of the matching entry
// of req.Repos; each file through egress; each chart of helmCharts
// pulled from its repository, when kustomize.buildOptions enable Helm. A
// base or chart whose repository req.Repos lacks is recorded in needed
// (and not followed); a base that leads back to itself is a cycle.
func (l *Local) fetchRemotes(ctx context.Context, req reposerver.ManifestRequest, needs kustomize.Needs, fetched *fetchedFiles) (*remoteSet, error) {
	set := &remoteSet{bases: map[string]render.RemoteBase{}, charts: map[string]string{}}
	w := &remoteWalk{l: l, req: req, set: set, fetched: fetched, done: map[string]bool{}, helm: kustomize.HelmEnabled(req.Tools.KustomizeBuildOptions)}
	err := w.add(ctx, needs, nil)
	if err == nil {
		err = w.pullCharts(ctx)
	}
	if err != nil {
		set.release()
		return nil, err
	}
	return set, nil
}

type remoteWalk struct {
	l       *Local
	req     reposerver.ManifestRequest
	set     *remoteSet
	fetched *fetchedFiles
	// done are the entries fetched, by Ref.
	done map[string]bool
	n    int
	// helm is whether helmCharts inflate; charts are those to pull.
	helm   bool
	charts []kustomize.Chart
}

// add fetches what a kustomization reached through path needs.
func (w *remoteWalk) add(ctx context.Context, needs kustomize.Needs, path []string) error {
	if w.helm {
		w.charts = append(w.charts, needs.Charts...)
	}
	for _, r := range needs.Remotes {
		if err := w.fetch(ctx, r, path); err != nil {
			return err
		}
	}
	return nil
}

// pullCharts pulls each chart once, with the credentials of its
// repository's entry of req.Repos.
func (w *remoteWalk) pullCharts(ctx context.Context) error {
	for _, c := range w.charts {
		key := render.ChartKey(c.Repo, c.Name, c.Version)
		if _, ok := w.set.charts[key]; ok {
			continue
		}
		repo, ok := w.repository(c.Repo)
		if !ok {
			if !slices.Contains(w.set.needed, c.Repo) {
				w.set.needed = append(w.set.needed, c.Repo)
			}
			continue
		}
		if err := checkRemoteHost(ctx, c.Repo); err != nil {
			return fmt.Errorf("helmCharts %s from %s: %w", c.Name, repourl.Redact(c.Repo), err)
		}
		if w.n++; w.n > maxRemoteBases {
			return fmt.Errorf("more than %d remote bases, files and charts: %w", maxRemoteBases, render.ErrTooLarge)
		}
		pr := helm.PullRequest{RepoURL: c.Repo, Chart: c.Name, Version: c.Version, CacheDir: w.l.charts}
		if cr := repo.Credentials; cr != nil {
			pr.Username, pr.Password, pr.CACert, pr.Insecure = cr.Username, cr.Password, cr.CACert, cr.Insecure
		}
		dir, err := helm.Pull(ctx, pr)
		if err != nil {
			return fmt.Errorf("helmCharts %s: %w", c.Name, err)
		}
		w.set.charts[key] = dir
	}
	return nil
}

// fetch fetches r, whose kustomization is reached through the bases in
// path (for cycles and depth).
func (w *remoteWalk) fetch(ctx context.Context, r kustomize.Remote, path []string) error {
	if slices.Contains(path, r.Ref) {
		return fmt.Errorf("remote base cycle: %s", strings.Join(append(path, r.Ref), " -> "))
	}
	if w.done[r.Ref] {
		return nil
	}
	if len(path) >= maxRemoteDepth {
		return fmt.Errorf("remote bases nest more than %d deep: %s", maxRemoteDepth, strings.Join(append(path, r.Ref), " -> "))
	}
	if w.n++; w.n > maxRemoteBases {
		return fmt.Errorf("more than %d remote bases, files and charts: %w", maxRemoteBases, render.ErrTooLarge)
	}
	w.done[r.Ref] = true
	if r.File {
		data, err := w.l.egress.Get(ctx, r.Ref, remoteFileSchemes, render.DefaultMaxManifestSize)
		if errors.Is(err, egress.ErrTooLarge) {
			err = fmt.Errorf("%w: %w", err, render.ErrTooLarge)
		}
		if err != nil {
			return fmt.Errorf("remote resource: %w", err)
		}
		return w.fetched.add(r.Ref, data)
	}
	repo, ok := w.repository(r.RepoURL)
	if !ok {
		if !slices.Contains(w.set.needed, r.RepoURL) {
			w.set.needed = append(w.set.needed, r.RepoURL)
		}
		return nil
	}
	if err := checkRemoteHost(ctx, r.RepoURL); err != nil {
		return fmt.Errorf("remote base %s: %w", repourl.Redact(r.Ref), err)
	}
	sha, err := w.l.git.ResolveRevision(ctx, repo.URL, repo.Credentials, r.Revision)
	if err != nil {
		return fmt.Errorf("remote base %s: %w", repourl.Redact(r.Ref), err)
	}
	dir, release, err := w.l.snapshots.get(ctx, repourl.Normalize(repo.URL), sha, func(ctx context.Context, dst string) error {
		src, done, err := w.l.git.Checkout(ctx, repo.URL, repo.Credentials, sha, git.CheckoutOptions{})
		if err != nil {
			return err
		}
		defer done()
		if err := copyTree(ctx, src, dst); err != nil {
			return render.Bare(err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("remote base %s: %w", repourl.Redact(r.Ref), err)
	}
	w.set.releases = append(w.set.releases, release)
	w.set.bases[r.Ref] = render.RemoteBase{Root: dir, Path: r.Path}
	nested, err := kustomize.Scan(dir, r.Path)
	if err != nil {
		return fmt.Errorf("remote base %s: %w", repourl.Redact(r.Ref), err)
	}
	return w.add(ctx, nested, append(path, r.Ref))
}

// repository returns the entry of req.Repos for repoURL.
func (w *remoteWalk) repository(repoURL string) (reposerver.Repository, bool) {
	key := repourl.Normalize(repoURL)
	for _, r := range w.req.Repos {
		if repourl.Normalize(r.URL) == key {
			r.URL = repoURL
			return r, true
		}
	}
	return reposerver.Repository{}, false
}

// checkRemoteHost refuses a remote base on a host specs may not point
// graphcd at (egress.CheckIP), by the addresses its name has now.
func checkRemoteHost(ctx context.Context, repoURL string) error {
	return egress.CheckResolved(ctx, repourl.Parse(repoURL).Host())
}
