package catalog

import (
	"context"
	"log/slog"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/clusters"
	"github.com/graphcd/graphcd/reposerver/repocreds"
)

// Clusters lists the registered destination clusters, without their
// credentials.
type Clusters struct{ reg *clusters.Registry }

// StartClusters lists the clusters of reg, the process's registry shared
// with its controller, and runs it until ctx ends; the list is empty
// until the Secrets are loaded.
func StartClusters(ctx context.Context, reg *clusters.Registry, log *slog.Logger) (*Clusters, error) {
	if err := reg.Run(ctx); err != nil {
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
		out[i] = clusterModel(c)
	}
	return out, nil
}

// Destination returns the cluster dest points at, resolved by the
// registry as the controller resolves it; false when it resolves to none,
// which the controller reports as an invalid destination.
func (l *Clusters) Destination(_ context.Context, dest v1alpha1.ApplicationDestination) (model.Cluster, bool) {
	c, err := l.reg.Resolve(dest)
	if err != nil {
		return model.Cluster{}, false
	}
	return clusterModel(c), true
}

// clusterModel is c without its credentials. Its annotations leave out
// kubectl's last-applied configuration, which repeats the Secret's data
// (credentials) when it was applied with kubectl.
func clusterModel(c *clusters.Cluster) model.Cluster {
	annotations := model.KeyValues(c.Annotations)
	annotations = slices.DeleteFunc(annotations, func(kv model.KeyValue) bool { return kv.Key == corev1.LastAppliedConfigAnnotation })
	return model.Cluster{
		Name: c.Name, Server: c.Server, Namespaces: c.Namespaces, ClusterResources: c.ClusterResources,
		Project: c.Project, Shard: c.Shard, Labels: model.KeyValues(c.Labels), Annotations: annotations,
	}
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
