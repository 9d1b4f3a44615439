package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/auth/rbac"
)

// Authorizer answers "may the caller of this request do that?" from the
// RBAC policy of graphcd-rbac-cm and the roles of every AppProject. The
// policy and the projects are replaced while it serves (SetPolicy,
// SetProject, RemoveProject); each decision uses the policy current when
// it is asked. It is safe for concurrent use.
type Authorizer struct {
	enforcer atomic.Pointer[rbac.Enforcer]
	// anonymous lets requests without a principal act with the default
	// role (users.anonymous.enabled in graphcd-cm).
	anonymous atomic.Bool

	mu       sync.Mutex // serialises policy and project changes
	projects map[string][]v1alpha1.ProjectRole

	changedMu sync.Mutex
	changed   chan struct{} // closed at the next change; nil until asked for
}

// Changed returns a channel closed at the next change of the policy, of a
// project's roles or of anonymous access.
func (a *Authorizer) Changed() <-chan struct{} {
	a.changedMu.Lock()
	defer a.changedMu.Unlock()
	if a.changed == nil {
		a.changed = make(chan struct{})
	}
	return a.changed
}

// notify closes the channel Changed gave out.
func (a *Authorizer) notify() {
	a.changedMu.Lock()
	defer a.changedMu.Unlock()
	if a.changed != nil {
		close(a.changed)
		a.changed = nil
	}
}

// NewAuthorizer returns an Authorizer with the built-in policy only: the
// admin account is an admin and nobody else may do anything, until
// SetPolicy loads graphcd-rbac-cm.
func NewAuthorizer() *Authorizer {
	a := &Authorizer{projects: map[string][]v1alpha1.ProjectRole{}}
	e, err := rbac.NewEnforcer(nil)
	if err != nil {
		// The built-in policy is fixed; failing to compile it is a bug.
		panic(fmt.Sprintf("auth: built-in policy: %v", err))
	}
	a.enforcer.Store(e)
	return a
}

// SetPolicy replaces the policy with the one in data, the data of
// graphcd-rbac-cm (nil when the ConfigMap is missing). Invalid lines are
// left out and returned in a *rbac.ValidationError while the rest is
// loaded. When the policy cannot be used at all (an unknown
// policy.matchMode, say), the previous policy stays and the error says why:
// a broken ConfigMap never opens access.
func (a *Authorizer) SetPolicy(data map[string]string) error {
	p, perr := rbac.Parse(data)
	if p == nil {
		return perr
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	e, err := rbac.NewEnforcer(p)
	if err != nil {
		return err
	}
	// The project roles go in before the new policy is used, so no
	// request sees it without them.
	perr = errors.Join(perr, a.projectErrors(e))
	a.enforcer.Store(e)
	a.notify()
	return perr
}

// projectErrors loads every project's roles into e, returning what was
// invalid in them.
func (a *Authorizer) projectErrors(e *rbac.Enforcer) error {
	var errs []error
	for name, roles := range a.projects {
		if err := e.SetProjectRoles(name, roles); err != nil {
			errs = append(errs, fmt.Errorf("project %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// SetProject loads (or reloads) the roles of project p. Invalid role
// policies are left out and returned.
func (a *Authorizer) SetProject(p *v1alpha1.AppProject) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	roles := append([]v1alpha1.ProjectRole(nil), p.Spec.Roles...)
	a.projects[p.Name] = roles
	defer a.notify()
	if err := a.enforcer.Load().SetProjectRoles(p.Name, roles); err != nil {
		return fmt.Errorf("project %s: %w", p.Name, err)
	}
	return nil
}

// RemoveProject forgets the roles of a deleted project.
func (a *Authorizer) RemoveProject(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.projects, name)
	a.enforcer.Load().RemoveProject(name)
	a.notify()
}

// Scopes are the token claims whose values are RBAC groups.
func (a *Authorizer) Scopes() []string { return a.enforcer.Load().Scopes() }

// SetAnonymous allows (or stops allowing) requests without a principal,
// which then have the rights of the default role.
func (a *Authorizer) SetAnonymous(on bool) {
	if a.anonymous.Swap(on) != on {
		a.notify()
	}
}

// Authenticated reports whether ctx may ask anything at all: it carries a
// principal, or anonymous access is on.
func (a *Authorizer) Authenticated(ctx context.Context) bool {
	_, ok := FromContext(ctx)
	return ok || a.anonymous.Load()
}

// Can reports whether the caller of ctx may do action on object of
// resource. Without a principal only the default role counts, and only
// when anonymous access is on.
func (a *Authorizer) Can(ctx context.Context, resource, action, object string) bool {
	p, ok := FromContext(ctx)
	if !ok {
		if !a.anonymous.Load() {
			return false
		}
		p = Principal{}
	}
	return a.enforcer.Load().Enforce(p.Subject, p.Groups, resource, action, object)
}

// Permissions returns the rules that give or take rights from the caller
// of ctx: those of the default role, of the subject and of its groups,
// through every role they inherit.
func (a *Authorizer) Permissions(ctx context.Context) []rbac.Rule {
	p, ok := FromContext(ctx)
	if !ok && !a.anonymous.Load() {
		return nil
	}
	return a.enforcer.Load().Permissions(p.Subject, p.Groups)
}
