package resolvers

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/appstate"
	"github.com/graphcd/graphcd/internal/eventbus"
)

// StateReader reads what the controller last saw of applications: resource
// trees and managed resources (an appstate.Store).
type StateReader interface {
	GetMany(ctx context.Context, apps []types.NamespacedName) ([]*appstate.State, error)
}

// appState returns the controller's last state of app, through the
// response's loader (one read for a whole page); nil when there is none.
func (r *Resolver) appState(ctx context.Context, app *model.Application) (*appstate.State, error) {
	if r.States == nil {
		return nil, nil
	}
	return r.loadersOf(ctx, app).appStates().Load(ctx, keyOf(app.Application))
}

// managedResources returns the managed resources of app that f selects.
func (r *Resolver) managedResources(ctx context.Context, app *model.Application, f *model.ManagedResourceFilter) ([]*model.ManagedResource, error) {
	st, err := r.appState(ctx, app)
	if err != nil || st == nil {
		return nil, err
	}
	return managedResources(st, func(m *appstate.ManagedResource) bool {
		return f == nil || matches(f.Group, m.Group) && matches(f.Kind, m.Kind) && matches(f.Namespace, m.Namespace) &&
			matches(f.Name, m.Name) && (f.OutOfSyncOnly == nil || !*f.OutOfSyncOnly || m.Status != v1alpha1.SyncStatusCodeSynced)
	}), nil
}

// matches reports whether an optional filter value accepts v.
func matches(want *string, v string) bool { return want == nil || *want == v }

// streamTree sends the resource tree of the app at key now and whenever
// the app changes or the controller compares it again, until ctx ends; an
// unchanged tree is not sent again.
func (r *Resolver) streamTree(ctx context.Context, key types.NamespacedName, release func()) <-chan *model.ResourceTree {
	changes := r.apps().Changes(ctx, key)
	var compared <-chan *eventbus.Delivery
	if r.Events != nil {
		compared = r.Events.Subscribe(ctx, eventbus.Filter{
			Apps: []types.NamespacedName{key}, Types: []eventbus.EventType{eventbus.ReconcileCompleted, eventbus.ResourceChanged},
		}, eventbus.Options{Buffer: 1}).Deliveries()
	}
	out := make(chan *model.ResourceTree)
	go func() {
		defer close(out)
		defer release()
		var last *appstate.State
		first := true
		for {
			policy := r.policyChanged()
			if r.lostApp(ctx, key) {
				return
			}
			var st *appstate.State
			if r.States != nil {
				states, err := r.States.GetMany(ctx, []types.NamespacedName{key})
				if err == nil {
					st = states[0]
				}
			}
			if first || !sameTree(last, st) {
				select {
				case out <- resourceTree(st):
				case <-ctx.Done():
					return
				}
				last, first = st, false
			}
			select {
			case <-changes:
			case <-compared:
			case <-policy:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// sameTree reports whether two states hold the same tree (the controller
// writes a new ReconciledAt only with a changed state).
func sameTree(a, b *appstate.State) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.ReconciledAt.Equal(b.ReconciledAt) && a.Revision == b.Revision && len(a.Tree) == len(b.Tree)
}
