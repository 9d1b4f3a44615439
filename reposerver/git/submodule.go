package git

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	gogit "github.com/go-git/go-git/v5"

	"github.com/graphcd/graphcd/internal/repourl"
)

// updateSubmodules checks out every submodule of repo at the commit its
// parent records, recursively. Each submodule URL is validated like a
// top-level URL; relative URLs resolve against the parent's URL.
func (c *Client) updateSubmodules(ctx context.Context, repo *gogit.Repository, parent *endpoint, creds *Credentials, level int) error {
	if level > maxSubmoduleDepth {
		return fmt.Errorf("submodules of %s nest deeper than %d levels", repourl.Redact(parent.fetchURL), maxSubmoduleDepth)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return err
	}
	subs, err := wt.Submodules()
	if err != nil {
		return fmt.Errorf("read .gitmodules of %s: %w", repourl.Redact(parent.fetchURL), err)
	}
	for _, sub := range subs {
		cfg := sub.Config()
		raw, err := resolveSubmoduleURL(parent, cfg.URL)
		if err != nil {
			return fmt.Errorf("submodule %q: %w", cfg.Name, err)
		}
		ep, err := parseURL(raw, c.opts.AllowFileURLs)
		if err != nil {
			return fmt.Errorf("submodule %q: %w", cfg.Name, err)
		}
		// Credentials only go back to the host they were given for.
		var subCreds *Credentials
		if ep.host == parent.host && ep.kind == parent.kind {
			subCreds = creds
		}
		status, err := sub.Status()
		if err != nil {
			return fmt.Errorf("submodule %q: %w", cfg.Name, err)
		}
		if err := sub.Init(); err != nil && !errors.Is(err, gogit.ErrSubmoduleAlreadyInitialized) {
			return fmt.Errorf("submodule %q: %w", cfg.Name, err)
		}
		subRepo, err := sub.Repository()
		if err != nil {
			return fmt.Errorf("submodule %q: %w", cfg.Name, err)
		}
		if err := setOrigin(subRepo, ep.fetchURL); err != nil {
			return fmt.Errorf("submodule %q: %w", cfg.Name, err)
		}
		if err := c.fetchCommit(ctx, subRepo, ep, subCreds, status.Expected); err != nil {
			return fmt.Errorf("submodule %q: %w", cfg.Name, err)
		}
		if err := checkoutClean(subRepo, status.Expected); err != nil {
			return fmt.Errorf("submodule %q: checkout %s: %w", cfg.Name, status.Expected, err)
		}
		if err := c.updateSubmodules(ctx, subRepo, ep, subCreds, level+1); err != nil {
			return err
		}
	}
	return nil
}

// resolveSubmoduleURL turns a relative submodule URL ("../lib.git") into an
// absolute one based on the parent's URL; absolute URLs pass unchanged.
func resolveSubmoduleURL(parent *endpoint, raw string) (string, error) {
	if !strings.HasPrefix(raw, "./") && !strings.HasPrefix(raw, "../") {
		return raw, nil
	}
	u, err := url.Parse(parent.base)
	if err != nil {
		return "", fmt.Errorf("%w: cannot resolve relative submodule URL", ErrUnsafeURL)
	}
	u.Path = path.Join(u.Path, raw)
	if parent.kind == kindHTTP && parent.hasUserinfo {
		u.User = nil
	}
	return u.String(), nil
}
