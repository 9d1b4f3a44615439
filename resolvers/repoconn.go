package resolvers

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/auth/rbac"
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

// connections remembers the last connection test of each repository (URL
// and project: a project-scoped repository has credentials of its own), so
// that listing repositories does not reach every one of them each time;
// concurrent tests of one repository share one attempt.
type connections struct {
	mu      sync.Mutex
	last    map[string]*model.ConnectionState
	flights singleflight.Group
}

// connectionState tests the repository at url, as the applications of
// project reach it, with its stored credentials, or returns the last
// outcome when it is fresh and force is false. It returns nil when this
// server cannot test repositories.
func (r *Resolver) connectionState(ctx context.Context, url, project string, force bool) *model.ConnectionState {
	if r.RepoTester == nil {
		return nil
	}
	c := &r.conns
	key := connectionKey(url, project)
	if !force {
		c.mu.Lock()
		last := c.last[key]
		c.mu.Unlock()
		if last != nil && time.Since(last.AttemptedAt.Time) < connectionTTL {
			return last
		}
	}
	v, _, _ := c.flights.Do(key, func() (any, error) {
		// The caller may go away; the outcome serves the next one.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), connectionTimeout)
		defer cancel()
		state := &model.ConnectionState{Status: model.ConnectionStatusSuccessful, AttemptedAt: metav1.Now()}
		if err := r.testStoredRepository(ctx, url, project); err != nil {
			state.Status, state.Message = model.ConnectionStatusFailed, err.Error()
		}
		c.record(url, project, state)
		return state, nil
	})
	return v.(*model.ConnectionState)
}

// connectionKey names the repository url of project ("" for a global one).
func connectionKey(url, project string) string { return project + "\x00" + url }

// record keeps state as the last test of url for project; nil forgets it
// (the stored credentials changed untested, or the repository went).
func (c *connections) record(url, project string, state *model.ConnectionState) {
	key := connectionKey(url, project)
	c.mu.Lock()
	defer c.mu.Unlock()
	if state == nil {
		delete(c.last, key)
		return
	}
	if c.last == nil {
		c.last = map[string]*model.ConnectionState{}
	}
	c.last[key] = state
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
// for it, as a render for an application of project would.
func (r *Resolver) testStoredRepository(ctx context.Context, url, project string) error {
	repo := reposerver.Repository{URL: url}
	if r.RepoCreds != nil {
		var err error
		if repo, err = r.RepoCreds.Lookup(ctx, url, project); err != nil {
			return err
		}
	}
	return r.RepoTester.TestRepository(ctx, repo)
}

// testRepository is the testRepository mutation: a declared repository
// the caller may see (the one scoped to project, when project is set),
// tested now.
func (r *Resolver) testRepository(ctx context.Context, url, project string) (*model.ConnectionState, error) {
	if err := r.authorize(ctx, rbac.ResourceRepositories, rbac.ActionGet, scopedTarget(project, url)); err != nil {
		return nil, err
	}
	all, err := r.repositories(ctx)
	if err != nil {
		return nil, err
	}
	declared := false
	for _, repo := range all {
		declared = declared || (repourl.Same(repo.URL, url) && repo.Project == project && !repo.Template)
	}
	if !declared {
		return nil, Errorf(CodeNotFound, "repository %q is not declared%s", url, inProject(project))
	}
	state := r.connectionState(ctx, url, project, true)
	if state == nil {
		return nil, Errorf(CodeForbidden, "this server cannot test repositories")
	}
	return state, nil
}

// inProject words the project of a project-scoped repository or cluster
// for messages: "" for a global one.
func inProject(project string) string {
	if project == "" {
		return ""
	}
	return " in project " + project
}
