package resolvers

import (
	"context"
	"encoding/json"
	"slices"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/catalog"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/controller/diff"
	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/appstate"
)

// ResourceWriter reads, deletes, patches and creates live objects of
// applications
// (catalog.Resources implements it).
type ResourceWriter interface {
	Get(ctx context.Context, dest v1alpha1.ApplicationDestination, ref catalog.ResourceRef) (*unstructured.Unstructured, error)
	Events(ctx context.Context, dest v1alpha1.ApplicationDestination, ref catalog.ResourceRef) ([]eventsv1.Event, error)
	Delete(ctx context.Context, dest v1alpha1.ApplicationDestination, ref catalog.ResourceRef, policy metav1.DeletionPropagation) error
	Patch(ctx context.Context, dest v1alpha1.ApplicationDestination, ref catalog.ResourceRef, pt types.PatchType, patch []byte, subresources ...string) error
	// Create creates an object a resource action returns.
	Create(ctx context.Context, dest v1alpha1.ApplicationDestination, obj *unstructured.Unstructured) error
	// ClusterScoped tells the kinds of dest's cluster that are
	// cluster-scoped.
	ClusterScoped(dest v1alpha1.ApplicationDestination) (func(group, kind string) bool, error)
}

// maxPatchBytes bounds a resource patch.
const maxPatchBytes = 256 << 10

// appResource checks that in names an object of its application and that
// the caller may do verb (delete or update) to it, as Argo CD's
// fine-grained "delete/<group>/<kind>/<namespace>/<name>" rights say.
func (r *Resolver) appResource(ctx context.Context, in model.ApplicationResourceInput, verb string) (*v1alpha1.Application, catalog.ResourceRef, error) {
	return r.appResourceFor(ctx, in, rbac.SubresourceAction(verb, in.Group, in.Kind, in.Namespace, in.Name))
}

// appResourceFor is appResource for the RBAC action of applications
// given whole ("action/<group>/<kind>/<name>" for a resource action).
func (r *Resolver) appResourceFor(ctx context.Context, in model.ApplicationResourceInput, action string) (*v1alpha1.Application, catalog.ResourceRef, error) {
	ref := catalog.ResourceRef{Group: in.Group, Kind: in.Kind, Namespace: in.Namespace, Name: in.Name}
	key := r.refKey(*in.Application)
	app, err := r.appFor(ctx, rbac.ResourceApplications, action, key)
	if err != nil {
		return nil, ref, err
	}
	if r.Resources == nil {
		return nil, ref, Errorf(CodeForbidden, "this server is read-only")
	}
	st, err := r.appState(ctx, &model.Application{Application: app})
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

// liveResource reads one live object of app (which the caller may see)
// from its destination: only one in its managed resources or tree.
func (r *Resolver) liveResource(ctx context.Context, app *model.Application, group, kind, namespace, name string) (*model.LiveResource, error) {
	ref := catalog.ResourceRef{Group: group, Kind: kind, Namespace: namespace, Name: name}
	if r.Resources == nil {
		return nil, Errorf(CodeForbidden, "this server does not read live objects")
	}
	st, err := r.appState(ctx, app)
	if err != nil {
		return nil, err
	}
	if st == nil || !ownsResource(st, ref) {
		return nil, Errorf(CodeNotFound, "%s %s/%s is not a resource of application %s", kind, namespace, name, app.Name)
	}
	obj, err := r.Resources.Get(ctx, app.Spec.Destination, ref)
	if err != nil {
		return nil, resourceError(err, ref)
	}
	_, obj = diff.HideSecretData(nil, obj)
	out := &model.LiveResource{
		Manifest: diff.ManifestYAML(obj), Destination: app.Spec.Destination,
		Group: group, Kind: kind, Namespace: namespace, Name: name, App: app.Application,
	}
	if obj != nil {
		out.Object = obj.Object
	}
	return out, nil
}

// liveResourceEvents lists the Events about res in its cluster, newest
// first.
func (r *Resolver) liveResourceEvents(ctx context.Context, res *model.LiveResource, first int32) ([]*model.KubeEvent, error) {
	if first < 0 || first > maxListPage {
		return nil, Errorf(CodeBadUserInput, "first must be between 0 and %d, got %d", maxListPage, first)
	}
	if first == 0 {
		return nil, nil
	}
	ref := catalog.ResourceRef{Group: res.Group, Kind: res.Kind, Namespace: res.Namespace, Name: res.Name}
	list, err := r.Resources.Events(ctx, res.Destination, ref)
	if err != nil {
		return nil, resourceError(err, ref)
	}
	events := model.KubeEvents(list)
	events = events[:min(len(events), int(first))]
	out := make([]*model.KubeEvent, len(events))
	for i := range events {
		out[i] = &events[i]
	}
	return out, nil
}
