package git

import (
	"context"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/reposerver/revisioncache"
)

// InvalidateRevision forgets every cached resolution for repoURL, e.g. when
// a webhook reports a push.
func (c *Client) InvalidateRevision(repoURL string) {
	if ep, err := parseURL(repoURL, true); err == nil {
		c.cache.Invalidate(ep.normalized)
	}
}

// ResolveRevision turns revision into a 40-hex commit SHA. See the package
// documentation for the accepted forms. Results are cached per repository,
// credentials and revision for Options.RevisionCacheTTL (failures for
// revisioncache.FailureTTL), and concurrent identical lookups share one
// ls-remote.
func (c *Client) ResolveRevision(ctx context.Context, repoURL string, creds *Credentials, revision string) (string, error) {
	ep, err := parseURL(repoURL, c.opts.AllowFileURLs)
	if err != nil {
		return "", err
	}
	revision = strings.TrimSpace(revision)
	if err := validateRevision(revision); err != nil {
		return "", err
	}
	// A commit SHA needs no lookup, but the caller must still be able to
	// reach the repository with its credentials (see checkAccess).
	if isFullSHA(revision) {
		if err := c.checkAccess(ctx, ep, creds); err != nil {
			return "", err
		}
		return strings.ToLower(revision), nil
	}
	key := revisioncache.Key{Repo: ep.normalized, Creds: creds.fingerprint(), Revision: revision}
	if sha, ok := c.cache.Get(key); ok {
		return sha, nil
	}
	if err := c.cache.Failure(key); err != nil {
		return "", err
	}
	gen := c.cache.Generation(key.Repo)
	v, err, _ := c.resolve.Do(revisioncache.FlightKey(key, gen), func() (any, error) {
		if sha, ok := c.cache.Get(key); ok {
			return sha, nil
		}
		if err := c.cache.Failure(key); err != nil {
			return "", err
		}
		sha, err := c.resolveRemote(ctx, ep, creds, revision)
		if err != nil {
			if ctx.Err() == nil { // the remote's answer, not this caller giving up
				c.cache.PutFailure(key, err, gen)
			}
			return "", err
		}
		c.cache.Put(key, sha, gen)
		// The ls-remote just made is also proof of access.
		c.cache.Put(revisioncache.Key{Repo: key.Repo, Creds: key.Creds, Revision: accessChecked}, accessChecked, gen)
		return sha, nil
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

// accessChecked is the revision under which the revision cache remembers
// that credentials reached a repository; it is no valid revision, so it
// never meets a real one.
const accessChecked = "\x00access"

// checkAccess makes sure creds reach the repository at ep. Working copies
// and the manifest cache are shared by every caller, so what one caller's
// credentials fetched must not be handed to a caller the remote would
// refuse, however it names the commit. It costs one ls-remote per
// repository and credentials, remembered like a resolved revision (and
// answered by any resolution those credentials made).
func (c *Client) checkAccess(ctx context.Context, ep *endpoint, creds *Credentials) error {
	key := revisioncache.Key{Repo: ep.normalized, Creds: creds.fingerprint(), Revision: accessChecked}
	if _, ok := c.cache.Get(key); ok {
		return nil
	}
	gen := c.cache.Generation(key.Repo)
	_, err, _ := c.resolve.Do(revisioncache.FlightKey(key, gen), func() (any, error) {
		if _, ok := c.cache.Get(key); ok {
			return nil, nil
		}
		if _, err := c.lsRemote(ctx, ep, creds); err != nil {
			return nil, err
		}
		c.cache.Put(key, accessChecked, gen)
		return nil, nil
	})
	return err
}

func (c *Client) resolveRemote(ctx context.Context, ep *endpoint, creds *Credentials, revision string) (string, error) {
	refs, err := c.lsRemote(ctx, ep, creds)
	if err != nil {
		return "", err
	}
	sha, ok, err := resolveFromRefs(refs, revision)
	if err != nil {
		return "", fmt.Errorf("resolve %q in %s: %w", revision, repourl.Redact(ep.fetchURL), err)
	}
	if ok {
		return sha, nil
	}
	if isShortSHA(revision) {
		return c.resolveShortSHA(ctx, ep, creds, strings.ToLower(revision))
	}
	return "", fmt.Errorf("resolve %q in %s: %w", revision, repourl.Redact(ep.fetchURL), ErrRevisionNotFound)
}

// refTable indexes ls-remote output: name -> commit (annotated tags peeled).
type refTable struct {
	hashes map[string]string
	head   string // target of the symbolic HEAD, if advertised
}

func newRefTable(refs []*plumbing.Reference) refTable {
	t := refTable{hashes: map[string]string{}}
	peeled := map[string]string{}
	for _, r := range refs {
		name := string(r.Name())
		switch {
		case r.Type() == plumbing.SymbolicReference:
			if name == "HEAD" {
				t.head = string(r.Target())
			}
		case strings.HasSuffix(name, "^{}"):
			peeled[strings.TrimSuffix(name, "^{}")] = r.Hash().String()
		default:
			t.hashes[name] = r.Hash().String()
		}
	}
	for name, h := range peeled {
		t.hashes[name] = h
	}
	if t.head != "" {
		if h, ok := t.hashes[t.head]; ok {
			t.hashes["HEAD"] = h
		}
	}
	return t
}

// resolveFromRefs resolves revision using only advertised refs. ok is false
// when the revision may still be an abbreviated SHA known only to history.
func resolveFromRefs(refs []*plumbing.Reference, revision string) (sha string, ok bool, err error) {
	t := newRefTable(refs)
	if revision == "" || revision == "HEAD" {
		if h, found := t.hashes["HEAD"]; found {
			return h, true, nil
		}
		for _, b := range []string{"refs/heads/main", "refs/heads/master"} {
			if h, found := t.hashes[b]; found {
				return h, true, nil
			}
		}
		return "", false, fmt.Errorf("remote advertises no HEAD: %w", ErrRevisionNotFound)
	}
	for _, name := range []string{revision, "refs/heads/" + revision, "refs/tags/" + revision} {
		if !strings.HasPrefix(name, "refs/") {
			continue
		}
		if h, found := t.hashes[name]; found {
			return h, true, nil
		}
	}
	if strings.HasPrefix(revision, "refs/") {
		return "", false, ErrRevisionNotFound
	}
	if c, cerr := semver.NewConstraint(revision); cerr == nil {
		if h, found := highestTag(t, c); found {
			return h, true, nil
		}
		if !isShortSHA(revision) {
			return "", false, fmt.Errorf("no tag satisfies %q: %w", revision, ErrRevisionNotFound)
		}
	}
	if isShortSHA(revision) {
		prefix := strings.ToLower(revision)
		var match string
		for _, h := range t.hashes {
			if strings.HasPrefix(h, prefix) {
				if match != "" && match != h {
					return "", false, fmt.Errorf("abbreviated SHA %q is ambiguous", revision)
				}
				match = h
			}
		}
		if match != "" {
			return match, true, nil
		}
		return "", false, nil
	}
	return "", false, ErrRevisionNotFound
}

// highestTag picks the greatest semantic-version tag satisfying c.
func highestTag(t refTable, c *semver.Constraints) (string, bool) {
	var best *semver.Version
	var bestSHA string
	for name, h := range t.hashes {
		tag, isTag := strings.CutPrefix(name, "refs/tags/")
		if !isTag {
			continue
		}
		v, err := semver.NewVersion(tag)
		if err != nil || !c.Check(v) {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best, bestSHA = v, h
		}
	}
	return bestSHA, best != nil
}
