package cache

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/graphcd/graphcd/internal/settings"
)

// builtinExcluded are kinds the cache never watches: they are high-churn,
// never managed by an application, or cannot be listed.
var builtinExcluded = map[schema.GroupKind]bool{
	{Group: "", Kind: "Event"}:                                        true,
	{Group: "events.k8s.io", Kind: "Event"}:                           true,
	{Group: "coordination.k8s.io", Kind: "Lease"}:                     true,
	{Group: "authentication.k8s.io", Kind: "TokenReview"}:             true,
	{Group: "authentication.k8s.io", Kind: "SelfSubjectReview"}:       true,
	{Group: "authorization.k8s.io", Kind: "SubjectAccessReview"}:      true,
	{Group: "authorization.k8s.io", Kind: "SelfSubjectAccessReview"}:  true,
	{Group: "authorization.k8s.io", Kind: "SelfSubjectRulesReview"}:   true,
	{Group: "authorization.k8s.io", Kind: "LocalSubjectAccessReview"}: true,
	{Group: "", Kind: "Binding"}:                                      true,
	{Group: "", Kind: "ComponentStatus"}:                              true,
	{Group: "coordination.k8s.io", Kind: "LeaseCandidate"}:            true,
}

// filter applies built-in exclusions and the configured exclusions and
// inclusions, the way Argo CD's resource.exclusions/inclusions do.
type filter struct {
	clusterURL             string
	exclusions, inclusions []settings.ResourceFilter
}

// watched reports whether the cache watches gk.
func (f filter) watched(gk schema.GroupKind) bool {
	if builtinExcluded[gk] {
		return false
	}
	for _, ex := range f.exclusions {
		if f.match(ex, gk) {
			return false
		}
	}
	if len(f.inclusions) == 0 {
		return true
	}
	for _, in := range f.inclusions {
		if f.match(in, gk) {
			return true
		}
	}
	return false
}

func (f filter) match(rf settings.ResourceFilter, gk schema.GroupKind) bool {
	return matchAny(rf.APIGroups, gk.Group) && matchAny(rf.Kinds, gk.Kind) && matchAny(rf.Clusters, f.clusterURL)
}

// matchAny reports whether s matches one of the globs; no globs match
// everything.
func matchAny(globs []string, s string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if glob(g, s) {
			return true
		}
	}
	return false
}

// glob matches s against a pattern where `*` stands for any run of
// characters, slashes included (cluster URLs have them).
func glob(pattern, s string) bool {
	star := strings.IndexByte(pattern, '*')
	if star < 0 {
		return pattern == s
	}
	if !strings.HasPrefix(s, pattern[:star]) {
		return false
	}
	s, pattern = s[star:], pattern[star+1:]
	for i := 0; i <= len(s); i++ {
		if glob(pattern, s[i:]) {
			return true
		}
	}
	return false
}
