package git

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/graphcd/graphcd/internal/repourl"
)

// ErrInvalidPath is returned for a directory to commit to that could
// escape it or reach into Git's own files: absolute, with "..", ".git" or
// "." elements, or the repository's root.
var ErrInvalidPath = errors.New("invalid path")

// ErrInvalidBranch is returned for a branch name Git would refuse or that
// could be read as something else.
var ErrInvalidBranch = errors.New("invalid branch")

// maxCommitPathBytes bounds a path to commit to.
const maxCommitPathBytes = 1024

// CommitRequest asks CommitFiles to make Dir of Branch hold exactly Files.
type CommitRequest struct {
	// RepoURL is the repository to push to, checked like every URL here.
	RepoURL string
	// Credentials push to it; nil pushes without any.
	Credentials *Credentials
	// Branch is the branch to commit to, "name" or "refs/heads/name"; it
	// is created, as an orphan branch, when the repository lacks it.
	Branch string
	// Dir is the directory of the repository the files go to (a relative,
	// clean path, not the root): whatever it held before is replaced.
	Dir string
	// Files are the files of Dir by name (one path element each).
	Files map[string][]byte
	// Message is the commit message.
	Message string
	// Author is the commit's author and committer; Name "graphcd" when
	// empty.
	Author Person
}

// CommitResult is what CommitFiles did.
type CommitResult struct {
	// SHA is the head of the branch after the call: the new commit, or
	// the existing head when the files were already there.
	SHA string
	// Pushed is false when Dir already held Files: no commit was made.
	Pushed bool
}

// ValidateCommitDir checks dir as a CommitRequest.Dir: a relative, clean
// path of at least one element, none of them "..", "." or ".git" (in
// any case), without backslashes or control characters.
func ValidateCommitDir(dir string) error {
	refuse := func(why string) error { return fmt.Errorf("%w %q: %s", ErrInvalidPath, dir, why) }
	switch {
	case dir == "" || dir == "." || dir == "/":
		return refuse("the repository root is not allowed; name a directory")
	case len(dir) > maxCommitPathBytes:
		return refuse("too long")
	case strings.IndexFunc(dir, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return refuse("contains control characters")
	case strings.Contains(dir, `\`):
		return refuse(`contains '\'`)
	case strings.HasPrefix(dir, "/") || (len(dir) > 1 && dir[1] == ':'):
		return refuse("must be relative")
	}
	for _, el := range strings.Split(dir, "/") {
		switch {
		case el == "..":
			return refuse("must not contain '..'")
		case strings.EqualFold(el, ".git"):
			return refuse("must not name .git")
		}
	}
	if path.Clean(dir) != dir {
		return refuse("must be clean (no '.' elements, empty elements or trailing '/')")
	}
	return nil
}

// BranchRef returns the full reference name of branch ("name" or
// "refs/heads/name") after checking it by Git's rules for ref names, or
// an error wrapping ErrInvalidBranch.
func BranchRef(branch string) (plumbing.ReferenceName, error) {
	name := plumbing.ReferenceName(branch)
	if !name.IsBranch() {
		name = plumbing.NewBranchReferenceName(branch)
	}
	short := strings.TrimPrefix(string(name), "refs/heads/")
	switch {
	case short == "" || short == "HEAD":
		return "", fmt.Errorf("%w %q: a branch name is required", ErrInvalidBranch, branch)
	case len(branch) > 255:
		return "", fmt.Errorf("%w: longer than 255 bytes", ErrInvalidBranch)
	case strings.HasPrefix(short, "-"):
		return "", fmt.Errorf("%w %q: starts with '-'", ErrInvalidBranch, branch)
	case name.Validate() != nil:
		return "", fmt.Errorf("%w %q: not a valid Git branch name (no spaces, '..', '~^:?*[\\', '@{', or '.lock' ends)", ErrInvalidBranch, branch)
	}
	return name, nil
}

// CommitFiles makes req.Dir of req.Branch hold exactly req.Files and pushes
// the commit, with go-git only and in memory: the branch is fetched (or
// started as an orphan branch when missing), everything under req.Dir is
// replaced, and the rest of the tree is kept. When req.Dir already holds
// req.Files nothing is committed or pushed and the branch's head is
// returned. The push is a fast-forward: one that lost a race with another
// pusher fails and can be retried. Errors name the repository without
// credentials.
func (c *Client) CommitFiles(ctx context.Context, req CommitRequest) (CommitResult, error) {
	ep, err := parseURL(req.RepoURL, c.opts.AllowFileURLs)
	if err != nil {
		return CommitResult{}, err
	}
	ref, err := BranchRef(req.Branch)
	if err != nil {
		return CommitResult{}, err
	}
	if err := ValidateCommitDir(req.Dir); err != nil {
		return CommitResult{}, err
	}
	for name := range req.Files {
		if name == "" || strings.Contains(name, "/") || ValidateCommitDir(name) != nil {
			return CommitResult{}, fmt.Errorf("%w: file name %q must be one plain path element", ErrInvalidPath, name)
		}
	}
	head, err := c.remoteHead(ctx, ep, req.Credentials, ref)
	if err != nil {
		return CommitResult{}, err
	}
	repo, err := gogit.Init(memory.NewStorage(), nil)
	if err != nil {
		return CommitResult{}, err
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{ep.fetchURL}}); err != nil {
		return CommitResult{}, err
	}
	var parent *object.Commit
	if !head.IsZero() {
		spec := config.RefSpec("+" + string(ref) + ":" + string(ref))
		if err := c.fetch(ctx, repo, ep, req.Credentials, []config.RefSpec{spec}, 0, gogit.NoTags); err != nil {
			return CommitResult{}, err
		}
		if parent, err = repo.CommitObject(head); err != nil {
			return CommitResult{}, fmt.Errorf("read head %s of %s: %w", head, ref.Short(), err)
		}
	}
	tree, err := replaceDir(repo.Storer, parent, req.Dir, req.Files)
	if err != nil {
		return CommitResult{}, fmt.Errorf("build tree: %w", err)
	}
	if parent != nil && parent.TreeHash == tree {
		return CommitResult{SHA: head.String()}, nil
	}
	sha, err := writeCommit(repo.Storer, parent, tree, req)
	if err != nil {
		return CommitResult{}, fmt.Errorf("write commit: %w", err)
	}
	if err := repo.Storer.SetReference(plumbing.NewHashReference(ref, sha)); err != nil {
		return CommitResult{}, err
	}
	if err := c.push(ctx, repo, ep, req.Credentials, ref); err != nil {
		return CommitResult{}, err
	}
	c.cache.Invalidate(ep.normalized)
	c.log.DebugContext(ctx, "pushed", "repo", repourl.Redact(ep.fetchURL), "branch", ref.Short(), "sha", sha.String())
	return CommitResult{SHA: sha.String(), Pushed: true}, nil
}

// remoteHead is the commit ref points at on the server; zero when the
// branch (or the whole repository) does not exist yet.
func (c *Client) remoteHead(ctx context.Context, ep *endpoint, creds *Credentials, ref plumbing.ReferenceName) (plumbing.Hash, error) {
	refs, err := c.lsRemote(ctx, ep, creds)
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for _, r := range refs {
		if r.Name() == ref && r.Type() == plumbing.HashReference {
			return r.Hash(), nil
		}
	}
	return plumbing.ZeroHash, nil
}

// push sends ref to the server as a fast-forward (or a new branch).
func (c *Client) push(ctx context.Context, repo *gogit.Repository, ep *endpoint, creds *Credentials, ref plumbing.ReferenceName) error {
	no, err := netOptionsFor(ep, creds)
	if err != nil {
		return scrub(fmt.Errorf("push %s: %w", repourl.Redact(ep.fetchURL), err), creds, ep.password)
	}
	release, err := c.acquireNet(ctx)
	if err != nil {
		return err
	}
	defer release()
	err = repo.PushContext(ctx, &gogit.PushOptions{
		RemoteName:      "origin",
		RemoteURL:       ep.fetchURL,
		RefSpecs:        []config.RefSpec{config.RefSpec(string(ref) + ":" + string(ref))},
		Auth:            no.auth,
		InsecureSkipTLS: no.insecure,
		ClientCert:      no.clientCert,
		ClientKey:       no.clientKey,
		CABundle:        no.caBundle,
	})
	if err != nil && !errors.Is(err, gogit.NoErrAlreadyUpToDate) {
		return wrapNetErr("push", ep, creds, err)
	}
	return nil
}

// writeCommit stores the commit of tree on parent (none: an orphan).
func writeCommit(s storer.EncodedObjectStorer, parent *object.Commit, tree plumbing.Hash, req CommitRequest) (plumbing.Hash, error) {
	who := req.Author
	if who.Name == "" {
		who.Name = "graphcd"
	}
	sig := object.Signature{Name: who.Name, Email: who.Email, When: time.Now().UTC().Truncate(time.Second)}
	commit := &object.Commit{Author: sig, Committer: sig, Message: req.Message, TreeHash: tree}
	if parent != nil {
		commit.ParentHashes = []plumbing.Hash{parent.Hash}
	}
	obj := s.NewEncodedObject()
	if err := commit.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}

// treeEntry is a non-tree entry of a flattened tree.
type treeEntry struct {
	mode filemode.FileMode
	hash plumbing.Hash
}

// replaceDir stores the tree of parent (none: empty) with everything under
// dir replaced by files, and returns its hash.
func replaceDir(s storer.EncodedObjectStorer, parent *object.Commit, dir string, files map[string][]byte) (plumbing.Hash, error) {
	flat := map[string]treeEntry{}
	if parent != nil {
		tree, err := parent.Tree()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		err = walkFiles(tree, defaultCheckoutLimits.files, func(name string, e object.TreeEntry) error {
			if name != dir && !strings.HasPrefix(name, dir+"/") {
				flat[name] = treeEntry{mode: e.Mode, hash: e.Hash}
			}
			return nil
		})
		if err != nil {
			return plumbing.ZeroHash, err
		}
	}
	for name, data := range files {
		h, err := writeBlob(s, data)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		flat[dir+"/"+name] = treeEntry{mode: filemode.Regular, hash: h}
	}
	// Drop any file the new directory's path would run through (a file
	// named like one of dir's parents).
	for p := dir; p != "."; p = path.Dir(p) {
		if p != dir {
			delete(flat, p)
		}
	}
	return writeTree(s, flat, "")
}

// writeTree stores the tree of the entries of flat under prefix ("" for
// the root) and its subtrees, and returns its hash.
func writeTree(s storer.EncodedObjectStorer, flat map[string]treeEntry, prefix string) (plumbing.Hash, error) {
	direct := map[string]treeEntry{}
	subdirs := map[string]bool{}
	for name, e := range flat {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		if first, _, nested := strings.Cut(rest, "/"); nested {
			subdirs[first] = true
		} else {
			direct[rest] = e
		}
	}
	tree := &object.Tree{}
	for name, e := range direct {
		tree.Entries = append(tree.Entries, object.TreeEntry{Name: name, Mode: e.mode, Hash: e.hash})
	}
	for name := range subdirs {
		h, err := writeTree(s, flat, prefix+name+"/")
		if err != nil {
			return plumbing.ZeroHash, err
		}
		tree.Entries = append(tree.Entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	}
	// Git orders entries by name, a directory's as if it ended in "/".
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(tree.Entries, func(i, j int) bool { return key(tree.Entries[i]) < key(tree.Entries[j]) })
	obj := s.NewEncodedObject()
	if err := tree.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}

// writeBlob stores data as a blob.
func writeBlob(s storer.EncodedObjectStorer, data []byte) (plumbing.Hash, error) {
	obj := s.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		_ = w.Close()
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}
