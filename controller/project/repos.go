package project

import (
	"fmt"
	"strings"

	"github.com/graphcd/graphcd/internal/repourl"
)

// repoRule is one compiled spec.sourceRepos entry.
type repoRule struct {
	deny bool
	g    *glob
}

func compileRepos(patterns []string, probs *problems) []repoRule {
	rules := make([]repoRule, 0, len(patterns))
	for i, raw := range patterns {
		field := fmt.Sprintf("spec.sourceRepos[%d]", i)
		pattern, deny := strings.CutPrefix(strings.TrimSpace(raw), "!")
		pattern = repourl.Normalize(pattern)
		switch {
		case pattern == "":
			probs.addf(field, "empty repository pattern")
			continue
		case deny && pattern == "*":
			probs.addf(field, "'!*' denies every repository; remove the entry or list the repositories to deny")
			continue
		}
		g, err := compileGlob(pattern, '/')
		if err != nil {
			probs.addf(field, "pattern %q: %v", repourl.Redact(raw), err)
			continue
		}
		rules = append(rules, repoRule{deny: deny, g: g})
	}
	return rules
}

// SourceAllowed reports whether applications of the project may deploy
// from repoURL: it must match an entry of spec.sourceRepos and no entry
// negated with "!". URLs and patterns are compared in repourl's form, as
// webhooks and credential lookups compare them.
func (r *Rules) SourceAllowed(repoURL string) error {
	u := repourl.Normalize(repoURL)
	allowed := false
	for i := range r.repos {
		rule := &r.repos[i]
		if !rule.g.match(u) {
			continue
		}
		if rule.deny {
			return denied(r.name, "application repo %s is not permitted in project '%s' (denied by sourceRepos entry '!%s')",
				repourl.Redact(repoURL), r.name, rule.g.src)
		}
		allowed = true
	}
	if !allowed {
		return denied(r.name, "application repo %s is not permitted in project '%s'", repourl.Redact(repoURL), r.name)
	}
	return nil
}
