package project

import (
	"fmt"
	"strings"
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
		pattern = normalizeRepoURL(pattern)
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
			probs.addf(field, "pattern %q: %v", redactURL(raw), err)
			continue
		}
		rules = append(rules, repoRule{deny: deny, g: g})
	}
	return rules
}

// SourceAllowed reports whether applications of the project may deploy
// from repoURL: it must match an entry of spec.sourceRepos and no entry
// negated with "!". URLs are compared as Argo CD compares them, see
// normalizeRepoURL.
func (r *Rules) SourceAllowed(repoURL string) error {
	u := normalizeRepoURL(repoURL)
	allowed := false
	for i := range r.repos {
		rule := &r.repos[i]
		if !rule.g.match(u) {
			continue
		}
		if rule.deny {
			return denied(r.name, "application repo %s is not permitted in project '%s' (denied by sourceRepos entry '!%s')",
				redactURL(repoURL), r.name, rule.g.src)
		}
		allowed = true
	}
	if !allowed {
		return denied(r.name, "application repo %s is not permitted in project '%s'", redactURL(repoURL), r.name)
	}
	return nil
}

// normalizeRepoURL puts a repository URL or pattern in the form Argo CD
// compares: trimmed and lower-cased (host and path alike), an scp-style
// "git@host:org/repo" written as "git@host/org/repo", a leading "ssh://"
// dropped (so both SSH spellings compare equal), and trailing "/" and
// ".git" removed.
func normalizeRepoURL(u string) string {
	u = strings.ToLower(strings.TrimSpace(u))
	if rest, ok := strings.CutPrefix(u, "ssh://"); ok {
		u = rest
	} else if isSCPLike(u) {
		u = strings.Replace(u, ":", "/", 1)
	}
	u = strings.TrimRight(u, "/")
	u = strings.TrimSuffix(u, ".git")
	return strings.TrimRight(u, "/")
}

// isSCPLike reports whether u is an scp-style SSH address such as
// "git@github.com:org/repo": no scheme, and a ":" before any "/".
func isSCPLike(u string) bool {
	if strings.Contains(u, "://") {
		return false
	}
	host, _, ok := strings.Cut(u, ":")
	return ok && host != "" && !strings.Contains(host, "/")
}

// redactURL hides credentials in a URL before it goes into a message: the
// password of "user:password@", and for http(s) a user alone, which is
// often a token. SSH user names such as "git@" stay.
func redactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	authority, path, hasPath := strings.Cut(rest, "/")
	at := strings.LastIndex(authority, "@")
	if at < 0 {
		return u
	}
	userinfo, host := authority[:at], authority[at+1:]
	switch user, _, hasPassword := strings.Cut(userinfo, ":"); {
	case hasPassword:
		userinfo = user + ":***"
	case strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https"):
		userinfo = "***"
	default:
		return u
	}
	out := scheme + "://" + userinfo + "@" + host
	if hasPath {
		out += "/" + path
	}
	return out
}
