// Package git is the repository server's Git layer: it resolves revisions
// with ls-remote, keeps one working copy per repository and checks out exact
// commits in it, and verifies commit signatures. For the source hydrator it
// also commits a directory's files to a branch and pushes them
// (CommitFiles), in memory. It uses go-git only and
// never runs the git binary itself (file:// URLs, allowed only on request,
// are served by go-git's file transport, which does start git-upload-pack).
// A working copy is switched to a commit by walking the commit's tree once
// and writing what changed (checkoutTree), in time linear in the tree,
// not with go-git's Worktree.Checkout, whose cost grows with the square of
// a directory's entries. A checkout writes at most 1,000,000 files and
// 4 GiB (ErrTreeTooLarge past them): a tree that names the same
// subtree over and over expands a small pack to any number of paths.
//
// Every URL, revision and file in a repository is treated as hostile: URLs
// are checked against transport tricks (ext::, option injection, local
// paths) before any network access, credentials never reach an error or a
// log line, and submodules receive the parent's credentials only when they
// live on the same host.
//
// Typical use:
//
//	c := git.New(git.Options{WorkDir: "/var/cache/graphcd/repos"})
//	sha, err := c.ResolveRevision(ctx, "https://github.com/org/app.git", creds, "^1.2")
//	if err != nil { ... }
//	dir, release, err := c.Checkout(ctx, "https://github.com/org/app.git", creds, sha, git.CheckoutOptions{})
//	if err != nil { ... }
//	defer release()
//	// read manifests under dir; other callers for the same commit may share it.
//
// Revisions accepted by ResolveRevision: "" or "HEAD" (the remote's default
// branch), a branch, a tag, a full or abbreviated commit SHA, a full ref name
// ("refs/pull/1/head"), or a semantic-version constraint over tags
// (">=1.2.0 <2.0.0", "1.2.*", "^1.2"), which selects the highest matching tag.
// A full SHA needs no lookup, but the credentials are still checked against
// the remote, by ResolveRevision and by Checkout (one ls-remote, cached like
// a resolution): working copies and the manifest cache are shared by every
// caller, and a SHA must not hand a caller without access what one with
// access fetched.
package git
