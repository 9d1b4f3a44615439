package cache

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// OutOfScopeError is InScope's error: an object lies outside what the
// cluster's Secret lets graphcd manage.
type OutOfScopeError struct {
	// Key is the object.
	Key ResourceKey
	// ClusterScoped is true for a cluster-scoped object.
	ClusterScoped bool
	// Cluster is the cluster's URL, Namespaces those it allows.
	Cluster    string
	Namespaces []string
}

func (e *OutOfScopeError) Error() string {
	allowed := strings.Join(e.Namespaces, ", ")
	if e.ClusterScoped {
		return fmt.Sprintf("%s %s is cluster-scoped: the cluster secret of %s allows only namespaces %s and no cluster-scoped resources (clusterResources is not \"true\")",
			e.Key.Kind, e.Key.Name, e.Cluster, allowed)
	}
	return fmt.Sprintf("%s %s/%s is in namespace %s, which the cluster secret of %s does not allow (its namespaces: %s)",
		e.Key.Kind, e.Key.Namespace, e.Key.Name, e.Key.Namespace, e.Cluster, allowed)
}

// Namespaces returns the namespaces the cache is limited to (sorted), nil
// when it covers the whole cluster.
func (c *Cluster) Namespaces() []string { return slices.Clone(c.namespaces) }

// InScope returns an *OutOfScopeError when an object of kind gk in
// namespace may not be managed through this cache: with Namespaces set, a
// namespaced object in another namespace, or a cluster-scoped one unless
// ClusterResources is set. A kind the cluster does not serve is left to
// the caller (nil): applying it fails on its own.
func (c *Cluster) InScope(gk schema.GroupKind, namespace, name string) error {
	if c.namespaces == nil {
		return nil
	}
	r, err := c.resourceFor(gk)
	if err != nil {
		return nil //nolint:nilerr // an unknown kind is not a scope question
	}
	e := &OutOfScopeError{
		Key:     ResourceKey{Group: gk.Group, Kind: gk.Kind, Namespace: namespace, Name: name},
		Cluster: c.filter.clusterURL, Namespaces: slices.Clone(c.namespaces),
	}
	switch {
	case !r.namespaced && !c.clusterResources:
		e.ClusterScoped, e.Key.Namespace = true, ""
		return e
	case r.namespaced && !slices.Contains(c.namespaces, namespace):
		return e
	}
	return nil
}
