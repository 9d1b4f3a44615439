package project

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kindRule is one compiled group/kind entry of a white- or blacklist.
type kindRule struct {
	group, kind *glob
}

// kindList is a compiled white- or blacklist.
type kindList []kindRule

func (l kindList) contains(group, kind string) bool {
	for _, k := range l {
		if k.group.match(group) && k.kind.match(kind) {
			return true
		}
	}
	return false
}

func compileKinds(field string, list []metav1.GroupKind, probs *problems) kindList {
	out := make(kindList, 0, len(list))
	for i, gk := range list {
		f := fmt.Sprintf("%s[%d]", field, i)
		if gk.Kind == "" {
			probs.addf(f+".kind", "kind is required (use '*' for every kind)")
			continue
		}
		group, gerr := compileGlob(gk.Group, noSeparator)
		if gerr != nil {
			probs.addf(f+".group", "pattern %q: %v", gk.Group, gerr)
		}
		kind, kerr := compileGlob(gk.Kind, noSeparator)
		if kerr != nil {
			probs.addf(f+".kind", "pattern %q: %v", gk.Kind, kerr)
		}
		if gerr == nil && kerr == nil {
			out = append(out, kindRule{group: group, kind: kind})
		}
	}
	return out
}

// ClusterResourceAllowed reports whether applications of the project may
// create cluster-scoped resources of group and kind ("" is the core
// group): the kind must be in spec.clusterResourceWhitelist, which allows
// nothing when empty, and not in spec.clusterResourceBlacklist.
func (r *Rules) ClusterResourceAllowed(group, kind string) error {
	switch {
	case !r.clusterAllow.contains(group, kind):
		return denied(r.name, "resource %s:%s is not permitted in project %s (not in clusterResourceWhitelist)", group, kind, r.name)
	case r.clusterDeny.contains(group, kind):
		return denied(r.name, "resource %s:%s is not permitted in project %s (in clusterResourceBlacklist)", group, kind, r.name)
	}
	return nil
}

// NamespaceResourceAllowed reports whether applications of the project may
// create namespaced resources of group and kind: the kind must not be in
// spec.namespaceResourceBlacklist and, when spec.namespaceResourceWhitelist
// is set, must be in it. As in Argo CD, an unset whitelist allows every
// kind and a whitelist set to an empty list allows none.
func (r *Rules) NamespaceResourceAllowed(group, kind string) error {
	switch {
	case !r.nsAllowAll && !r.nsAllow.contains(group, kind):
		return denied(r.name, "resource %s:%s is not permitted in project %s (not in namespaceResourceWhitelist)", group, kind, r.name)
	case r.nsDeny.contains(group, kind):
		return denied(r.name, "resource %s:%s is not permitted in project %s (in namespaceResourceBlacklist)", group, kind, r.name)
	}
	return nil
}

// ResourceAllowed checks one manifest the way a sync does: its kind
// against the cluster or namespace lists, and for a namespaced resource
// (namespace != "") its namespace against the destinations, on the
// application's destination cluster (server and/or name).
func (r *Rules) ResourceAllowed(group, kind, namespace, server, name string) error {
	if namespace == "" {
		return r.ClusterResourceAllowed(group, kind)
	}
	if err := r.NamespaceResourceAllowed(group, kind); err != nil {
		return err
	}
	return r.DestinationAllowed(server, name, namespace)
}
