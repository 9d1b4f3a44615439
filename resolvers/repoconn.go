package resolvers

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/reposerver"
)

const (
	// connectionTTL is how long a repository's connection test answers
	// Repository.connectionState before it runs again.
	connectionTTL = time.Minute
	// connectionTimeout bounds one test.
	connectionTimeout = 30 * time.Second
)

// connections remembers the last connection test of each repository URL,
// so that listing repositories does not reach every one of them each
// time; concurrent tests of one URL share one attempt.
type connections struct {
	mu      sync.Mutex
	last    map[string]*model.ConnectionState
	flights singleflight.Group
}

// connectionState tests the repository at url with its stored
// credentials, or returns the last outcome when it is fresh and force is
// false. It returns nil when this server cannot test repositories.
func (r *Resolver) connectionState(ctx context.Context, url string, force bool) *model.ConnectionState {
	if r.RepoTester == nil {
		return nil
	}
	c := &r.conns
	if !force {
		c.mu.Lock()
		last := c.last[url]
		c.mu.Unlock()
		if last != nil && time.Since(last.AttemptedAt.Time) < connectionTTL {
			return last
		}
	}
	v, _, _ := c.flights.Do(url, func() (any, error) {
		// The caller may go away; the outcome serves the next one.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), connectionTimeout)
		defer cancel()
		state := &model.ConnectionState{Status: model.ConnectionStatusSuccessful, AttemptedAt: metav1.Now()}
		if err := r.testStoredRepository(ctx, url); err != nil {
			state.Status, state.Message = model.ConnectionStatusFailed, err.Error()
		}
		c.record(url, state)
		return state, nil
	})
	return v.(*model.ConnectionState)
}

// record keeps state as url's last test; nil forgets it (the stored
// credentials changed untested, or the repository went).
func (c *connections) record(url string, state *model.ConnectionState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if state == nil {
		delete(c.last, url)
		return
	}
	if c.last == nil {
		c.last = map[string]*model.ConnectionState{}
	}
	c.last[url] = state
}

// repositoriesChanged makes the repository list and credentials read the
// Secrets again after this server wrote one, so that the next request
// sees the change (other processes see it within their cache time).
func (r *Resolver) repositoriesChanged() {
	for _, c := range []any{r.Repositories, r.RepoCreds} {
		if inv, ok := c.(interface{ Invalidate() }); ok {
			inv.Invalidate()
		}
	}
}

// testStoredRepository reaches url with the credentials graphcd stores
// for it, as a render would.
func (r *Resolver) testStoredRepository(ctx context.Context, url string) error {
	repo := reposerver.Repository{URL: url}
	if r.RepoCreds != nil {
		var err error
		if repo, err = r.RepoCreds.Lookup(ctx, url); err != nil {
			return err
		}
	}
	return r.RepoTester.TestRepository(ctx, repo)
}

// testRepository is the testRepository mutation: a declared repository
// the caller may see, tested now.
func (r *Resolver) testRepository(ctx context.Context, url string) (*model.ConnectionState, error) {
	if err := r.authorize(ctx, "repositories", "get", url); err != nil {
		return nil, err
	}
	all, err := r.repositories(ctx)
	if err != nil {
		return nil, err
	}
	declared := false
	for _, repo := range all {
		declared = declared || (repourl.Same(repo.URL, url) && !repo.Template)
	}
	if !declared {
		return nil, Errorf(CodeNotFound, "repository %q is not declared", url)
	}
	state := r.connectionState(ctx, url, true)
	if state == nil {
		return nil, Errorf(CodeForbidden, "this server cannot test repositories")
	}
	return state, nil
}
