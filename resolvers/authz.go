package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/audit"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/controller/project"
)

// Authorizer decides what the caller of a request may do, in Argo CD's
// RBAC terms: resource "applications", action "sync", object
// "<project>/<app>". auth.Authorizer implements it.
type Authorizer interface {
	// Authenticated reports whether ctx may ask anything but the public
	// fields: it carries a principal, or anonymous access is on.
	Authenticated(ctx context.Context) bool
	// Can reports whether the caller of ctx may do action on object.
	Can(ctx context.Context, resource, action, object string) bool
	// Permissions are the policy rules that apply to the caller.
	Permissions(ctx context.Context) []rbac.Rule
	// Changed returns a channel closed at the next change of the policy
	// or of a project's roles, so that subscriptions can check again.
	Changed() <-chan struct{}
}

// publicFields are the root fields anybody may ask for, logged in or not:
// what a login page needs.
var publicFields = map[string]bool{"version": true, "settings": true, "me": true, "__typename": true}

// PublicField reports whether anybody may ask for the root field name,
// logged in or not.
func PublicField(name string) bool { return publicFields[name] }

// GuardRootField refuses every root field but the public ones to callers
// who are not authenticated. Install it with AroundRootFields.
func (r *Resolver) GuardRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	if r.Authz == nil || r.Authz.Authenticated(ctx) {
		return next(ctx)
	}
	fc := graphql.GetRootFieldContext(ctx)
	if fc != nil && PublicField(fc.Field.Name) {
		return next(ctx)
	}
	graphql.AddError(ctx, Errorf(CodeUnauthenticated, "log in first: this field needs a session or an API token"))
	return graphql.Null
}

// can reports whether the caller may do action on object of resource.
// Without an Authorizer (auth disabled) everything is allowed.
func (r *Resolver) can(ctx context.Context, resource, action, object string) bool {
	return r.Authz == nil || r.Authz.Can(ctx, resource, action, object)
}

// authorize returns nil when the caller may do action of resource on o
// (see policyObject), and otherwise an error saying so (UNAUTHENTICATED
// without a session). The decision, with o as the caller knows it, goes
// to the mutation's audit trail, which names the object of a refusal.
func (r *Resolver) authorize(ctx context.Context, resource, action string, o audit.Object) error {
	object := r.policyObject(resource, o)
	allowed := r.can(ctx, resource, action, object)
	o.Kind = resource
	audit.Authorized(ctx, o, allowed)
	if allowed {
		return nil
	}
	if !r.Authz.Authenticated(ctx) {
		return Errorf(CodeUnauthenticated, "log in first")
	}
	return denied(resource, action, object)
}

// policyObject is the RBAC object of o for resource: "<project>/[<namespace>/]<name>"
// for an app or an ApplicationSet (its namespace only outside the
// server's), "[<project>/]<url>" for a repository or cluster, the name
// for the rest.
func (r *Resolver) policyObject(resource string, o audit.Object) string {
	switch resource {
	case rbac.ResourceApplications, rbac.ResourceApplicationSets, rbac.ResourceLogs, rbac.ResourceExec:
		ns := o.Namespace
		if ns == r.Namespace {
			ns = ""
		}
		return rbac.ApplicationObject(o.Project, ns, o.Name)
	case rbac.ResourceRepositories, rbac.ResourceClusters:
		return rbac.ScopedObject(o.Project, o.Name)
	}
	return o.Name
}

// appTarget names app for authorize.
func appTarget(app *v1alpha1.Application) audit.Object {
	return audit.Object{Project: app.ProjectName(), Namespace: app.Namespace, Name: app.Name}
}

// projectTarget names the project name for authorize.
func projectTarget(name string) audit.Object {
	return audit.Object{Project: name, Name: name}
}

// accountTarget names the account name for authorize.
func accountTarget(name string) audit.Object {
	return audit.Object{Name: name}
}

// scopedTarget names the repository or cluster url of project ("" for a
// global one) for authorize.
func scopedTarget(project, url string) audit.Object {
	return audit.Object{Project: project, Name: url}
}

// denied is the error of a caller who may not do action on object.
func denied(resource, action, object string) error {
	return Errorf(CodeForbidden, "permission denied: %s %s %s", resource, action, truncate(object, 253))
}

// appObject is the RBAC object of app: "<project>/<name>", or
// "<project>/<namespace>/<name>" outside the server's namespace.
func (r *Resolver) appObject(app *v1alpha1.Application) string {
	return r.policyObject(rbac.ResourceApplications, appTarget(app))
}

// canSeeApp reports whether the caller may get app: the API serves it
// (see admitted) and RBAC allows get on it. It runs for every app of a
// list (appFilter) and every delivered event, so it remembers nothing
// per request: the project lookup is a cache Get and its rules are
// compiled once per change (Resolver.compiled).
func (r *Resolver) canSeeApp(ctx context.Context, app *v1alpha1.Application) bool {
	return r.admitted(ctx, app) && r.can(ctx, rbac.ResourceApplications, rbac.ActionGet, r.appObject(app))
}

// served reports whether the API serves the Applications of namespace
// (graphcd's own, or one of --application-namespaces).
func (r *Resolver) served(namespace string) bool {
	return r.AppNamespaces == nil || r.AppNamespaces.Allowed(namespace)
}

// admitsAll reports whether every app passes admitted: no AppNamespaces,
// or none around an own namespace (every namespace is served, each with
// its own projects).
func (r *Resolver) admitsAll() bool {
	return r.AppNamespaces == nil || r.AppNamespaces.Own() == ""
}

// admitted reports whether the API serves app at all
// (project.AppNamespaces.Admits): its namespace is served and, outside
// graphcd's namespace, its project allows it there (spec.sourceNamespaces).
// An app that fails it does not exist for anybody, whatever their rights,
// so the answer about it is the answer about an app that does not exist
// and tells nothing (no names can be probed).
func (r *Resolver) admitted(ctx context.Context, app *v1alpha1.Application) bool {
	if r.admitsAll() {
		return true
	}
	return r.AppNamespaces.Admits(app.Namespace, func() (*project.Rules, error) {
		proj, err := r.findProject(ctx, app)
		if err != nil || proj == nil {
			return nil, err
		}
		return r.compiled.Rules(proj)
	})
}

// visibleApp returns the app at key when it exists and the caller may see
// it, else nil: an app the caller may not see does not exist for them.
func (r *Resolver) visibleApp(ctx context.Context, key types.NamespacedName) *v1alpha1.Application {
	app := r.apps().Get(key)
	if app == nil || !r.canSeeApp(ctx, app) {
		return nil
	}
	return app
}

// policyChanged returns a channel closed when the policy changes; nil
// (never ready) without an Authorizer.
func (r *Resolver) policyChanged() <-chan struct{} {
	if r.Authz == nil {
		return nil
	}
	return r.Authz.Changed()
}

// lostApp reports whether the app at key exists but the caller may not
// see it (any more): a subscription to it ends.
func (r *Resolver) lostApp(ctx context.Context, key types.NamespacedName) bool {
	app := r.apps().Get(key)
	return app != nil && !r.canSeeApp(ctx, app)
}

// authorizeApp authorizes action on the existing app at key; see appFor.
func (r *Resolver) authorizeApp(ctx context.Context, action string, key types.NamespacedName) error {
	_, err := r.appFor(ctx, rbac.ResourceApplications, action, key)
	return err
}

// appFor returns the app at key when the caller may do action of resource
// ("applications", or "logs" for its pods' logs) on it. An app that
// does not exist and an app the caller may not get give the same
// NOT_FOUND, so names cannot be probed; FORBIDDEN means the caller sees the
// app but may not do this to it.
func (r *Resolver) appFor(ctx context.Context, resource, action string, key types.NamespacedName) (*v1alpha1.Application, error) {
	if r.Authz != nil && !r.Authz.Authenticated(ctx) {
		return nil, Errorf(CodeUnauthenticated, "log in first")
	}
	if !r.served(key.Namespace) {
		return nil, Errorf(CodeNotFound, "application %s not found", key)
	}
	app := r.apps().Get(key)
	if app == nil && r.Writer != nil {
		// Just created, say, and not in the index yet: a script may
		// create an app and sync it at once.
		var err error
		if app, err = r.Writer.Get(ctx, key); err != nil {
			return nil, &Error{Code: CodeInternal, Message: "could not read the application", Err: err}
		}
	}
	if app == nil || !r.canSeeApp(ctx, app) {
		return nil, Errorf(CodeNotFound, "application %s not found", key)
	}
	if resource == rbac.ResourceApplications && action == rbac.ActionGet {
		return app, nil
	}
	if err := r.authorize(ctx, resource, action, appTarget(app)); err != nil {
		return nil, err
	}
	return app, nil
}
