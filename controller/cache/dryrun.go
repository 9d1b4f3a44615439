package cache

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// DryRunApply sends obj to the cluster as a server-side apply in dry-run
// mode, with fieldManager owning the fields it sets (conflicts forced),
// and returns the object the API server would store: defaults filled in,
// admission applied, fields the manager no longer sets removed. Nothing is
// persisted. It is the predicted live state of server-side diff.
func (c *Cluster) DryRunApply(ctx context.Context, obj *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error) {
	return c.DryRunApplyAs(ctx, c.dyn, obj, fieldManager)
}

// DryRunApplyAs is DryRunApply sent through client, such as one that
// impersonates the app's service account; the kind is looked up in the
// cache's discovery as for DryRunApply.
func (c *Cluster) DryRunApplyAs(ctx context.Context, client dynamic.Interface, obj *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error) {
	gk := obj.GroupVersionKind().GroupKind()
	res, err := c.resourceFor(gk)
	if err != nil {
		return nil, err
	}
	ns := obj.GetNamespace()
	if !res.namespaced {
		ns = ""
	}
	out, err := client.Resource(res.gvr).Namespace(ns).Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{
		FieldManager: fieldManager, Force: true, DryRun: []string{metav1.DryRunAll},
	})
	if err != nil {
		return nil, fmt.Errorf("server-side apply dry run of %s: %w", ResourceKey{Group: gk.Group, Kind: gk.Kind, Namespace: ns, Name: obj.GetName()}, err)
	}
	return out, nil
}
