// Package auth decides who a request comes from and what it may do.
//
// A request's Principal (a local account, an SSO user or a project role
// token) travels in its context: NewContext puts it there once the
// request's token has been checked, FromContext reads it. Authorizer
// answers the RBAC questions of the resolvers from the policy in
// graphcd-rbac-cm (Argo CD's argocd-rbac-cm format, see package rbac) and
// the roles of every AppProject, both kept current by WatchPolicy and
// WatchProjects:
//
//	a := auth.NewAuthorizer()
//	watch := kubewatch.NewSource(ctx, client, "graphcd") // one per process
//	err := auth.WatchPolicy(ctx, watch, a, log)
//	err = auth.WatchProjects(ctx, catalog, a, log)
//	ok := a.Can(ctx, "applications", "sync", "my-project/guestbook")
//
// The subpackages hold the parts: rbac (the policy engine), session
// (signed tokens), accounts (local users), login (brute-force limits),
// dex and oidc (single sign-on).
package auth
