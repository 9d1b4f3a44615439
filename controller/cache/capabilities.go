package cache

import (
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// capabilities are what renders learn of the cluster: Helm's
// .Capabilities and the build environment's KUBE_VERSION and
// KUBE_API_VERSIONS, as Argo CD hands them to its repository server.
type capabilities struct {
	kubeVersion string
	apiVersions []string
}

// readCapabilities asks the cluster for its version and group versions,
// and joins them with the kinds of lists (a discovery's preferred
// resources): every "group/version" the cluster serves, and
// "group/version/Kind" of each kind at its preferred version. A part
// that cannot be read is left out with a warning: a render then sees the
// defaults of its tool, as without a cluster.
func (c *Cluster) readCapabilities(lists []*metav1.APIResourceList) capabilities {
	var caps capabilities
	if v, err := c.disco.ServerVersion(); err == nil {
		caps.kubeVersion = v.GitVersion
	} else {
		c.log.Warn("cluster cache: cannot read the cluster's version for renders", "err", err)
	}
	set := map[string]bool{}
	if groups, err := c.disco.ServerGroups(); err == nil {
		for _, g := range groups.Groups {
			for _, v := range g.Versions {
				set[v.GroupVersion] = true
			}
		}
	} else {
		c.log.Warn("cluster cache: cannot list the cluster's API versions for renders", "err", err)
	}
	for _, l := range lists {
		set[l.GroupVersion] = true
		for _, r := range l.APIResources {
			if !strings.Contains(r.Name, "/") {
				set[l.GroupVersion+"/"+r.Kind] = true
			}
		}
	}
	caps.apiVersions = slices.Sorted(maps.Keys(set))
	return caps
}

// Capabilities returns the cluster's version ("v1.37.2") and API versions
// as the last discovery found them, for renders (see readCapabilities).
// The slice is shared: callers must not change it.
func (c *Cluster) Capabilities() (kubeVersion string, apiVersions []string) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.caps.kubeVersion, c.caps.apiVersions
}
