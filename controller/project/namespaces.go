package project

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// nsRule is one compiled spec.sourceNamespaces entry: a glob, or a regular
// expression when written between slashes.
type nsRule struct {
	g  *glob
	re *regexp.Regexp
}

func (n nsRule) match(namespace string) bool {
	if n.re != nil {
		return n.re.MatchString(namespace)
	}
	return n.g.match(namespace)
}

func compileSourceNamespaces(field string, patterns []string, probs *problems) []nsRule {
	rules := make([]nsRule, 0, len(patterns))
	for i, p := range patterns {
		field := fmt.Sprintf("%s[%d]", field, i)
		if len(p) > maxPatternLen {
			probs.addf(field, "%v", errPatternTooLong)
			continue
		}
		if len(p) >= 2 && strings.HasPrefix(p, "/") && strings.HasSuffix(p, "/") {
			re, err := regexp.Compile(p[1 : len(p)-1])
			if err != nil {
				probs.addf(field, "regular expression %q: %v", p, err)
				continue
			}
			rules = append(rules, nsRule{re: re})
			continue
		}
		g, err := compileGlob(p, noSeparator)
		if err != nil {
			probs.addf(field, "pattern %q: %v", p, err)
			continue
		}
		rules = append(rules, nsRule{g: g})
	}
	return rules
}

// AppNamespaceAllowed reports whether an Application in namespace may use
// the project. Applications in the controller's own namespace (and those
// not yet given a namespace) always may; others need a match in
// spec.sourceNamespaces, a glob or a /regular expression/ (unanchored, as
// in Argo CD: anchor it with ^ and $ to match whole names).
func (r *Rules) AppNamespaceAllowed(namespace, controllerNamespace string) error {
	if r.allowsAppNamespace(namespace, controllerNamespace) {
		return nil
	}
	return denied(r.name, "application namespace '%s' is not permitted in project '%s' (not in sourceNamespaces)", namespace, r.name)
}

// allowsAppNamespace is AppNamespaceAllowed without the error, which
// AppNamespaces.Admits, run for every app of a list, does not build.
func (r *Rules) allowsAppNamespace(namespace, controllerNamespace string) bool {
	if namespace == "" || namespace == controllerNamespace {
		return true
	}
	for _, n := range r.appNamespaces {
		if n.match(namespace) {
			return true
		}
	}
	return false
}

// AppNamespaces is the set of namespaces whose Applications a server or a
// controller serves: graphcd's own namespace and those matching the
// --application-namespaces patterns (globs, or /regular expressions/, as
// in spec.sourceNamespaces). Safe for concurrent use.
type AppNamespaces struct {
	own   string
	rules []nsRule
	names []string // the patterns when each is a plain name, else nil
}

// CompileAppNamespaces compiles the patterns of --application-namespaces
// around own, graphcd's namespace ("" with no patterns serves every
// namespace, as tests that isolate by namespace do).
func CompileAppNamespaces(own string, patterns []string) (*AppNamespaces, error) {
	probs := &problems{}
	a := &AppNamespaces{own: own, rules: compileSourceNamespaces("--application-namespaces", patterns, probs)}
	if len(probs.list) > 0 {
		return nil, errors.New(strings.Join(probs.list, "; "))
	}
	literal := true
	for _, r := range a.rules {
		literal = literal && r.re == nil && r.g.shape == shapeLiteral
	}
	if literal {
		a.names = append([]string{}, patterns...)
	}
	return a, nil
}

// Own returns graphcd's namespace, where an Application named without a
// namespace lives.
func (a *AppNamespaces) Own() string { return a.own }

// Allowed reports whether an Application in namespace is served.
func (a *AppNamespaces) Allowed(namespace string) bool {
	if a.own == "" || namespace == a.own {
		return true
	}
	for _, r := range a.rules {
		if r.match(namespace) {
			return true
		}
	}
	return false
}

// Admits reports whether an Application in namespace is served at all:
// it lives in graphcd's namespace, or in a served namespace (Allowed) and
// its project allows it there (spec.sourceNamespaces). rules returns the
// app's project compiled, nil when the project does not exist; it is
// called only for an app outside graphcd's namespace. The API and its
// benchmarks call this one test, so that what is listed and what is
// measured are the same.
func (a *AppNamespaces) Admits(namespace string, rules func() (*Rules, error)) bool {
	if a.own == "" || namespace == a.own {
		return true
	}
	if !a.Allowed(namespace) {
		return false
	}
	r, err := rules()
	return err == nil && r != nil && r.allowsAppNamespace(namespace, a.own)
}

// Watch returns the namespaces to watch for Applications: graphcd's own
// and the patterns when every pattern is a plain name, or nil when any is
// a glob or expression and every namespace must be watched (and filtered
// with Allowed).
func (a *AppNamespaces) Watch() []string {
	if a.own == "" || a.names == nil {
		return nil
	}
	out := []string{a.own}
	for _, n := range a.names {
		if n != a.own {
			out = append(out, n)
		}
	}
	return out
}
