package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"
	"golang.org/x/sync/singleflight"

	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/reposerver/revisioncache"
)

// Options configure a Client.
type Options struct {
	// WorkDir is the root of the working copies, one per normalized
	// repository URL. Default: $TMPDIR/graphcd-git.
	WorkDir string
	// RevisionCacheTTL bounds how long a resolved revision is reused
	// without asking the server again. Default 3m; negative disables.
	RevisionCacheTTL time.Duration
	// MaxParallel bounds concurrent network operations (ls-remote and
	// fetch). Default 10.
	MaxParallel int
	// AllowFileURLs permits file:// URLs and local paths (tests, demos).
	AllowFileURLs bool
	// Logger receives debug events; credentials never reach it.
	Logger *slog.Logger
}

// Refs lists a repository's branches and tags by short name, sorted.
type Refs struct {
	Branches []string
	Tags     []string
}

// Client talks to Git servers and manages working copies. It is safe for
// concurrent use.
type Client struct {
	opts   Options
	log    *slog.Logger
	netSem chan struct{}

	cache   *revisioncache.Cache
	resolve singleflight.Group

	mu     sync.Mutex
	copies map[string]*workingCopy // by normalized URL
}

// New returns a Client with defaults filled in.
func New(opts Options) *Client {
	if opts.WorkDir == "" {
		opts.WorkDir = filepath.Join(os.TempDir(), "graphcd-git")
	}
	if opts.RevisionCacheTTL == 0 {
		opts.RevisionCacheTTL = 3 * time.Minute
	}
	if opts.MaxParallel <= 0 {
		opts.MaxParallel = 10
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Client{
		opts:   opts,
		log:    log,
		netSem: make(chan struct{}, opts.MaxParallel),
		cache:  revisioncache.New(opts.RevisionCacheTTL),
		copies: map[string]*workingCopy{},
	}
}

// ErrAuthentication is wrapped by errors caused by missing or refused
// credentials.
var ErrAuthentication = errors.New("authentication failed")

// ErrRevisionNotFound is wrapped when a revision matches nothing.
var ErrRevisionNotFound = errors.New("revision not found")

// acquireNet waits for a network slot.
func (c *Client) acquireNet(ctx context.Context) (func(), error) {
	select {
	case c.netSem <- struct{}{}:
		return func() { <-c.netSem }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// wrapNetErr gives transport failures a stable, credential-free form.
func wrapNetErr(op string, ep *endpoint, creds *Credentials, err error) error {
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed):
		err = fmt.Errorf("%w: %w", ErrAuthentication, err)
	case err != nil && strings.Contains(err.Error(), "unable to authenticate"):
		err = fmt.Errorf("%w: %w", ErrAuthentication, err)
	}
	return scrub(fmt.Errorf("%s %s: %w", op, repourl.Redact(ep.fetchURL), err), creds, ep.password)
}

// lsRemote lists the remote's refs, with peeled tags as "<tag>^{}".
func (c *Client) lsRemote(ctx context.Context, ep *endpoint, creds *Credentials) ([]*plumbing.Reference, error) {
	no, err := netOptionsFor(ep, creds)
	if err != nil {
		return nil, scrub(fmt.Errorf("ls-remote %s: %w", repourl.Redact(ep.fetchURL), err), creds, ep.password)
	}
	release, err := c.acquireNet(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	remote := gogit.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{ep.fetchURL}})
	defer countRequest(ep, requestLsRemote, time.Now())
	refs, err := remote.ListContext(ctx, &gogit.ListOptions{
		Auth:            no.auth,
		InsecureSkipTLS: no.insecure,
		ClientCert:      no.clientCert,
		ClientKey:       no.clientKey,
		CABundle:        no.caBundle,
		PeelingOption:   gogit.AppendPeeled,
	})
	if err != nil {
		return nil, wrapNetErr("ls-remote", ep, creds, err)
	}
	c.log.DebugContext(ctx, "ls-remote", "repo", repourl.Redact(ep.fetchURL), "refs", len(refs))
	return refs, nil
}

// TestRepository checks that the repository is reachable with creds.
func (c *Client) TestRepository(ctx context.Context, repoURL string, creds *Credentials) error {
	ep, err := parseURL(repoURL, c.opts.AllowFileURLs)
	if err != nil {
		return err
	}
	_, err = c.lsRemote(ctx, ep, creds)
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return nil
	}
	return err
}

// ListRefs returns the repository's branches and tags.
func (c *Client) ListRefs(ctx context.Context, repoURL string, creds *Credentials) (Refs, error) {
	ep, err := parseURL(repoURL, c.opts.AllowFileURLs)
	if err != nil {
		return Refs{}, err
	}
	refs, err := c.lsRemote(ctx, ep, creds)
	if err != nil {
		return Refs{}, err
	}
	var out Refs
	for _, r := range refs {
		name := r.Name()
		switch {
		case name.IsBranch():
			out.Branches = append(out.Branches, name.Short())
		case name.IsTag() && !strings.HasSuffix(string(name), "^{}"):
			out.Tags = append(out.Tags, strings.TrimPrefix(string(name), "refs/tags/"))
		}
	}
	sort.Strings(out.Branches)
	sort.Strings(out.Tags)
	return out, nil
}
