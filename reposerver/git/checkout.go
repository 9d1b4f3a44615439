package git

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/graphcd/graphcd/internal/repourl"
)

// CheckoutOptions tune Checkout.
type CheckoutOptions struct {
	// Submodules checks out submodules recursively. Submodules on the same
	// host as the parent get its credentials; others are fetched without.
	Submodules bool
}

// maxSubmoduleDepth bounds nested submodules.
const maxSubmoduleDepth = 5

// unshallowDepth asks the server for the whole history of a shallow copy
// (what `git fetch --unshallow` sends).
const unshallowDepth = 2147483647

// checkoutRef keeps the last commit fetched by SHA reachable locally.
const checkoutRef = "refs/graphcd/checkout"

// Checkout makes the working copy of repoURL show exactly commit sha and
// returns its directory. The copy stays locked until release is called;
// concurrent callers for the same commit share it (so they must not modify
// it), callers for another commit wait. When the commit is missing it is
// fetched once, shallowly when the server allows fetching by SHA and fully
// otherwise; untracked files left by earlier users are removed.
func (c *Client) Checkout(ctx context.Context, repoURL string, creds *Credentials, sha string, opts CheckoutOptions) (dir string, release func(), err error) {
	ep, err := parseURL(repoURL, c.opts.AllowFileURLs)
	if err != nil {
		return "", nil, err
	}
	if !isFullSHA(sha) {
		return "", nil, fmt.Errorf("%w %q: Checkout needs a 40-hex commit SHA (use ResolveRevision)", ErrInvalidRevision, sha)
	}
	sha = strings.ToLower(sha)
	if err := c.checkAccess(ctx, ep, creds); err != nil {
		return "", nil, err
	}
	wc := c.workingCopy(ep.normalized)
	done := waiting(ep)
	shared, err := wc.acquire(ctx, sha, opts.Submodules)
	done()
	if err != nil {
		return "", nil, err
	}
	if shared {
		return wc.dir, wc.releaser(), nil
	}
	ok := false
	defer func() { wc.finishExclusive(sha, opts.Submodules, ok) }()
	if err := c.prepare(ctx, wc.dir, ep, creds, plumbing.NewHash(sha), opts); err != nil {
		return "", nil, err
	}
	ok = true
	return wc.dir, wc.releaser(), nil
}

// prepare fetches (if needed), checks out and cleans; the caller holds the
// working copy exclusively.
func (c *Client) prepare(ctx context.Context, dir string, ep *endpoint, creds *Credentials, hash plumbing.Hash, opts CheckoutOptions) error {
	repo, err := openOrInit(dir, ep.fetchURL)
	if err != nil {
		return fmt.Errorf("working copy for %s: %w", repourl.Redact(ep.fetchURL), err)
	}
	if err := c.fetchCommit(ctx, repo, ep, creds, hash); err != nil {
		return err
	}
	if err := checkoutClean(repo, hash); err != nil {
		return fmt.Errorf("checkout %s of %s: %w", hash, repourl.Redact(ep.fetchURL), err)
	}
	if opts.Submodules {
		if err := c.updateSubmodules(ctx, repo, ep, creds, 1); err != nil {
			return err
		}
	}
	c.log.DebugContext(ctx, "checked out", "repo", repourl.Redact(ep.fetchURL), "sha", hash.String())
	return nil
}

// openOrInit opens the repository in dir, or starts a fresh one when it is
// missing or unreadable. The stored remote URL never holds credentials.
func openOrInit(dir, remoteURL string) (*gogit.Repository, error) {
	repo, err := gogit.PlainOpen(dir)
	if err != nil {
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, err
		}
		repo, err = gogit.PlainInit(dir, false)
		if err != nil {
			return nil, err
		}
	}
	if err := setOrigin(repo, remoteURL); err != nil {
		return nil, err
	}
	return repo, nil
}

func setOrigin(repo *gogit.Repository, remoteURL string) error {
	cfg, err := repo.Config()
	if err != nil {
		return err
	}
	if rc, ok := cfg.Remotes["origin"]; ok && len(rc.URLs) == 1 && rc.URLs[0] == remoteURL {
		return nil
	}
	cfg.Remotes["origin"] = &config.RemoteConfig{
		Name:  "origin",
		URLs:  []string{remoteURL},
		Fetch: []config.RefSpec{"+refs/heads/*:refs/remotes/origin/*"},
	}
	return repo.SetConfig(cfg)
}

// hasCommit reports whether the commit object is stored locally.
func hasCommit(repo *gogit.Repository, hash plumbing.Hash) bool {
	_, err := repo.CommitObject(hash)
	return err == nil
}

// fetchCommit makes hash available in repo: by SHA (depth 1 on a fresh or
// shallow copy) when the server allows it, else by fetching all branches
// and tags.
func (c *Client) fetchCommit(ctx context.Context, repo *gogit.Repository, ep *endpoint, creds *Credentials, hash plumbing.Hash) error {
	if hasCommit(repo, hash) {
		return nil
	}
	shallow, err := repo.Storer.Shallow()
	if err != nil {
		return fmt.Errorf("read shallow list: %w", err)
	}
	empty := isEmptyRepo(repo)
	depth := 0
	if empty || len(shallow) > 0 {
		depth = 1
	}
	spec := config.RefSpec("+" + hash.String() + ":" + checkoutRef)
	err = c.fetch(ctx, repo, ep, creds, []config.RefSpec{spec}, depth, gogit.NoTags)
	if errors.Is(err, gogit.ErrExactSHA1NotSupported) {
		full := 0
		if len(shallow) > 0 {
			full = unshallowDepth
		}
		err = c.fetch(ctx, repo, ep, creds, []config.RefSpec{"+refs/heads/*:refs/remotes/origin/*"}, full, gogit.AllTags)
	}
	if err != nil {
		return err
	}
	if !hasCommit(repo, hash) {
		return fmt.Errorf("commit %s in %s: %w", hash, repourl.Redact(ep.fetchURL), ErrRevisionNotFound)
	}
	return nil
}

func isEmptyRepo(repo *gogit.Repository) bool {
	iter, err := repo.References()
	if err != nil {
		return true
	}
	defer iter.Close()
	empty := true
	_ = iter.ForEach(func(r *plumbing.Reference) error {
		if r.Type() == plumbing.HashReference {
			empty = false
		}
		return nil
	})
	return empty
}

// fetch runs one go-git fetch with per-call auth and TLS settings.
func (c *Client) fetch(ctx context.Context, repo *gogit.Repository, ep *endpoint, creds *Credentials, specs []config.RefSpec, depth int, tags gogit.TagMode) error {
	no, err := netOptionsFor(ep, creds)
	if err != nil {
		return scrub(fmt.Errorf("fetch %s: %w", repourl.Redact(ep.fetchURL), err), creds, ep.password)
	}
	release, err := c.acquireNet(ctx)
	if err != nil {
		return err
	}
	defer release()
	c.log.DebugContext(ctx, "fetch", "repo", repourl.Redact(ep.fetchURL), "depth", depth)
	defer countRequest(ep, requestFetch, time.Now())
	err = repo.FetchContext(ctx, &gogit.FetchOptions{
		RemoteName:      "origin",
		RemoteURL:       ep.fetchURL,
		RefSpecs:        specs,
		Depth:           depth,
		Auth:            no.auth,
		Tags:            tags,
		Force:           true,
		InsecureSkipTLS: no.insecure,
		ClientCert:      no.clientCert,
		ClientKey:       no.clientKey,
		CABundle:        no.caBundle,
	})
	switch {
	case err == nil, errors.Is(err, gogit.NoErrAlreadyUpToDate):
		return nil
	case errors.Is(err, gogit.ErrExactSHA1NotSupported):
		return err
	default:
		countFetchFailure(ep, specs)
		return wrapNetErr("fetch", ep, creds, err)
	}
}

// checkoutClean forces the worktree to hash (checkoutTree) and removes
// everything that is not tracked (like `git clean -ffdx`), so leftovers of
// an earlier user never leak into the next render.
func checkoutClean(repo *gogit.Repository, hash plumbing.Hash) error {
	wt, err := repo.Worktree()
	if err != nil {
		return err
	}
	idx, err := checkoutTree(repo, hash, defaultCheckoutLimits)
	if err != nil {
		return err
	}
	return removeUntracked(idx, wt.Filesystem.Root())
}

// removeUntracked deletes every path under root that idx does not track.
// Symlinks are removed, never followed; submodule directories are left to
// their own clean.
func removeUntracked(idx *index.Index, root string) error {
	files := make(map[string]bool, len(idx.Entries))
	dirs := map[string]bool{}
	submodules := map[string]bool{}
	for _, e := range idx.Entries {
		p := filepath.FromSlash(e.Name)
		if e.Mode == filemode.Submodule {
			submodules[p] = true
		} else {
			files[p] = true
		}
		for d := filepath.Dir(p); d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }()
	// Walking through the Root never follows a symlink out of the checkout;
	// symlinks are listed as entries and removed as links.
	return fs.WalkDir(r.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		name := filepath.FromSlash(rel)
		if name == gogit.GitDirName {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case submodules[name]:
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		case d.IsDir() && dirs[name]:
			return nil
		case !d.IsDir() && files[name]:
			return nil
		}
		if err := r.RemoveAll(name); err != nil {
			return err
		}
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
}

// resolveShortSHA fetches the full history into the working copy (holding
// it exclusively) and resolves an abbreviated commit id there.
func (c *Client) resolveShortSHA(ctx context.Context, ep *endpoint, creds *Credentials, short string) (string, error) {
	wc := c.workingCopy(ep.normalized)
	if _, err := wc.acquire(ctx, "", false); err != nil {
		return "", err
	}
	defer wc.finishExclusiveKeep()
	repo, err := openOrInit(wc.dir, ep.fetchURL)
	if err != nil {
		return "", fmt.Errorf("working copy for %s: %w", repourl.Redact(ep.fetchURL), err)
	}
	if h, ok := lookupPrefix(repo, short); ok {
		return h, nil
	}
	shallow, err := repo.Storer.Shallow()
	if err != nil {
		return "", fmt.Errorf("read shallow list: %w", err)
	}
	depth := 0
	if len(shallow) > 0 {
		depth = unshallowDepth
	}
	if err := c.fetch(ctx, repo, ep, creds, []config.RefSpec{"+refs/heads/*:refs/remotes/origin/*"}, depth, gogit.AllTags); err != nil {
		return "", err
	}
	if h, ok := lookupPrefix(repo, short); ok {
		return h, nil
	}
	return "", fmt.Errorf("resolve %q in %s: %w", short, repourl.Redact(ep.fetchURL), ErrRevisionNotFound)
}

// lookupPrefix finds the commit whose id starts with short.
func lookupPrefix(repo *gogit.Repository, short string) (string, bool) {
	h, err := repo.ResolveRevision(plumbing.Revision(short))
	if err != nil || !strings.HasPrefix(h.String(), short) {
		return "", false
	}
	return h.String(), true
}
