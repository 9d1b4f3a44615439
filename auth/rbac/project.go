package rbac

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// projectResources are the resources a project role may name; their
// objects live inside the project.
var projectResources = map[string]bool{
	ResourceApplications: true, ResourceApplicationSets: true, ResourceLogs: true, ResourceExec: true,
	ResourceProjects: true, ResourceRepositories: true, ResourceClusters: true,
}

// scopedResources are the project resources whose objects are
// "<project>/<url>" (ScopedObject): the URL after the project is any
// pattern, not path segments.
var scopedResources = map[string]bool{ResourceRepositories: true, ResourceClusters: true}

// objectSegment is one path segment of a project role's object.
var objectSegment = regexp.MustCompile(`^[\w.*-]+$`)

// SetProjectRoles replaces the roles of project with roles: each role's
// policies (which must name the role's own subject,
// proj:<project>:<role>, and objects inside the project) and its SSO
// groups. Invalid policies are left out and returned in a
// *ValidationError; the valid ones are loaded.
func (e *Enforcer) SetProjectRoles(project string, roles []v1alpha1.ProjectRole) error {
	var rules []Rule
	var bindings []Binding
	var errs []*LineError
	subjects := make([]string, 0, len(roles))
	for _, role := range roles {
		sub := ProjectRoleSubject(project, role.Name)
		subjects = append(subjects, sub)
		key := fmt.Sprintf("project %s role %s", project, role.Name)
		for i, line := range role.Policies {
			src := Source{Key: key, Line: i + 1}
			r, err := e.parseProjectPolicy(project, sub, line)
			if err != nil {
				errs = append(errs, &LineError{src, err.Error()})
				continue
			}
			r.Source = src
			rules = append(rules, r)
		}
		for i, g := range role.Groups {
			if g = strings.TrimSpace(g); g == "" {
				errs = append(errs, &LineError{Source{Key: key + " groups", Line: i + 1}, "empty group"})
				continue
			}
			bindings = append(bindings, Binding{Subject: g, Role: sub, Source: Source{Key: key + " groups", Line: i + 1}})
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.removeProjectLocked(project)
	if err := e.add(rules, bindings); err != nil {
		return err
	}
	e.projects[project] = subjects
	e.resetCache()
	if len(errs) > 0 {
		return &ValidationError{Lines: errs}
	}
	return nil
}

// RemoveProject forgets the roles of a deleted project.
func (e *Enforcer) RemoveProject(project string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.removeProjectLocked(project)
	_ = e.refreshSubjects() // listing an in-memory policy does not fail
	e.resetCache()
}

func (e *Enforcer) removeProjectLocked(project string) {
	for _, sub := range e.projects[project] {
		_, _ = e.casbin.RemoveFilteredPolicy(0, sub)
		_, _ = e.casbin.RemoveFilteredGroupingPolicy(1, sub)
	}
	delete(e.projects, project)
}

// parseProjectPolicy checks a project role policy as Argo CD does: six
// fields, the role's own subject, a project resource, and an object in the
// project ("<project>/<app>", "<project>/<namespace>/<app>", the project
// itself for projects, "<project>/<url pattern>" for the project's own
// repositories and clusters). In regex mode the project part is quoted,
// so a "." in its name matches only a ".", and a repository or cluster
// pattern is a group of its own, so it cannot match outside the project.
func (e *Enforcer) parseProjectPolicy(project, sub, line string) (Rule, error) {
	f, err := splitLine(strings.TrimSpace(line))
	if err != nil {
		return Rule{}, err
	}
	if len(f) != 6 || f[0] != "p" {
		return Rule{}, fmt.Errorf("want p, %s, <resource>, <action>, <object>, allow|deny", sub)
	}
	r, err := parseRule(f, e.mode)
	if err != nil {
		return Rule{}, err
	}
	if r.Subject != sub {
		return Rule{}, fmt.Errorf("subject must be %q, not %q", sub, clip(r.Subject))
	}
	if !projectResources[r.Resource] {
		return Rule{}, fmt.Errorf("resource %q is not allowed in a project role", clip(r.Resource))
	}
	if r.Resource == ResourceProjects {
		if r.Object != project {
			return Rule{}, fmt.Errorf("object must be %q", project)
		}
		if e.mode == MatchRegex {
			r.Object = regexp.QuoteMeta(project)
		}
		return r, nil
	}
	rest, ok := strings.CutPrefix(r.Object, project+"/")
	if scopedResources[r.Resource] {
		return scopedPolicy(r, project, rest, ok, e.mode)
	}
	segs := strings.Split(rest, "/")
	valid := ok && len(segs) <= 2
	for _, s := range segs {
		valid = valid && objectSegment.MatchString(s)
	}
	if !valid {
		return Rule{}, fmt.Errorf("object must be %s/<app>, %s/<namespace>/<app> or %s/*", project, project, project)
	}
	if e.mode == MatchRegex {
		r.Object = regexp.QuoteMeta(project) + "/" + rest
	}
	return r, nil
}

// scopedPolicy checks the object of a project role's repository or
// cluster rule: "<project>/" and a non-empty pattern of URLs. In regex
// mode the pattern must compile on its own (so its groups are balanced)
// and is wrapped in a group: "team/a|.*" would otherwise match every
// object.
func scopedPolicy(r Rule, project, rest string, ok bool, mode MatchMode) (Rule, error) {
	if !ok || rest == "" {
		return Rule{}, fmt.Errorf("object must be %s/<url> or %s/*", project, project)
	}
	if mode != MatchRegex {
		return r, nil
	}
	if _, err := regexp.Compile(rest); err != nil {
		return Rule{}, fmt.Errorf("object %q: %w", clip(r.Object), unwrapRegexpError(err))
	}
	r.Object = regexp.QuoteMeta(project) + "/(?:" + rest + ")"
	return r, nil
}
