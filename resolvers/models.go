package resolvers

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/appstate"
	"github.com/graphcd/graphcd/internal/eventbus"
)

// The one place where what the controller stores and publishes becomes
// the graph's types. Each mapping allocates a few slices for a whole
// answer, never one object per node, and copies no string.

// resourceTree maps a stored state's tree; nil for none.
func resourceTree(st *appstate.State) *model.ResourceTree {
	if st == nil {
		return nil
	}
	nodes := make([]model.ResourceNode, len(st.Tree))
	var nRefs, nInfo int
	for i := range st.Tree {
		nRefs, nInfo = nRefs+len(st.Tree[i].ParentRefs), nInfo+len(st.Tree[i].Info)
	}
	// One array of each for the whole tree, cut into the nodes' slices.
	refs, info := make([]model.ResourceRef, 0, nRefs), make([]model.ResourceInfo, 0, nInfo)
	for i := range st.Tree {
		n := &st.Tree[i]
		start := len(refs)
		for _, p := range n.ParentRefs {
			refs = append(refs, model.ResourceRef(p))
		}
		nodeRefs := refs[start:len(refs):len(refs)]
		start = len(info)
		for _, f := range n.Info {
			info = append(info, model.ResourceInfo(f))
		}
		nodes[i] = model.ResourceNode{
			Group: n.Group, Version: n.Version, Kind: n.Kind, Namespace: n.Namespace, Name: n.Name, UID: n.UID,
			ParentRefs: nodeRefs, Health: n.Health, Sync: syncOrNil(n.Sync), Info: info[start:len(info):len(info)],
			Images: n.Images, Missing: n.Missing, CreatedAt: n.CreatedAt, ResourceVersion: n.ResourceVersion,
		}
	}
	orphans := make([]model.ResourceRef, len(st.Orphans))
	for i, o := range st.Orphans {
		orphans[i] = model.ResourceRef(o)
	}
	return &model.ResourceTree{Nodes: nodes, Revision: st.Revision, ReconciledAt: st.ReconciledAt, Truncated: st.Truncated,
		OrphanedNodes: orphans, OrphanedCount: int32(st.OrphansCount)} //nolint:gosec // at most the objects of a namespace
}

// managedResources maps the managed resources of st that keep selects.
func managedResources(st *appstate.State, keep func(*appstate.ManagedResource) bool) []*model.ManagedResource {
	all := make([]model.ManagedResource, 0, len(st.Managed))
	out := make([]*model.ManagedResource, 0, len(st.Managed))
	for i := range st.Managed {
		m := &st.Managed[i]
		if !keep(m) {
			continue
		}
		all = append(all, model.ManagedResource{
			Group: m.Group, Version: m.Version, Kind: m.Kind, Namespace: m.Namespace, Name: m.Name,
			Status: resourceStatus(m.Status), Health: m.Health, Hook: m.Hook, RequiresPruning: m.RequiresPruning,
			Live: m.Live, Desired: m.Desired, Diff: m.Diff,
		})
		out = append(out, &all[len(all)-1])
	}
	return out
}

// syncOrNil returns s, or nil for an empty status (a child object).
func syncOrNil(s v1alpha1.SyncStatusCode) *v1alpha1.SyncStatusCode {
	if s == "" {
		return nil
	}
	return &s
}

// resourceStatus shows a resource not compared yet as Unknown.
func resourceStatus(s v1alpha1.SyncStatusCode) v1alpha1.SyncStatusCode {
	if s == "" {
		return v1alpha1.SyncStatusCodeUnknown
	}
	return s
}

// laggedEvent is the one lagged marker every subscriber gets.
var laggedEvent = &model.ApplicationEvent{Lagged: true}

// applicationEvent maps a delivery of the bus. Its fields point into the
// delivery's shared event: one allocation, no copies.
func applicationEvent(d *eventbus.Delivery) *model.ApplicationEvent {
	if d.Lagged || d.Event == nil {
		return laggedEvent
	}
	e := d.Event
	out := &struct {
		model.ApplicationEvent
		typ model.ApplicationEventType
	}{typ: model.ApplicationEventType(e.Type)}
	out.ApplicationEvent = model.ApplicationEvent{
		Type: &out.typ, Time: &e.Time, Name: &e.App.Name, Namespace: &e.App.Namespace,
		SyncStatus: &e.Sync, Health: &e.Health, Revision: &e.Revision, OperationPhase: &e.Phase, Message: &e.Message,
	}
	return &out.ApplicationEvent
}

// eventTypes maps the types of a subscription's filter to the bus's.
func eventTypes(ts []model.ApplicationEventType) []eventbus.EventType {
	if ts == nil {
		return nil
	}
	out := make([]eventbus.EventType, len(ts))
	for i, t := range ts {
		out[i] = eventbus.EventType(t)
	}
	return out
}

// eventKey returns the key of the app an event (not a lagged marker) is
// about.
func eventKey(e *model.ApplicationEvent) types.NamespacedName {
	return types.NamespacedName{Namespace: *e.Namespace, Name: *e.Name}
}
