package model

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Kinds of object with global IDs besides applications.
const (
	KindProject    = "Project"
	KindCluster    = "Cluster"
	KindRepository = "Repository"
)

// Project is an AppProject as the graph shows it. The embedded object is
// shared with the cache it came from: never modify it.
type Project struct {
	*v1alpha1.AppProject
}

// ID returns the global ID.
func (p Project) ID() string {
	return NodeID(KindProject, types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
}

// Cluster is a destination cluster without its credentials.
type Cluster struct {
	Name             string
	Server           string
	Namespaces       []string
	ClusterResources bool
	Project          string
	Shard            *int
	Labels           []KeyValue
	// Annotations are the cluster Secret's, for the clusters generator of
	// ApplicationSets; the schema does not show them.
	Annotations []KeyValue
}

// ID returns the global ID, from the server URL.
func (c Cluster) ID() string { return NodeID(KindCluster, types.NamespacedName{Name: c.Server}) }

// Repository is a configured repository or credential template without its
// credentials.
type Repository struct {
	Name           string
	URL            string
	Project        string
	Type           string
	HasCredentials bool
	Template       bool
}

// ID returns the global ID, from the URL, whether it is a template and the
// project it is scoped to: a project's repository is a declaration apart
// from a global one of the same URL.
func (r Repository) ID() string {
	kind := "repository"
	if r.Template {
		kind = "repo-creds"
	}
	if r.Project != "" {
		kind += ":" + r.Project
	}
	return NodeID(KindRepository, types.NamespacedName{Namespace: kind, Name: r.URL})
}
