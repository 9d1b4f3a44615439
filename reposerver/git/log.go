package git

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/graphcd/graphcd/internal/repourl"
)

// Bounds of Log's answer: a history is for display, so neither a long
// history nor a huge message or tag list can make it large.
const (
	// MaxLogCommits is the most commits Log returns.
	MaxLogCommits = 100
	// MaxMessageBytes bounds a commit message; longer ones are cut.
	MaxMessageBytes = 8 << 10
	// maxIdentityBytes bounds an author's name and email.
	maxIdentityBytes = 256
	// maxTagsPerCommit bounds the tags listed for one commit.
	maxTagsPerCommit = 20
)

// logRef keeps the commit whose history Log fetched reachable locally.
const logRef = "refs/graphcd/log"

// Person is the author of a commit.
type Person struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// Commit is one commit as a history shows it (Argo CD's RevisionMetadata).
type Commit struct {
	// SHA is the 40-hex commit id.
	SHA    string `json:"sha"`
	Author Person `json:"author"`
	// Date is when the author made the commit.
	Date time.Time `json:"date"`
	// Message is the whole commit message, valid UTF-8, cut at
	// MaxMessageBytes.
	Message string `json:"message"`
	// Tags are the repository's tags that point at the commit (annotated
	// tags peeled), sorted; at most 20.
	Tags []string `json:"tags,omitempty"`
}

// Subject is the first line of the message.
func (c Commit) Subject() string {
	s, _, _ := strings.Cut(c.Message, "\n")
	return strings.TrimSpace(s)
}

// Log returns up to limit commits of the history of commit sha (a 40-hex id,
// see ResolveRevision), newest first by commit time, as `git log` lists
// them; limit is capped at MaxLogCommits. The history is read from the
// working copy, which is deepened from the server when it holds fewer
// commits than asked for (a shallow copy), and tags come from the
// server's refs.
func (c *Client) Log(ctx context.Context, repoURL string, creds *Credentials, sha string, limit int) ([]Commit, error) {
	ep, err := parseURL(repoURL, c.opts.AllowFileURLs)
	if err != nil {
		return nil, err
	}
	if !isFullSHA(sha) {
		return nil, fmt.Errorf("%w %q: Log needs a 40-hex commit SHA (use ResolveRevision)", ErrInvalidRevision, sha)
	}
	limit = min(limit, MaxLogCommits)
	if limit <= 0 {
		return []Commit{}, nil
	}
	hash := plumbing.NewHash(strings.ToLower(sha))
	refs, err := c.lsRemote(ctx, ep, creds)
	if err != nil {
		return nil, err
	}
	tags := tagsByCommit(refs)

	// Fetching writes to the repository, so the copy is held exclusively;
	// its worktree is left as it is.
	wc := c.workingCopy(ep.normalized)
	if _, err := wc.acquire(ctx, "", false); err != nil {
		return nil, err
	}
	defer wc.finishExclusiveKeep()
	repo, err := openOrInit(wc.dir, ep.fetchURL)
	if err != nil {
		return nil, fmt.Errorf("working copy for %s: %w", repourl.Redact(ep.fetchURL), err)
	}
	commits, complete, err := walkHistory(repo, hash, limit)
	if err != nil {
		return nil, fmt.Errorf("read history of %s in %s: %w", hash, repourl.Redact(ep.fetchURL), err)
	}
	if !complete {
		if err := c.fetchHistory(ctx, repo, ep, creds, hash, limit); err != nil {
			return nil, err
		}
		if commits, _, err = walkHistory(repo, hash, limit); err != nil {
			return nil, fmt.Errorf("read history of %s in %s: %w", hash, repourl.Redact(ep.fetchURL), err)
		}
	}
	out := make([]Commit, len(commits))
	for i, co := range commits {
		out[i] = commitOf(co, tags[co.Hash])
	}
	return out, nil
}

// fetchHistory fetches commit hash with depth commits of history (the
// whole history when the server refuses fetching by SHA).
func (c *Client) fetchHistory(ctx context.Context, repo *gogit.Repository, ep *endpoint, creds *Credentials, hash plumbing.Hash, depth int) error {
	shallow, err := repo.Storer.Shallow()
	if err != nil {
		return fmt.Errorf("read shallow list: %w", err)
	}
	d := 0
	if isEmptyRepo(repo) || len(shallow) > 0 {
		d = depth
	}
	err = c.fetch(ctx, repo, ep, creds, []config.RefSpec{config.RefSpec("+" + hash.String() + ":" + logRef)}, d, gogit.NoTags)
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

// walkHistory collects up to limit commits reachable from head, newest
// commit time first. complete is false when head or a parent needed to
// reach max is not stored (a shallow or fresh copy).
func walkHistory(repo *gogit.Repository, head plumbing.Hash, limit int) (out []*object.Commit, complete bool, err error) {
	first, err := repo.CommitObject(head)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	seen := map[plumbing.Hash]bool{head: true}
	queue := []*object.Commit{first}
	missing := false
	for len(queue) > 0 && len(out) < limit {
		i := newest(queue)
		co := queue[i]
		queue = slices.Delete(queue, i, i+1)
		out = append(out, co)
		for _, p := range co.ParentHashes {
			if seen[p] {
				continue
			}
			seen[p] = true
			pc, err := repo.CommitObject(p)
			if errors.Is(err, plumbing.ErrObjectNotFound) {
				missing = true
				continue
			}
			if err != nil {
				return nil, false, err
			}
			queue = append(queue, pc)
		}
	}
	return out, !missing || len(out) >= limit, nil
}

// newest returns the index of the commit with the latest commit time; ties
// go to the first queued, so a linear history keeps its order.
func newest(queue []*object.Commit) int {
	best := 0
	for i, co := range queue[1:] {
		if co.Committer.When.After(queue[best].Committer.When) {
			best = i + 1
		}
	}
	return best
}

// tagsByCommit maps each commit to the tags pointing at it, an annotated
// tag by the commit it peels to.
func tagsByCommit(refs []*plumbing.Reference) map[plumbing.Hash][]string {
	peeled := map[string]plumbing.Hash{}
	for _, r := range refs {
		if name := string(r.Name()); strings.HasPrefix(name, "refs/tags/") && strings.HasSuffix(name, "^{}") {
			peeled[strings.TrimSuffix(name, "^{}")] = r.Hash()
		}
	}
	out := map[plumbing.Hash][]string{}
	for _, r := range refs {
		name := string(r.Name())
		if !strings.HasPrefix(name, "refs/tags/") || strings.HasSuffix(name, "^{}") || r.Type() != plumbing.HashReference {
			continue
		}
		h := r.Hash()
		if p, ok := peeled[name]; ok {
			h = p
		}
		out[h] = append(out[h], strings.TrimPrefix(name, "refs/tags/"))
	}
	for h, names := range out {
		slices.Sort(names)
		out[h] = names[:min(len(names), maxTagsPerCommit)]
	}
	return out
}

// commitOf turns a go-git commit into a bounded Commit.
func commitOf(co *object.Commit, tags []string) Commit {
	return Commit{
		SHA:     co.Hash.String(),
		Author:  Person{Name: bounded(co.Author.Name, maxIdentityBytes), Email: bounded(co.Author.Email, maxIdentityBytes)},
		Date:    co.Author.When,
		Message: bounded(co.Message, MaxMessageBytes),
		Tags:    slices.Clone(tags),
	}
}

// bounded returns s as valid UTF-8 of at most n bytes, cut at a rune
// boundary.
func bounded(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
