package catalog

import (
	"context"
	"fmt"
	"sync"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/audit"
)

// ResourceRef names one live object of an application.
type ResourceRef struct {
	Group, Kind, Namespace, Name string
}

// Resources reads, deletes and patches live objects on the destination
// clusters of applications (the API's liveResource and resource actions).
type Resources struct {
	clusters *Clusters
	mu       sync.Mutex
	conns    map[*rest.Config]*clusterConn
}

// clusterConn is a dynamic client and a REST mapper for one cluster.
type clusterConn struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// NewResources acts on the clusters of c.
func NewResources(c *Clusters) *Resources {
	return &Resources{clusters: c, conns: map[*rest.Config]*clusterConn{}}
}

// Get reads ref on the cluster dest names; nil when it does not exist.
func (r *Resources) Get(ctx context.Context, dest v1alpha1.ApplicationDestination, ref ResourceRef) (*unstructured.Unstructured, error) {
	ri, err := r.resource(ctx, dest, ref)
	if err != nil {
		return nil, err
	}
	obj, err := ri.Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

// eventsResource is events.k8s.io/v1, which every supported Kubernetes
// serves.
var eventsResource = schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}

// maxObjectEvents bounds how many Events of one object are read.
const maxObjectEvents = 500

// Events lists the Events about ref on the cluster dest names (any
// namespace for a cluster-scoped object).
func (r *Resources) Events(ctx context.Context, dest v1alpha1.ApplicationDestination, ref ResourceRef) ([]eventsv1.Event, error) {
	conn, err := r.connTo(dest)
	if err != nil {
		return nil, err
	}
	selector := fields.Set{"regarding.kind": ref.Kind, "regarding.name": ref.Name}
	if ref.Namespace != "" {
		selector["regarding.namespace"] = ref.Namespace
	}
	list, err := conn.dyn.Resource(eventsResource).Namespace(ref.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: selector.AsSelector().String(), Limit: maxObjectEvents,
	})
	if err != nil {
		return nil, err
	}
	out := make([]eventsv1.Event, 0, len(list.Items))
	for i := range list.Items {
		var e eventsv1.Event
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, &e); err != nil {
			return nil, fmt.Errorf("event %s: %w", list.Items[i].GetName(), err)
		}
		// The group is not in the selector (the API server cannot select
		// by it): leave out a same-named object of another group.
		if gv, err := schema.ParseGroupVersion(e.Regarding.APIVersion); err == nil && gv.Group != ref.Group {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// Delete deletes ref on the cluster dest names, with propagation policy
// (background when empty).
func (r *Resources) Delete(ctx context.Context, dest v1alpha1.ApplicationDestination, ref ResourceRef, policy metav1.DeletionPropagation) error {
	ri, err := r.resource(ctx, dest, ref)
	if err != nil {
		return err
	}
	if policy == "" {
		policy = metav1.DeletePropagationBackground
	}
	if err := ri.Delete(ctx, ref.Name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
		return err
	}
	audit.Change(ctx, auditStub(ref), nil)
	return nil
}

// auditStub names ref for the audit trail of a delete.
func auditStub(ref ResourceRef) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: ref.Group, Kind: ref.Kind})
	u.SetNamespace(ref.Namespace)
	u.SetName(ref.Name)
	return u
}

// Patch patches ref on the cluster dest names; with subresources, that
// subresource of it ("status").
func (r *Resources) Patch(ctx context.Context, dest v1alpha1.ApplicationDestination, ref ResourceRef, pt types.PatchType, patch []byte, subresources ...string) error {
	ri, err := r.resource(ctx, dest, ref)
	if err != nil {
		return err
	}
	// The object before, for the audit trail's patch, read only when
	// the mutation is recorded: when it cannot be read, the patch is
	// recorded from nothing.
	var before *unstructured.Unstructured
	if audit.Recording(ctx) {
		before, _ = ri.Get(ctx, ref.Name, metav1.GetOptions{})
	}
	after, err := ri.Patch(ctx, ref.Name, pt, patch, metav1.PatchOptions{FieldManager: "graphcd-api"}, subresources...)
	if err != nil {
		return err
	}
	audit.Change(ctx, before, after)
	return nil
}

// Create creates obj on the cluster dest names (a resource action's new
// object: a Job from a CronJob, say).
func (r *Resources) Create(ctx context.Context, dest v1alpha1.ApplicationDestination, obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	ri, err := r.versionResource(ctx, dest, ResourceRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}, gvk.Version)
	if err != nil {
		return err
	}
	created, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: "graphcd-api"})
	if err != nil {
		return err
	}
	audit.Change(ctx, nil, created)
	return nil
}

// ClusterScoped returns whether a group/kind is cluster-scoped on the
// cluster dest names, by its discovery; a kind the cluster does not serve
// reads as namespaced (creating one then fails on the kind).
func (r *Resources) ClusterScoped(dest v1alpha1.ApplicationDestination) (func(group, kind string) bool, error) {
	conn, err := r.connTo(dest)
	if err != nil {
		return nil, err
	}
	return func(group, kind string) bool {
		m, err := conn.mapper.RESTMapping(schema.GroupKind{Group: group, Kind: kind})
		return err == nil && m.Scope.Name() != "namespace"
	}, nil
}

// resource returns the dynamic client of ref's kind, at its preferred
// version, on the cluster dest names.
func (r *Resources) resource(ctx context.Context, dest v1alpha1.ApplicationDestination, ref ResourceRef) (dynamic.ResourceInterface, error) {
	return r.versionResource(ctx, dest, ref, "")
}

// versionResource is resource at version ("": the preferred one).
func (r *Resources) versionResource(_ context.Context, dest v1alpha1.ApplicationDestination, ref ResourceRef, version string) (dynamic.ResourceInterface, error) {
	conn, err := r.connTo(dest)
	if err != nil {
		return nil, err
	}
	var versions []string
	if version != "" {
		versions = []string{version}
	}
	gk := schema.GroupKind{Group: ref.Group, Kind: ref.Kind}
	m, err := conn.mapper.RESTMapping(gk, versions...)
	if err != nil {
		conn.mapper.Reset() // a kind installed since the last discovery
		if m, err = conn.mapper.RESTMapping(gk, versions...); err != nil {
			return nil, fmt.Errorf("kind %s.%s: %w", ref.Kind, ref.Group, err)
		}
	}
	if m.Scope.Name() == "namespace" {
		return conn.dyn.Resource(m.Resource).Namespace(ref.Namespace), nil
	}
	return conn.dyn.Resource(m.Resource), nil
}

// connTo returns the clients of the cluster dest names.
func (r *Resources) connTo(dest v1alpha1.ApplicationDestination) (*clusterConn, error) {
	c, err := r.clusters.reg.Resolve(dest)
	if err != nil {
		return nil, err
	}
	return r.conn(c.RESTConfig)
}

func (r *Resources) conn(cfg *rest.Config) (*clusterConn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.conns[cfg]; ok {
		return c, nil
	}
	if len(r.conns) >= maxClusterClients {
		clear(r.conns) // configurations of clusters since changed
	}
	own := rest.CopyConfig(cfg)
	dyn, err := dynamic.NewForConfig(own)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(own)
	if err != nil {
		return nil, err
	}
	c := &clusterConn{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}
	r.conns[cfg] = c
	return c, nil
}
