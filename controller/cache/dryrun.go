package cache

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DryRunApply sends obj to the cluster as a server-side apply in dry-run
// mode, with fieldManager owning the fields it sets (conflicts forced),
// and returns the object the API server would store: defaults filled in,
// admission applied, fields the manager no longer sets removed. Nothing is
// persisted. It is the predicted live state of server-side diff.
func (c *Cluster) DryRunApply(ctx context.Context, obj *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error) {
	gk := obj.GroupVersionKind().GroupKind()
	res, err := c.resourceFor(gk)
	if err != nil {
		return nil, err
	}
	ns := obj.GetNamespace()
	if !res.namespaced {
		ns = ""
	}
	out, err := c.dyn.Resource(res.gvr).Namespace(ns).Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{
		FieldManager: fieldManager, Force: true, DryRun: []string{metav1.DryRunAll},
	})
	if err != nil {
		return nil, fmt.Errorf("server-side apply dry run of %s: %w", ResourceKey{Group: gk.Group, Kind: gk.Kind, Namespace: ns, Name: obj.GetName()}, err)
	}
	return out, nil
}
