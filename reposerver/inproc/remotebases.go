package inproc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/graphcd/graphcd/internal/egress"
	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/git"
	"github.com/graphcd/graphcd/reposerver/render"
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
// files (in fetched), and the snapshots it holds until release.
type remoteSet struct {
	bases    map[string]render.RemoteBase
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

// fetchRemotes fetches the remote bases and files of remotes (found in
// the source's checkout) and of the bases they lead to, depth first:
// each base from a snapshot of its repository at the revision it names,
// taken through the Git layer with the credentials of the matching entry
// of req.Repos; each file through egress. A base whose repository
// req.Repos lacks is recorded in needed (and not followed); a base that
// leads back to itself is a cycle.
func (l *Local) fetchRemotes(ctx context.Context, req reposerver.ManifestRequest, remotes []kustomize.Remote, fetched *fetchedFiles) (*remoteSet, error) {
	set := &remoteSet{bases: map[string]render.RemoteBase{}}
	w := &remoteWalk{l: l, req: req, set: set, fetched: fetched, done: map[string]bool{}}
	for _, r := range remotes {
		if err := w.fetch(ctx, r, nil); err != nil {
			set.release()
			return nil, err
		}
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
		return fmt.Errorf("more than %d remote bases and files: %w", maxRemoteBases, render.ErrTooLarge)
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
			return withoutPath(err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("remote base %s: %w", repourl.Redact(r.Ref), err)
	}
	w.set.releases = append(w.set.releases, release)
	w.set.bases[r.Ref] = render.RemoteBase{Root: dir, Path: r.Path}
	nested, err := kustomize.ScanRemotes(dir, r.Path)
	if err != nil {
		return fmt.Errorf("remote base %s: %w", repourl.Redact(r.Ref), err)
	}
	for _, n := range nested {
		if err := w.fetch(ctx, n, append(path, r.Ref)); err != nil {
			return err
		}
	}
	return nil
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

// withoutPath drops the host path a file system error carries.
func withoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
