package controller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver"
)

// A sync may carry its manifests (sync.manifests, Argo CD's app sync
// --local): they stand for the rendered source of that sync only. They
// are placed as rendered manifests are (destination namespace, tracking,
// exclusions, the scope check), and the plan built from them meets every
// project rule a rendered plan meets. The comparison keeps rendering Git.

// localSync reports whether the sync in st deploys local manifests.
func localSync(st *v1alpha1.OperationState) bool {
	return st != nil && st.Operation.Sync != nil && len(st.Operation.Sync.Manifests) > 0
}

// placeLocal turns a sync's local manifests into the app's desired
// objects, with one empty revision per source of set.
func (r *Reconciler) placeLocal(app *v1alpha1.Application, lv LiveState, manifests []string, set sourceSet) (*rendered, error) {
	objs := make([]*unstructured.Unstructured, 0, len(manifests))
	for i, m := range manifests {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(m), &obj); err != nil {
			return nil, fmt.Errorf("sync.manifests[%d]: %w", i, err)
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			return nil, fmt.Errorf("sync.manifests[%d]: want an object with apiVersion and kind", i)
		}
		objs = append(objs, u)
	}
	out, err := r.place(app, lv, &reposerver.ManifestResponse{Manifests: objs})
	if err != nil {
		return nil, err
	}
	out.desired, out.repeated = lastWins(out.desired)
	out.revisions = make([]string, len(set.list))
	return out, nil
}
