package controller

import (
	"context"
	"sort"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/cache"
	"github.com/graphcd/graphcd/controller/diff"
	"github.com/graphcd/graphcd/controller/health"
	"github.com/graphcd/graphcd/internal/appstate"
)

// treeSource is what the state writer needs of a cluster cache beyond
// LiveState: the owner-reference index and the served versions.
// cache.Cluster implements it; a LiveState that does not gets a tree of
// the app's own objects only.
type treeSource interface {
	Tree(app string) []cache.Node
	ResourceFor(gk schema.GroupKind) (schema.GroupVersionResource, error)
}

// detailedKinds are the descendants whose full object is read (from the
// cache, which fetches it once per resourceVersion) for health and info.
// Others (EndpointSlices, ControllerRevisions ...) are shown from the
// metadata index alone.
var detailedKinds = map[schema.GroupKind]bool{
	{Kind: "Pod"}:                       true,
	{Group: "apps", Kind: "ReplicaSet"}: true,
	{Group: "batch", Kind: "Job"}:       true,
}

// stateInput is what a comparison leaves for the application state.
type stateInput struct {
	app      types.NamespacedName
	cmp      *Comparison
	desired  []*unstructured.Unstructured
	live     map[ResourceKey]*unstructured.Unstructured // tracked objects, hooks included
	tree     []cache.Node
	children map[ResourceKey]*unstructured.Unstructured // detailed descendants
	versions func(gk schema.GroupKind) string
	health   *health.Engine
	now      time.Time
}

// writeAppState builds the state of app from its comparison and hands it
// to the state writer, which skips it when nothing changed. Failures are
// logged, never returned: the store is a cache for the API, and a
// reconcile must not fail because Redis is away.
func (r *Reconciler) writeAppState(ctx context.Context, app *v1alpha1.Application, lv LiveState, cmp *Comparison, desired []*unstructured.Unstructured, live map[ResourceKey]*unstructured.Unstructured) {
	if r.states == nil {
		return
	}
	in := stateInput{
		app: types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, cmp: cmp, desired: desired, live: live,
		health: r.engines.Load().health, now: time.Now(), versions: func(schema.GroupKind) string { return "" },
	}
	if ts, ok := lv.(treeSource); ok {
		in.tree = ts.Tree(r.instance(app))
		in.versions = func(gk schema.GroupKind) string {
			gvr, err := ts.ResourceFor(gk)
			if err != nil {
				return ""
			}
			return gvr.Version
		}
		in.children = detailedChildren(ctx, lv, in.tree, live)
	}
	if _, err := r.states.Write(ctx, buildState(ctx, in)); err != nil && ctx.Err() == nil {
		r.log.Warn("write application state", "app", in.app.String(), "err", err)
	}
}

// forgetAppState deletes the state of an app that no longer exists.
func (r *Reconciler) forgetAppState(ctx context.Context, app types.NamespacedName) {
	if r.states == nil {
		return
	}
	if err := r.states.Delete(ctx, app); err != nil && ctx.Err() == nil {
		r.log.Warn("delete application state", "app", app.String(), "err", err)
	}
}

// detailedChildren reads the full objects of the tree's detailed
// descendants. The cache keeps them per resourceVersion, so a steady tree
// costs no API call; one that vanished meanwhile is left out.
func detailedChildren(ctx context.Context, lv LiveState, tree []cache.Node, live map[ResourceKey]*unstructured.Unstructured) map[ResourceKey]*unstructured.Unstructured {
	out := map[ResourceKey]*unstructured.Unstructured{}
	for _, n := range tree {
		if _, own := live[n.ResourceKey]; own || !detailedKinds[n.GroupKind()] {
			continue
		}
		obj, err := lv.Get(ctx, n.ResourceKey)
		if err != nil {
			// Gone meanwhile, or unreadable: shown without details; the
			// next reconcile tries again.
			continue
		}
		out[n.ResourceKey] = obj
	}
	return out
}

// buildState turns a comparison into an application state.
func buildState(ctx context.Context, in stateInput) appstate.State {
	st := appstate.State{App: in.app, Revision: in.cmp.Revision, ReconciledAt: in.now}
	results := make(map[ResourceKey]*ResourceResult, len(in.cmp.Resources))
	for i := range in.cmp.Resources {
		results[in.cmp.Resources[i].Key] = &in.cmp.Resources[i]
	}
	st.Tree = buildTree(ctx, in, results)
	st.Managed = buildManaged(in)
	st.OrphansCount = len(in.cmp.Orphans)
	for _, k := range in.cmp.Orphans[:min(len(in.cmp.Orphans), appstate.MaxOrphans)] {
		st.Orphans = append(st.Orphans, appstate.Ref{Group: k.Group, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name})
	}
	return st
}

// buildTree maps the cache's tree to nodes: the app's own objects carry
// their sync status and health from the comparison; detailed descendants
// their own health, images and info. The desired objects the cluster
// lacks follow as missing nodes.
func buildTree(ctx context.Context, in stateInput, results map[ResourceKey]*ResourceResult) []appstate.Node {
	tree := in.tree
	if tree == nil {
		// No owner index: the app's own live objects, sorted.
		for key, obj := range in.live {
			tree = append(tree, cache.Node{ResourceKey: key, UID: string(obj.GetUID()), CreationTimestamp: obj.GetCreationTimestamp().Time})
		}
		sort.Slice(tree, func(i, j int) bool { return tree[i].String() < tree[j].String() })
	}
	byUID := make(map[string]ResourceKey, len(tree))
	for _, n := range tree {
		byUID[n.UID] = n.ResourceKey
	}
	nodes := make([]appstate.Node, 0, len(tree))
	for _, n := range tree {
		created := n.CreationTimestamp.UTC()
		node := appstate.Node{
			Group: n.Group, Kind: n.Kind, Namespace: n.Namespace, Name: n.Name, UID: n.UID,
			CreatedAt: &created,
		}
		for _, p := range n.ParentUIDs {
			if k, ok := byUID[p]; ok {
				node.ParentRefs = append(node.ParentRefs, appstate.Ref{Group: k.Group, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name, UID: p})
			}
		}
		obj, own := in.live[n.ResourceKey]
		if own {
			if res := results[n.ResourceKey]; res != nil {
				node.Sync = res.Status
				node.Health = healthStatus(res.Health)
			}
		} else if obj = in.children[n.ResourceKey]; obj != nil {
			if h, err := in.health.Check(ctx, obj); err == nil {
				node.Health = healthStatus(h)
			}
		}
		if obj != nil {
			node.Version = obj.GroupVersionKind().Version
			node.ResourceVersion = obj.GetResourceVersion()
			node.Images = imagesOf(obj)
			node.Info = infoOf(obj)
		} else {
			node.Version = in.versions(n.GroupKind())
		}
		nodes = append(nodes, node)
	}
	return appendMissing(nodes, in, tree)
}

// appendMissing adds a node for each resource Git declares that the
// comparison found no live object for, in the comparison's order (sorted
// by key), unless the tree holds it after all. Argo CD's tree API leaves
// them out and its UI merges them back from status.resources; here every
// client gets them with the tree, from the comparison already made.
func appendMissing(nodes []appstate.Node, in stateInput, tree []cache.Node) []appstate.Node {
	var inTree map[ResourceKey]bool
	for _, res := range in.cmp.Resources {
		if res.RequiresPruning || in.live[res.Key] != nil {
			continue
		}
		if inTree == nil {
			inTree = make(map[ResourceKey]bool, len(tree))
			for _, n := range tree {
				inTree[n.ResourceKey] = true
			}
		}
		if inTree[res.Key] {
			continue
		}
		nodes = append(nodes, appstate.Node{
			Group: res.Key.Group, Version: res.Version, Kind: res.Key.Kind, Namespace: res.Key.Namespace, Name: res.Key.Name,
			Sync: res.Status, Health: healthStatus(res.Health), Missing: true,
		})
	}
	return nodes
}

// buildManaged lists the comparison's resources with their masked YAML,
// then the live hooks the comparison leaves out.
func buildManaged(in stateInput) []appstate.ManagedResource {
	desired := make(map[ResourceKey]*unstructured.Unstructured, len(in.desired))
	for _, d := range in.desired {
		if k := KeyOf(d); desired[k] == nil {
			desired[k] = d
		}
	}
	out := make([]appstate.ManagedResource, 0, len(in.cmp.Resources))
	for _, res := range in.cmp.Resources {
		d, l := desired[res.Key], in.live[res.Key]
		liveYAML, desiredYAML := maskedYAML(d, l)
		out = append(out, appstate.ManagedResource{
			Group: res.Key.Group, Version: res.Version, Kind: res.Key.Kind, Namespace: res.Key.Namespace, Name: res.Key.Name,
			Status: res.Status, Health: healthStatus(res.Health), RequiresPruning: res.RequiresPruning,
			Live: liveYAML, Desired: desiredYAML, Diff: res.Diff,
		})
	}
	var hooks []ResourceKey
	for key, obj := range in.live {
		if isHook(obj) {
			hooks = append(hooks, key)
		}
	}
	sort.Slice(hooks, func(i, j int) bool { return hooks[i].String() < hooks[j].String() })
	for _, key := range hooks {
		obj := in.live[key]
		liveYAML, _ := maskedYAML(nil, obj)
		out = append(out, appstate.ManagedResource{
			Group: key.Group, Version: obj.GroupVersionKind().Version, Kind: key.Kind, Namespace: key.Namespace, Name: key.Name,
			Hook: true, Live: liveYAML,
		})
	}
	return out
}

// maskedYAML renders desired and live (either may be nil) as YAML, Secret
// values masked as the diff engine masks them and managed fields left out.
func maskedYAML(desired, live *unstructured.Unstructured) (liveYAML, desiredYAML string) {
	desired, live = diff.HideSecretData(desired, live)
	return diff.ManifestYAML(live), diff.ManifestYAML(desired)
}

func healthStatus(h *health.Result) *v1alpha1.HealthStatus {
	if h == nil {
		return nil
	}
	return &v1alpha1.HealthStatus{Status: h.Status, Message: h.Message}
}

// imagesOf lists the images obj runs or templates, sorted.
func imagesOf(obj *unstructured.Unstructured) []string {
	set := map[string]bool{}
	collectImages(obj, set)
	if len(set) == 0 {
		return nil
	}
	out := make([]string, 0, len(set))
	for im := range set {
		out = append(out, im)
	}
	sort.Strings(out)
	return out
}

// infoOf gives the facts shown beside a node, as Argo CD's tree does:
// a Pod's status reason, node, readiness and restarts; a ReplicaSet's
// revision.
func infoOf(obj *unstructured.Unstructured) []appstate.Info {
	gvk := obj.GroupVersionKind()
	switch {
	case gvk.Group == "" && gvk.Kind == "Pod":
		return podInfo(obj)
	case gvk.Group == "apps" && gvk.Kind == "ReplicaSet":
		if rev := obj.GetAnnotations()["deployment.kubernetes.io/revision"]; rev != "" {
			return []appstate.Info{{Name: "Revision", Value: "Rev:" + rev}}
		}
	}
	return nil
}

func podInfo(obj *unstructured.Unstructured) []appstate.Info {
	phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
	reason, _, _ := unstructured.NestedString(obj.Object, "status", "reason")
	if reason == "" {
		reason = phase
	}
	specs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "containers")
	statuses, _, _ := unstructured.NestedSlice(obj.Object, "status", "containerStatuses")
	var ready, restarts int64
	for _, s := range statuses {
		cs, _ := s.(map[string]any)
		if b, _ := cs["ready"].(bool); b {
			ready++
		}
		switch n := cs["restartCount"].(type) { // int64 from the API, float64 from YAML
		case int64:
			restarts += n
		case float64:
			restarts += int64(n)
		}
		for _, state := range []string{"waiting", "terminated"} {
			if r, _, _ := unstructured.NestedString(cs, "state", state, "reason"); r != "" && (state != "terminated" || r != "Completed") {
				reason = r
			}
		}
	}
	if obj.GetDeletionTimestamp() != nil {
		reason = "Terminating"
	}
	info := []appstate.Info{{Name: "Status Reason", Value: reason}}
	if node, _, _ := unstructured.NestedString(obj.Object, "spec", "nodeName"); node != "" {
		info = append(info, appstate.Info{Name: "Node", Value: node})
	}
	info = append(info,
		appstate.Info{Name: "Containers", Value: strconv.FormatInt(ready, 10) + "/" + strconv.Itoa(len(specs))},
		appstate.Info{Name: "Restart Count", Value: strconv.FormatInt(restarts, 10)},
	)
	return info
}
