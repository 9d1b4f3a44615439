package project

import (
	"fmt"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// orphanRule is one compiled spec.orphanedResources.ignore entry; a nil
// kind or name glob matches any kind or name.
type orphanRule struct {
	group, kind, name *glob
}

func compileOrphans(s *v1alpha1.OrphanedResourcesMonitorSettings, probs *problems) []orphanRule {
	if s == nil {
		return nil
	}
	rules := make([]orphanRule, 0, len(s.Ignore))
	for i, key := range s.Ignore {
		field := fmt.Sprintf("spec.orphanedResources.ignore[%d]", i)
		var rule orphanRule
		ok := true
		for _, f := range []struct {
			name, value string
			into        **glob
			anyIfEmpty  bool
		}{
			{"group", key.Group, &rule.group, false},
			{"kind", key.Kind, &rule.kind, true},
			{"name", key.Name, &rule.name, true},
		} {
			if f.value == "" && f.anyIfEmpty {
				continue
			}
			g, err := compileGlob(f.value, noSeparator)
			if err != nil {
				probs.addf(field+"."+f.name, "pattern %q: %v", f.value, err)
				ok = false
				continue
			}
			*f.into = g
		}
		if ok {
			rules = append(rules, rule)
		}
	}
	return rules
}

// OrphanedResourcesMonitored reports whether the project asks for orphaned
// resources to be reported: spec.orphanedResources is set.
func (r *Rules) OrphanedResourcesMonitored() bool { return r.orphansOn }

// OrphanedResourcesWarn reports whether applications get an
// OrphanedResourceWarning condition when their destination namespace holds
// orphaned resources. As in Argo CD, warn defaults to true once
// spec.orphanedResources is set.
func (r *Rules) OrphanedResourcesWarn() bool { return r.orphansWarn }

// OrphanedIgnored reports whether a resource is left out of orphaned
// resource reports by spec.orphanedResources.ignore. An entry matches when
// its group glob matches ("" is the core group only) and its kind and name
// globs match, an empty kind or name matching any.
func (r *Rules) OrphanedIgnored(group, kind, name string) bool {
	for _, o := range r.orphans {
		if o.group.match(group) && (o.kind == nil || o.kind.match(kind)) && (o.name == nil || o.name.match(name)) {
			return true
		}
	}
	return false
}

// OrphanedIgnored reports whether settings (spec.orphanedResources) ignore
// the resource; see Rules.OrphanedIgnored. An entry with a malformed glob
// ignores nothing.
func OrphanedIgnored(settings *v1alpha1.OrphanedResourcesMonitorSettings, group, kind, name string) bool {
	r := &Rules{orphans: compileOrphans(settings, &problems{})}
	return r.OrphanedIgnored(group, kind, name)
}

// OrphanedWarn reports whether settings turn the OrphanedResourceWarning
// condition on: settings are present and warn is not false.
func OrphanedWarn(settings *v1alpha1.OrphanedResourcesMonitorSettings) bool {
	return settings != nil && (settings.Warn == nil || *settings.Warn)
}

// KnownOrphanExclusion reports whether a resource is one Kubernetes creates
// in every namespace by itself, which is never reported as orphaned: the
// default ServiceAccount, the kube-root-ca.crt ConfigMap and, in the
// default namespace, the kubernetes Service.
func KnownOrphanExclusion(namespace, group, kind, name string) bool {
	if group != "" {
		return false
	}
	switch {
	case kind == "ServiceAccount" && name == "default",
		kind == "ConfigMap" && name == "kube-root-ca.crt",
		kind == "Service" && name == "kubernetes" && namespace == "default":
		return true
	}
	return false
}
