package rbac

import "strings"

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
)

// Resources lists every resource graphcd asks about.
var Resources = []string{
	ResourceApplications, ResourceApplicationSets, ResourceClusters, ResourceRepositories, ResourceProjects,
	ResourceAccounts, ResourceCertificates, ResourceGPGKeys, ResourceLogs, ResourceExec,
}

// Actions lists the plain actions.
var Actions = []string{ActionGet, ActionCreate, ActionUpdate, ActionDelete, ActionSync, ActionOverride}

// argoOnlyResources are valid in an argocd-rbac-cm but name nothing
// graphcd has; lines using them load (so the ConfigMap works unchanged)
// and never match a graphcd request.
var argoOnlyResources = []string{"extensions", "write-repositories", "write-clusters"}

// ApplicationObject is the object of an application-scoped request:
// "<project>/<app>", or "<project>/<namespace>/<app>" for an application
// outside the control plane's namespace.
func ApplicationObject(project, namespace, app string) string {
	if namespace == "" {
		return project + "/" + app
	}
	return project + "/" + namespace + "/" + app
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
// may get everything (and read logs), admin may do everything, including
// fine-grained updates and deletes of an application's resources; the
// admin account is an admin.
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
	for _, res := range []string{ResourceClusters, ResourceRepositories, ResourceProjects, ResourceAccounts, ResourceCertificates, ResourceGPGKeys} {
		allow(RoleReadonly, res, "*", ActionGet)
	}
	allow(RoleAdmin, ResourceApplications, "*/*",
		ActionCreate, ActionUpdate, "update/*", ActionDelete, "delete/*", ActionSync, ActionOverride, "action/*")
	allow(RoleAdmin, ResourceApplicationSets, "*/*", ActionCreate, ActionUpdate, ActionDelete)
	for _, res := range []string{ResourceClusters, ResourceRepositories, ResourceProjects, ResourceCertificates} {
		allow(RoleAdmin, res, "*", ActionCreate, ActionUpdate, ActionDelete)
	}
	allow(RoleAdmin, ResourceAccounts, "*", ActionUpdate)
	allow(RoleAdmin, ResourceGPGKeys, "*", ActionCreate, ActionDelete)
	allow(RoleAdmin, ResourceExec, "*/*", ActionCreate)
	for _, b := range [][2]string{{RoleAdmin, RoleReadonly}, {"admin", RoleAdmin}} {
		src.Line++
		p.Bindings = append(p.Bindings, Binding{Subject: b[0], Role: b[1], Source: src})
	}
	return p
}
