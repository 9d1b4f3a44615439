package resolvers

import (
	"context"
	"encoding/json"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/appstate"
	"github.com/graphcd/graphcd/internal/catalog"
	"github.com/graphcd/graphcd/internal/gqlmodel"
)

// ResourceWriter deletes and patches live objects of applications
// (catalog.Resources implements it).
type ResourceWriter interface {
	Delete(ctx context.Context, dest v1alpha1.ApplicationDestination, ref catalog.ResourceRef, policy metav1.DeletionPropagation) error
	Patch(ctx context.Context, dest v1alpha1.ApplicationDestination, ref catalog.ResourceRef, pt types.PatchType, patch []byte) error
}

// maxPatchBytes bounds a resource patch.
const maxPatchBytes = 256 << 10

// appResource checks that in names an object of its application and that
// the caller may do verb (delete or update) to it, as Argo CD's
// fine-grained "delete/<group>/<kind>/<namespace>/<name>" rights say.
func (r *Resolver) appResource(ctx context.Context, in model.ApplicationResourceInput, verb string) (*v1alpha1.Application, catalog.ResourceRef, error) {
	ref := catalog.ResourceRef{Group: in.Group, Kind: in.Kind, Namespace: in.Namespace, Name: in.Name}
	key := r.refKey(*in.Application)
	action := rbac.SubresourceAction(verb, in.Group, in.Kind, in.Namespace, in.Name)
	app, err := r.appFor(ctx, rbac.ResourceApplications, action, key)
	if err != nil {
		return nil, ref, err
	}
	if r.Resources == nil {
		return nil, ref, Errorf(CodeForbidden, "this server is read-only")
	}
	st, err := r.appState(ctx, &gqlmodel.Application{Application: app})
	if err != nil {
		return nil, ref, err
	}
	if st == nil || !ownsResource(st, ref) {
		return nil, ref, Errorf(CodeNotFound, "%s %s/%s is not a resource of application %s", in.Kind, in.Namespace, in.Name, key)
	}
	return app, ref, nil
}

// ownsResource reports whether ref is in st's managed resources or tree.
func ownsResource(st *appstate.State, ref catalog.ResourceRef) bool {
	same := func(g, k, ns, n string) bool {
		return g == ref.Group && k == ref.Kind && ns == ref.Namespace && n == ref.Name
	}
	return slices.ContainsFunc(st.Managed, func(m appstate.ManagedResource) bool { return same(m.Group, m.Kind, m.Namespace, m.Name) }) ||
		slices.ContainsFunc(st.Tree, func(n appstate.Node) bool { return same(n.Group, n.Kind, n.Namespace, n.Name) })
}

func (r *Resolver) deleteAppResource(ctx context.Context, in model.ApplicationResourceInput, policy model.PropagationPolicy) (bool, error) {
	app, ref, err := r.appResource(ctx, in, "delete")
	if err != nil {
		return false, err
	}
	if err := r.Resources.Delete(ctx, app.Spec.Destination, ref, propagation(policy)); err != nil {
		return false, resourceError(err, ref)
	}
	return true, nil
}

func (r *Resolver) patchAppResource(ctx context.Context, in model.ApplicationResourceInput, patch string, pt model.PatchType) (bool, error) {
	if len(patch) > maxPatchBytes || !json.Valid([]byte(patch)) {
		return false, Errorf(CodeBadUserInput, "patch must be JSON of at most %d bytes", maxPatchBytes)
	}
	app, ref, err := r.appResource(ctx, in, "update")
	if err != nil {
		return false, err
	}
	kinds := map[model.PatchType]types.PatchType{
		model.PatchTypeMerge: types.MergePatchType, model.PatchTypeJSON: types.JSONPatchType, model.PatchTypeStrategic: types.StrategicMergePatchType,
	}
	if err := r.Resources.Patch(ctx, app.Spec.Destination, ref, kinds[pt], []byte(patch)); err != nil {
		return false, resourceError(err, ref)
	}
	return true, nil
}

// resourceError maps the destination cluster's answer to a coded error.
func resourceError(err error, ref catalog.ResourceRef) error {
	switch {
	case apierrors.IsNotFound(err):
		return Errorf(CodeNotFound, "%s %s/%s not found", ref.Kind, ref.Namespace, ref.Name)
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsUnsupportedMediaType(err):
		return &Error{Code: CodeBadUserInput, Message: statusMessage(err), Err: err}
	case apierrors.IsConflict(err):
		return Errorf(CodeConflict, "%s %s/%s changed meanwhile; try again", ref.Kind, ref.Namespace, ref.Name)
	}
	return err
}
