package project

import (
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

func compileSourceNamespaces(patterns []string, probs *problems) []nsRule {
	rules := make([]nsRule, 0, len(patterns))
	for i, p := range patterns {
		field := fmt.Sprintf("spec.sourceNamespaces[%d]", i)
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
	if namespace == "" || namespace == controllerNamespace {
		return nil
	}
	for _, n := range r.appNamespaces {
		if n.match(namespace) {
			return nil
		}
	}
	return denied(r.name, "application namespace '%s' is not permitted in project '%s' (not in sourceNamespaces)", namespace, r.name)
}
