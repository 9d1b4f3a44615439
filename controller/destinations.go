package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/project"
	appsync "github.com/graphcd/graphcd/controller/sync"
	"github.com/graphcd/graphcd/internal/clusters"
	"github.com/graphcd/graphcd/internal/secretcodec"
)

// Destination is an owned destination cluster as a reconcile uses it: its
// cluster cache and the clients a sync applies with.
type Destination struct {
	// Server is the cluster's API server URL.
	Server string
	// Live is the cluster's cache.
	Live LiveState
	// Client and Mapper reach the cluster for sync operations; without
	// them syncs fail with an error.
	Client dynamic.Interface
	Mapper meta.RESTMapper

	// clients build the clients that impersonate service accounts (see
	// ClientAs); nil when the destination has no credentials of its own
	// (a Reconciler given only a Client).
	clients *syncClients

	// ready is closed once Live holds the cluster's initial state (nil:
	// ready now); err then says why the cache did not start.
	ready <-chan struct{}
	err   func() error
}

// wait blocks until the cache holds the cluster's initial state and
// returns the error that kept it from starting, if any.
func (d *Destination) wait(ctx context.Context) error {
	if d.ready != nil {
		select {
		case <-d.ready:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if d.err != nil {
		return d.err()
	}
	return nil
}

// destinations resolves app destinations to clusters and hands out the
// caches of the clusters this shard owns.
type destinations interface {
	// loaded is closed once Resolve knows every registered cluster.
	loaded() <-chan struct{}
	// Resolve returns the cluster dest points at; its error, safe to show,
	// explains an unknown cluster.
	Resolve(dest v1alpha1.ApplicationDestination) (*clusters.Cluster, error)
	// Connect returns the cache and clients of c, starting the cache when
	// it is not running. It does not wait for the cache to fill.
	Connect(c *clusters.Cluster) (*Destination, error)
}

// target is what claim found out about an app's destination.
type target struct {
	// cluster is the resolved cluster; nil when resolveErr is set.
	cluster *clusters.Cluster
	// dest is the cluster's cache and clients; nil when connErr or
	// resolveErr is set.
	dest *Destination
	// resolveErr: the destination names no usable cluster (an invalid
	// spec). connErr: the cluster's cache could not start (worth a retry).
	resolveErr, connErr error
}

// liveErr is the error that keeps the target from being compared or
// synced, nil when it can be.
func (t *target) liveErr() error {
	switch {
	case t.resolveErr != nil:
		return fmt.Errorf("%w: %w", errInvalidSpec, t.resolveErr)
	case t.connErr != nil:
		return fmt.Errorf("cluster %s: %w", t.cluster.Name, t.connErr)
	}
	return nil
}

// resolveTarget checks that an app may use cluster c: a cluster Secret
// with a project is usable only by the apps of that project. It runs as
// soon as the destination resolves, so another project's cluster is never
// connected to on the app's behalf; the project's rules check it again
// (project.Rules.ClusterAllowed) with permitOnlyProjectScopedClusters.
func resolveTarget(app *v1alpha1.Application, c *clusters.Cluster) error {
	return project.ClusterScopeAllowed(projectOf(app), projectCluster(c))
}

// projectCluster is c as the project rules check it.
func projectCluster(c *clusters.Cluster) project.Cluster {
	return project.Cluster{Server: c.Server, Name: c.Name, Project: c.Project}
}

// singleDestination is the reconciler's only cluster when it is built
// without a cluster registry (Options.Live): the cluster graphcd runs in.
type singleDestination struct {
	dest *Destination
}

var (
	singleCluster = &clusters.Cluster{Name: InClusterName, Server: InClusterServer}
	alwaysLoaded  = func() chan struct{} { c := make(chan struct{}); close(c); return c }()
)

func (s singleDestination) loaded() <-chan struct{} { return alwaysLoaded }

// Resolve knows only in-cluster, by server or name.
func (s singleDestination) Resolve(dest v1alpha1.ApplicationDestination) (*clusters.Cluster, error) {
	server := secretcodec.NormaliseServer(dest.Server)
	switch {
	case server == "" && dest.Name == "":
		return nil, fmt.Errorf("application destination has neither a server nor a name: set one of them")
	case dest.Name == "" && server == InClusterServer, server == "" && dest.Name == InClusterName,
		server == InClusterServer && dest.Name == InClusterName:
		return singleCluster, nil
	case dest.Name == "" || dest.Name == InClusterName:
		return nil, fmt.Errorf("cluster %s not found: %w", dest.Server, clusters.ErrNotFound)
	}
	return nil, fmt.Errorf("there are no clusters with this name: %s: %w", dest.Name, clusters.ErrNotFound)
}

// Connect returns the one cache.
func (s singleDestination) Connect(*clusters.Cluster) (*Destination, error) { return s.dest, nil }

// scoped is a LiveState that may be limited to the namespaces of its
// cluster Secret; a cluster cache is.
type scoped interface {
	// InScope returns an error, safe to show, when the object may not be
	// managed on the cluster.
	InScope(gk schema.GroupKind, namespace, name string) error
}

// outOfScope checks objs against the namespaces and clusterResources of
// the destination's cluster Secret. graphcd manages nothing outside them,
// so one object outside fails the comparison and the sync before anything
// is applied, as Argo CD does; the error, a *scopeError, names every such
// object.
func outOfScope(lv LiveState, objs []*unstructured.Unstructured) error {
	s, ok := lv.(scoped)
	if !ok {
		return nil
	}
	var msgs []string
	for _, o := range objs {
		if err := s.InScope(o.GroupVersionKind().GroupKind(), o.GetNamespace(), o.GetName()); err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &scopeError{refused: msgs}
}

// scopeError is a desired state with objects the destination's cluster
// Secret does not let graphcd manage. Only a change to the manifests or
// to the Secret fixes it, so a sync that meets it fails without retries.
type scopeError struct {
	// refused says, for each object outside, why.
	refused []string
}

func (e *scopeError) Error() string {
	return "resources outside the destination cluster's namespaces: " + strings.Join(e.refused, "; ")
}

// scopeRefused reports whether err is a desired state that leaves the
// destination's cluster scope.
func scopeRefused(err error) bool {
	_, ok := errors.AsType[*scopeError](err)
	return ok
}

// liveReader lets the sync executor read a destination's live objects
// through its cluster cache instead of the API server.
type liveReader struct{ live LiveState }

var _ appsync.Follower = liveReader{}

// Get implements sync.Reader.
func (l liveReader) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	return l.live.Lookup(ctx, ResourceKey{Group: gvk.Group, Kind: gvk.Kind, Namespace: namespace, Name: name})
}

// Observed implements sync.Follower: a sync waits for the cache to see
// its writes, so the comparison that ends it reads them.
func (l liveReader) Observed(gvk schema.GroupVersionKind, namespace, name, rv string) bool {
	return l.live.Observed(ResourceKey{Group: gvk.Group, Kind: gvk.Kind, Namespace: namespace, Name: name}, rv)
}
