package catalog

import (
	"context"
	"log/slog"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/clusters"
	"github.com/graphcd/graphcd/reposerver/repocreds"
)

// Clusters lists the registered destination clusters, without their
// credentials.
type Clusters struct{ reg *clusters.Registry }

// StartClusters watches the cluster Secrets of namespace in the background
// until ctx ends; the list is empty until they are loaded. inCluster is the
// server's own configuration, listed as the in-cluster cluster.
func StartClusters(ctx context.Context, kc kubernetes.Interface, namespace string, inCluster *rest.Config, log *slog.Logger) (*Clusters, error) {
	reg, err := clusters.New(clusters.Options{Client: kc, Namespace: namespace, InCluster: inCluster, Logger: log})
	if err != nil {
		return nil, err
	}
	go func() {
		if err := reg.Start(ctx); err != nil && ctx.Err() == nil {
			log.Error("watch cluster Secrets", "err", err)
		}
	}()
	return &Clusters{reg: reg}, nil
}

// Clusters returns the clusters.
func (l *Clusters) Clusters(context.Context) ([]model.Cluster, error) {
	all := l.reg.List()
	out := make([]model.Cluster, len(all))
	for i, c := range all {
		out[i] = model.Cluster{
			Name: c.Name, Server: c.Server, Namespaces: c.Namespaces, ClusterResources: c.ClusterResources,
			Project: c.Project, Shard: c.Shard, Labels: model.KeyValues(c.Labels),
		}
	}
	return out, nil
}

// Repositories lists the configured repositories and credential
// templates, without their credentials.
type Repositories struct{ store *repocreds.Store }

// NewRepositories reads the repository Secrets of namespace.
func NewRepositories(kc kubernetes.Interface, namespace string) *Repositories {
	return &Repositories{store: repocreds.New(kc, namespace)}
}

// Invalidate makes the next list read the Secrets again.
func (l *Repositories) Invalidate() { l.store.Invalidate() }

// Repositories returns the repositories.
func (l *Repositories) Repositories(ctx context.Context) ([]model.Repository, error) {
	infos, err := l.store.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]model.Repository, len(infos))
	for i, r := range infos {
		out[i] = model.Repository{
			Name: r.Name, URL: r.URL, Project: r.Project, Type: string(r.Type),
			HasCredentials: r.HasCredentials, Template: r.Template,
		}
	}
	return out, nil
}
