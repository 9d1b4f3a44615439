package project

// Cluster is an application's destination cluster as a project checks it.
type Cluster struct {
	// Server and Name are the cluster's API server URL and the name it is
	// registered under; pass both when it is registered (see
	// Rules.DestinationAllowed), else the destination's own.
	Server, Name string
	// Project is the AppProject the cluster Secret scopes the cluster to;
	// "" for a cluster every project may use, and for one not registered.
	Project string
}

// ClusterAllowed checks the project dest is scoped to. A cluster scoped
// to another project is refused (see ClusterScopeAllowed); with
// spec.permitOnlyProjectScopedClusters, so is every cluster not scoped to
// this project, the global ones included, as in Argo CD:
//
//	spec:
//	  destinations: [{server: '*', namespace: '*'}]
//	  permitOnlyProjectScopedClusters: true  # only clusters whose Secret says project: <this one>
func (r *Rules) ClusterAllowed(dest Cluster) error {
	if err := ClusterScopeAllowed(r.name, dest); err != nil {
		return err
	}
	if r.onlyScoped && dest.Project != r.name {
		return denied(r.name, "application destination %s is not permitted in project '%s': the project permits only clusters scoped to it (permitOnlyProjectScopedClusters)",
			clusterWords(dest), r.name)
	}
	return nil
}

// ClusterScopeAllowed reports whether the applications of project may use
// dest: a cluster whose Secret scopes it to another project serves only
// that project. The error, safe to show the application's readers, does
// not name the other project. The controller applies it as soon as it
// resolves a destination, before it reads the project; Rules.ClusterAllowed
// applies it with the rest of the project's rules.
func ClusterScopeAllowed(project string, dest Cluster) error {
	if dest.Project == "" || dest.Project == project {
		return nil
	}
	return denied(project, "application destination %s is not permitted in project '%s': the cluster is scoped to another project",
		clusterWords(dest), project)
}

// clusterWords names a cluster as destinationWords does, without a
// namespace.
func clusterWords(c Cluster) string {
	switch {
	case c.Server != "" && c.Name != "":
		return "server '" + c.Server + "' (cluster '" + c.Name + "')"
	case c.Server != "":
		return "server '" + c.Server + "'"
	}
	return "cluster '" + c.Name + "'"
}
