package controller

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// RefreshPushed asks for apps to be compared again at once because their
// repository received a push: it forgets the revisions cached for the
// apps' repositories, once per repository, and puts the apps on the
// reconcile queue. Nothing is written to the Kubernetes API, unlike a
// refresh annotation, which costs a write and a patch per app and
// reaches every Application watcher.
//
// It serves only the apps this controller compares: it must lead its
// shard and have claimed the app before. It returns the others (a
// standby, another shard's apps, apps not reconciled yet), which the
// caller refreshes through the annotation.
func (c *Controller) RefreshPushed(ctx context.Context, apps []types.NamespacedName) (rest []types.NamespacedName, err error) {
	select {
	case <-c.mgr.Elected():
	default:
		return apps, nil // not leading (yet): the leader gets the annotation
	}
	return c.reconciler.refreshPushed(ctx, apps)
}

// Elected is closed once this controller leads its shard.
func (c *Controller) Elected() <-chan struct{} { return c.mgr.Elected() }

func (r *Reconciler) refreshPushed(ctx context.Context, apps []types.NamespacedName) (rest []types.NamespacedName, err error) {
	local, rest := r.memory.claimed(apps)

	if inv, ok := r.opts.Repo.(RevisionInvalidator); ok {
		seen := map[string]bool{}
		var app v1alpha1.Application
		for _, key := range local {
			if err := r.client.Get(ctx, key, &app); err != nil {
				continue // deleted since: its reconcile forgets it
			}
			set, err := specSources(&app)
			if err != nil {
				continue // its reconcile reports the spec
			}
			for _, src := range set.list {
				if !seen[src.RepoURL] {
					seen[src.RepoURL] = true
					inv.InvalidateRevision(src.RepoURL)
				}
			}
		}
	}
	for i, key := range local {
		if err := r.refreshWait(ctx, key); err != nil {
			return append(rest, local[i:]...), err
		}
	}
	return rest, nil
}
