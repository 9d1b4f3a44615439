package rbac

import (
	"slices"
	"strings"
)

// Resources graphcd authorizes, as named in policies.
const (
	ResourceApplications    = "applications"
	ResourceApplicationSets = "applicationsets"
	ResourceClusters        = "clusters"
	ResourceRepositories    = "repositories"
	ResourceProjects        = "projects"
	ResourceAccounts        = "accounts"
	ResourceCertificates    = "certificates"
	ResourceGPGKeys         = "gpgkeys"
	ResourceLogs            = "logs"
	ResourceExec            = "exec"
	// ResourceAudit is graphcd's own (Argo CD has no audit log): get on
	// it, with a project as object, reads that project's audit entries.
	ResourceAudit = "audit"
)

// Actions of policies. Besides these, "action/<group>/<kind>/<name>" runs
// a resource action, and "update/..." and "delete/..." (see
// SubresourceAction) act on one resource inside an application.
const (
	ActionGet      = "get"
	ActionCreate   = "create"
	ActionUpdate   = "update"
	ActionDelete   = "delete"
	ActionSync     = "sync"
	ActionOverride = "override"
	// ActionApprove approves a sync that a sync approval policy holds
	// (graphcd's own).
	ActionApprove = "approve"
	// ActionApproveOnBehalf approves a held sync for someone else, as a
	// chat bot does for its chat users (graphcd's own).
	ActionApproveOnBehalf = "approve-on-behalf"
)

// Resources lists every resource graphcd asks about.
var Resources = []string{
	ResourceApplications, ResourceApplicationSets, ResourceClusters, ResourceRepositories, ResourceProjects,
	ResourceAccounts, ResourceCertificates, ResourceGPGKeys, ResourceLogs, ResourceExec, ResourceAudit,
}

// Actions lists the plain actions.
var Actions = []string{ActionGet, ActionCreate, ActionUpdate, ActionDelete, ActionSync, ActionOverride, ActionApprove, ActionApproveOnBehalf}

// argoOnlyResources are valid in an argocd-rbac-cm but name nothing
// graphcd has; lines using them load (so the ConfigMap works unchanged)
// and never match a graphcd request.
var argoOnlyResources = []string{"extensions", resourceWriteRepositories, "write-clusters"}

// Argo CD-only names the built-in roles grant, as Argo CD's do.
const (
	resourceWriteRepositories = "write-repositories"
	actionDebug               = "debug"
)

// shortNames are the other names Argo CD's `admin settings rbac can`
// accepts for a resource.
var shortNames = map[string]string{
	"account": ResourceAccounts, "app": ResourceApplications, "apps": ResourceApplications,
	"application": ResourceApplications, "applicationset": ResourceApplicationSets,
	"appset": ResourceApplicationSets, "appsets": ResourceApplicationSets,
	"cert": ResourceCertificates, "certs": ResourceCertificates,
	"certificate": ResourceCertificates, "cluster": ResourceClusters, "extension": "extensions",
	"gpgkey": ResourceGPGKeys, "key": ResourceGPGKeys, "log": ResourceLogs,
	"proj": ResourceProjects, "projs": ResourceProjects, "project": ResourceProjects,
	"repo": ResourceRepositories, "repos": ResourceRepositories, "repository": ResourceRepositories,
}

// ResolveResourceName returns the resource a short name such as "app" or
// "repo" stands for, or name itself.
func ResolveResourceName(name string) string {
	if r, ok := shortNames[name]; ok {
		return r
	}
	return name
}

// Known reports whether policies may name resource: one graphcd asks
// about, or one only Argo CD has.
func Known(resource string) bool {
	return slices.Contains(Resources, resource) || slices.Contains(argoOnlyResources, resource)
}

// AnyObject is the object that stands for every object of resource:
// "*/*" for resources whose objects are <project>/<name>, "*" for others.
func AnyObject(resource string) string {
	switch resource {
	case ResourceApplications, ResourceApplicationSets, ResourceLogs, ResourceExec:
		return "*/*"
	}
	return "*"
}

// ApplicationObject is the object of an application-scoped request:
// "<project>/<app>", or "<project>/<namespace>/<app>" for an application
// outside the control plane's namespace.
func ApplicationObject(project, namespace, app string) string {
	if namespace == "" {
		return project + "/" + app
	}
	return project + "/" + namespace + "/" + app
}

// ScopedObject is the object of a repository, credential template or
// cluster: its URL (server), or "<project>/<url>" for one scoped to a
// project, as in Argo CD, so that a project role's
// "repositories, create, <project>/*" covers the project's own.
func ScopedObject(project, url string) string {
	if project == "" {
		return url
	}
	return project + "/" + url
}

// SubresourceAction is the action for updating or deleting (verb) one
// resource managed by an application, in Argo CD's fine-grained form
// "update/<group>/<kind>/<namespace>/<name>" (group empty for the core
// group). A rule with action "update" covers only the application itself;
// "update/*" covers every resource in it.
func SubresourceAction(verb, group, kind, namespace, name string) string {
	return strings.Join([]string{verb, group, kind, namespace, name}, "/")
}

// ResourceAction is the action for running the custom resource action
// name on a resource of group and kind: "action/<group>/<kind>/<name>".
func ResourceAction(group, kind, name string) string {
	return strings.Join([]string{"action", group, kind, name}, "/")
}

// ProjectRoleSubject is the subject of a project role:
// "proj:<project>:<role>".
func ProjectRoleSubject(project, role string) string {
	return "proj:" + project + ":" + role
}

// Built-in roles.
const (
	RoleReadonly = "role:readonly"
	RoleAdmin    = "role:admin"
)

// builtinPolicy grants the built-in roles the rights of Argo CD's: readonly
// may get everything (and read logs); admin may do anything to
// applications, and create, update or delete what Argo CD's admin may;
// the admin account is an admin. Argo CD-only names (write-repositories,
// exec's debug) are granted as Argo CD grants them, so `admin rbac can`
// answers as Argo CD's would.
//
// The rules are written as globs; in regex mode they are translated, so the
// built-in roles mean the same in both modes.
func builtinPolicy(mode MatchMode) *Policy {
	p := &Policy{}
	src := Source{Key: "built-in policy"}
	field := func(glob string) string {
		if mode != MatchRegex {
			return glob
		}
		re, _ := globToRegexp(glob) // the globs below are all valid
		return re
	}
	allow := func(role, res, obj string, actions ...string) {
		for _, a := range actions {
			src.Line++
			p.Rules = append(p.Rules, Rule{Subject: role, Resource: res, Action: field(a), Object: field(obj), Effect: Allow, Source: src})
		}
	}
	for _, res := range []string{ResourceApplications, ResourceApplicationSets, ResourceLogs} {
		allow(RoleReadonly, res, "*/*", ActionGet)
	}
	for _, res := range []string{ResourceClusters, ResourceRepositories, resourceWriteRepositories, ResourceProjects, ResourceAccounts, ResourceCertificates, ResourceGPGKeys} {
		allow(RoleReadonly, res, "*", ActionGet)
	}
	// Every action on applications, including ones graphcd does not
	// define (rollback, say): an admin is never refused on an application.
	allow(RoleAdmin, ResourceApplications, "*/*", "*")
	allow(RoleAdmin, ResourceApplicationSets, "*/*", ActionCreate, ActionUpdate, ActionDelete)
	for _, res := range []string{ResourceClusters, ResourceRepositories, resourceWriteRepositories, ResourceProjects, ResourceCertificates} {
		allow(RoleAdmin, res, "*", ActionCreate, ActionUpdate, ActionDelete)
	}
	allow(RoleAdmin, ResourceAccounts, "*", ActionUpdate)
	// Only admins read the audit trail: it tells who changed what across
	// every project.
	allow(RoleAdmin, ResourceAudit, "*", ActionGet)
	allow(RoleAdmin, ResourceGPGKeys, "*", ActionCreate, ActionDelete)
	allow(RoleAdmin, ResourceExec, "*/*", ActionCreate, actionDebug)
	for _, b := range [][2]string{{RoleAdmin, RoleReadonly}, {"admin", RoleAdmin}} {
		src.Line++
		p.Bindings = append(p.Bindings, Binding{Subject: b[0], Role: b[1], Source: src})
	}
	return p
}
