// Package rbac decides who may do what, from a policy written exactly like
// Argo CD's argocd-rbac-cm: Casbin's model (subject, resource, action,
// object) with allow and deny effects where deny wins, the built-in roles
// role:readonly and role:admin, the default role, SSO groups and project
// roles.
//
// A policy comes from the data of the graphcd-rbac-cm ConfigMap:
//
//	policy.csv: |
//	  p, my-org:team-alpha, applications, sync, my-project/*, allow
//	  g, my-org:team-beta, role:admin
//	policy.default: role:readonly
//	policy.matchMode: glob
//	scopes: '[groups]'
//
// and is checked like this:
//
//	p, err := rbac.Parse(cm.Data) // err lists every invalid line; p still holds the valid ones
//	e, err := rbac.NewEnforcer(p)
//	err = e.SetProjectRoles("my-project", appProject.Spec.Roles)
//	ok := e.Enforce("alice", []string{"my-org:team-alpha"}, rbac.ResourceApplications, rbac.ActionSync, "my-project/guestbook")
//
// The rules, in Argo CD's terms: the default role is tried first and
// cannot be taken away by a deny; then the subject and then each group is
// tried on its own, and the request is allowed when one of them is allowed
// by at least one rule of its roles and denied by none. In glob mode `*`
// matches any text, `/` included. Decisions are cached until the policy
// changes.
package rbac
