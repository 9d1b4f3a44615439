package remote

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc/metadata"

	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/reposerver"
)

// Invalidating resolved revisions on every replica.
//
// A refresh or a webhook makes the caller forget the revisions it resolved
// in a repository, so that the next render sees a push. Calls are balanced
// round robin over the repo-server replicas, and each replica has its own
// revision cache: a message to one of them would leave the others serving
// the old commit until their cache expires. Instead, the client numbers
// its invalidations and every later call that names the repository
// carries the number of its latest one (in the invalidationHeader
// metadata). A replica that sees a higher number from that client than it
// has applied forgets the repository's resolved revisions before
// answering, so every replica catches up on the first call it gets,
// whichever it is. Nothing depends on the clocks of the roles.

// invalidationHeader carries one value per invalidated repository of the
// request: "<client>:<number>:<repository hash>".
const invalidationHeader = "graphcd-revision-invalidation"

// maxInvalidations bounds the repositories a client remembers, and the
// (client, repository) pairs a server remembers. Forgetting is safe on
// both sides: a client forgets its repositories all at once, long after
// the replicas applied their numbers in practice, and a server that
// forgets a pair invalidates once more.
const maxInvalidations = 10000

// repoHash names a repository in the header: its normalised URL hashed,
// so the header is plain ASCII and never carries credentials a URL holds.
func repoHash(repoURL string) string {
	sum := sha256.Sum256([]byte(repourl.Normalize(repoURL)))
	return hex.EncodeToString(sum[:12])
}

// requestRepos lists the repositories whose revisions a request resolves.
func requestRepos(req any) []string {
	switch r := req.(type) {
	case *reposerver.ManifestRequest:
		urls := []string{r.Repo.URL}
		for _, ref := range r.RefSources {
			urls = append(urls, ref.Repo.URL)
		}
		for _, repo := range r.Repos {
			urls = append(urls, repo.URL)
		}
		return urls
	case *repoRequest:
		return []string{r.Repo.URL}
	case *listCommitsRequest:
		return []string{r.Repo.URL}
	case *matchTreeRequest:
		return []string{r.Repo.URL}
	}
	return nil
}

// invalidations is a client's record of its latest invalidation per
// repository, numbered from one counter so that a number never repeats,
// even for a repository forgotten and invalidated again.
type invalidations struct {
	client string // random, names this client to the servers
	mu     sync.Mutex
	last   uint64
	counts map[string]uint64 // repoHash → number of its latest invalidation
}

func newInvalidations() *invalidations {
	return &invalidations{client: rand.Text()[:16], counts: map[string]uint64{}}
}

// add numbers an invalidation of repoURL.
func (v *invalidations) add(repoURL string) {
	h := repoHash(repoURL)
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.counts[h]; !ok && len(v.counts) >= maxInvalidations {
		clear(v.counts)
	}
	v.last++
	v.counts[h] = v.last
}

// stamp returns ctx carrying the numbers of req's invalidated repositories.
func (v *invalidations) stamp(ctx context.Context, req any) context.Context {
	repos := requestRepos(req)
	if len(repos) == 0 {
		return ctx
	}
	var values []string
	v.mu.Lock()
	if len(v.counts) > 0 {
		for _, u := range repos {
			h := repoHash(u)
			if n := v.counts[h]; n > 0 {
				values = append(values, v.client+":"+strconv.FormatUint(n, 10)+":"+h)
			}
		}
	}
	v.mu.Unlock()
	for _, val := range values {
		ctx = metadata.AppendToOutgoingContext(ctx, invalidationHeader, val)
	}
	return ctx
}

// applied is a server's record of the numbers it has acted on.
type applied struct {
	mu   sync.Mutex
	seen map[appliedKey]uint64
}

type appliedKey struct{ client, repo string }

// catchUp invalidates the repositories of req whose number in ctx is
// higher than the one applied for that client, before the call is served.
// Values naming no repository of req are ignored.
func (a *applied) catchUp(ctx context.Context, req any, inv revisionInvalidator) {
	values := metadata.ValueFromIncomingContext(ctx, invalidationHeader)
	if len(values) == 0 {
		return
	}
	repos := map[string]string{} // repoHash → URL
	for _, u := range requestRepos(req) {
		repos[repoHash(u)] = u
	}
	var stale []string
	a.mu.Lock()
	for _, val := range values {
		client, rest, ok1 := strings.Cut(val, ":")
		number, repo, ok2 := strings.Cut(rest, ":")
		n, err := strconv.ParseUint(number, 10, 64)
		u, named := repos[repo]
		if !ok1 || !ok2 || err != nil || !named {
			continue
		}
		k := appliedKey{client: client, repo: repo}
		if a.seen[k] >= n {
			continue
		}
		if _, ok := a.seen[k]; !ok && len(a.seen) >= maxInvalidations {
			clear(a.seen)
		}
		a.seen[k] = n
		stale = append(stale, u)
		delete(repos, repo)
	}
	a.mu.Unlock()
	for _, u := range stale {
		inv.InvalidateRevision(u)
	}
}
