package resolvers

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appops"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/graph/model"
)

// patchTypes are the patch types an Application takes.
var patchTypes = map[model.PatchType]appops.PatchType{model.PatchTypeMerge: appops.MergePatch, model.PatchTypeJSON: appops.JSONPatch}

// patchApplication applies a merge or JSON patch to an application's
// labels, annotations and spec.
func (r *Resolver) patchApplication(ctx context.Context, in model.PatchApplicationInput) (*model.Application, error) {
	key := r.refKey(*in.Application)
	t, known := patchTypes[in.PatchType]
	patch, err := appops.NewPatch(t, in.Patch) // the size first, whatever the type
	switch {
	case err != nil:
		return nil, invalidInput(err)
	case !known:
		return nil, Errorf(CodeBadUserInput, "patchType: %s does not apply to Applications; use MERGE or JSON", in.PatchType)
	}
	return r.changeApplication(ctx, key, func(cur *v1alpha1.Application) error {
		next, err := patch.Apply(cur)
		if err != nil {
			return invalidInput(err)
		}
		if err := r.respec(ctx, cur, next.Spec); err != nil {
			return err
		}
		cur.Labels, cur.Annotations = next.Labels, next.Annotations
		return nil
	})
}

// updateApplicationSpec replaces an application's spec.
func (r *Resolver) updateApplicationSpec(ctx context.Context, in model.UpdateApplicationSpecInput) (*model.Application, error) {
	key := r.refKey(*in.Application)
	spec, err := appops.DecodeSpec(in.Spec)
	if err != nil {
		return nil, invalidInput(err)
	}
	return r.changeApplication(ctx, key, func(cur *v1alpha1.Application) error {
		return r.respec(ctx, cur, spec)
	})
}

// changeApplication authorizes updating the app at key and writes what
// change makes of it; a *Error from change reaches the client as it is.
func (r *Resolver) changeApplication(ctx context.Context, key types.NamespacedName, change func(*v1alpha1.Application) error) (*model.Application, error) {
	if err := r.authorizeApp(ctx, rbac.ActionUpdate, key); err != nil {
		return nil, err
	}
	w, err := r.writer()
	if err != nil {
		return nil, err
	}
	out, err := w.Update(ctx, key, func(cur *v1alpha1.Application) error {
		// The index the check above read may lag: judge the app as
		// written, whose project may have changed meanwhile.
		if err := r.authorize(ctx, rbac.ResourceApplications, rbac.ActionUpdate, appTarget(cur)); err != nil {
			return err
		}
		return change(cur)
	})
	if safe, ok := errors.AsType[*Error](err); ok {
		return nil, safe
	}
	return r.written(ctx, out, err, key)
}

// respec gives app spec once the caller may move it to spec's project
// and that project permits spec. A spec left as it is is not checked
// again: a label patch of an app its project has since narrowed is not
// the write to refuse (the controller reports the spec as invalid).
func (r *Resolver) respec(ctx context.Context, app *v1alpha1.Application, spec v1alpha1.ApplicationSpec) error {
	if err := r.authorizeMove(ctx, app, spec.Project); err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(app.Spec, spec) {
		return nil
	}
	next := app.DeepCopy()
	next.Spec = spec
	if err := r.specAllowed(ctx, next); err != nil {
		return err
	}
	app.Spec = spec
	return nil
}

// authorizeMove checks, when a change moves app to another project, that
// the caller may update it there too (as Argo CD does).
func (r *Resolver) authorizeMove(ctx context.Context, app *v1alpha1.Application, project string) error {
	if project == "" {
		project = "default"
	}
	if project == app.ProjectName() {
		return nil
	}
	moved := app.DeepCopy()
	moved.Spec.Project = project
	return r.authorize(ctx, rbac.ResourceApplications, rbac.ActionUpdate, appTarget(moved))
}
