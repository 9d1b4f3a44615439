package resolvers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/catalog"
	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/controller/actions"
	"github.com/graphcd/graphcd/controller/health"
	"github.com/graphcd/graphcd/graph/model"
)

// ActionSource gives the resource actions engine of graphcd-cm
// (catalog.Settings is one); err says why its custom actions are left
// out when they are.
type ActionSource interface {
	Actions() (*actions.Engine, error)
}

// AppEventRecorder records a Kubernetes Event about an application
// (catalog.Events is one).
type AppEventRecorder interface {
	Record(ctx context.Context, app *v1alpha1.Application, reason, note string) error
}

// ReasonResourceActionRan is the reason of the Event a resource action
// run leaves on its application, as Argo CD names it.
const ReasonResourceActionRan = "ResourceActionRan"

// Bounds on a run's parameters: actions declare few and short ones.
const (
	maxActionParams     = 32
	maxActionParamBytes = 4 << 10
)

// resourceActions lists the actions res offers. The object is the one
// liveResource read (Secret values masked), so discovery reads what the
// caller may read and nothing more.
func (r *Resolver) resourceActions(ctx context.Context, res *model.LiveResource) ([]*model.ResourceAction, error) {
	if r.Actions == nil || res.Object == nil {
		return []*model.ResourceAction{}, nil
	}
	engine, _ := r.Actions.Actions()
	found, err := engine.Discover(ctx, &unstructured.Unstructured{Object: res.Object})
	if err != nil {
		return nil, actionError(err)
	}
	out := make([]*model.ResourceAction, 0, len(found))
	for _, a := range found {
		params := make([]*model.ResourceActionParam, 0, len(a.Params))
		for _, p := range a.Params {
			typ := p.Type
			if typ == "" {
				typ = actions.ParamString
			}
			params = append(params, &model.ResourceActionParam{Name: p.Name, Type: typ, Default: p.Default})
		}
		out = append(out, &model.ResourceAction{Name: a.Name, Disabled: a.Disabled, DisplayName: a.DisplayName, IconClass: a.IconClass, Params: params})
	}
	return out, nil
}

// runResourceAction runs action on the live object in names, after the
// checks of appResource with the action's own RBAC right, and writes what
// the action returns: each object checked against the project first, so
// that nothing is written when any is refused.
func (r *Resolver) runResourceAction(ctx context.Context, in model.ApplicationResourceInput, action string, params []*model.ResourceActionParamInput) ([]*model.ResourceActionChange, error) {
	values, err := actionParams(params)
	if err != nil {
		return nil, err
	}
	if r.Actions == nil {
		return nil, Errorf(CodeForbidden, "this server runs no resource actions")
	}
	app, ref, err := r.appResourceFor(ctx, in, rbac.ResourceAction(in.Group, in.Kind, action))
	if err != nil {
		return nil, err
	}
	obj, err := r.Resources.Get(ctx, app.Spec.Destination, ref)
	if err != nil {
		return nil, resourceError(err, ref)
	}
	if obj == nil {
		return nil, Errorf(CodeNotFound, "%s %s/%s not found", ref.Kind, ref.Namespace, ref.Name)
	}
	scope, err := r.Resources.ClusterScoped(app.Spec.Destination)
	if err != nil {
		return nil, err
	}
	engine, _ := r.Actions.Actions()
	changes, err := engine.WithScope(scope).Run(ctx, obj, action, values)
	if err != nil {
		return nil, actionError(err)
	}
	if err := r.changesAllowed(ctx, app, changes); err != nil {
		return nil, err
	}
	out := make([]*model.ResourceActionChange, 0, len(changes))
	for _, c := range changes {
		gvk := c.Object.GroupVersionKind()
		done := &model.ResourceActionChange{Group: gvk.Group, Kind: gvk.Kind, Namespace: c.Object.GetNamespace(), Name: c.Object.GetName()}
		switch c.Operation {
		case actions.OperationPatch:
			done.Operation = model.ResourceActionOperationPatch
			err = r.patchWithStatus(ctx, app.Spec.Destination, ref, c.Patch)
		case actions.OperationCreate:
			done.Operation = model.ResourceActionOperationCreate
			err = r.Resources.Create(ctx, app.Spec.Destination, c.Object)
		}
		if err != nil {
			if len(out) > 0 {
				// What was written stays written: say so, as the Event
				// below does.
				r.recordAction(ctx, app, action, ref.Group, ref.Kind, ref.Namespace, ref.Name, out)
			}
			return nil, resourceError(err, refOf(done))
		}
		out = append(out, done)
	}
	r.recordAction(ctx, app, action, ref.Group, ref.Kind, ref.Namespace, ref.Name, out)
	return out, nil
}

// patchWithStatus applies an action's merge patch: what it changes in
// status goes to the status subresource (where the API server would
// otherwise drop it, for a Rollout's promote-full say), the rest to the
// object. A kind without a status subresource takes the whole patch.
func (r *Resolver) patchWithStatus(ctx context.Context, dest v1alpha1.ApplicationDestination, ref catalog.ResourceRef, patch []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(patch, &fields); err != nil {
		return err
	}
	status, ok := fields["status"]
	if !ok {
		return r.Resources.Patch(ctx, dest, ref, types.MergePatchType, patch)
	}
	delete(fields, "status")
	if len(fields) > 0 {
		rest, err := json.Marshal(fields)
		if err != nil {
			return err
		}
		if err := r.Resources.Patch(ctx, dest, ref, types.MergePatchType, rest); err != nil {
			return err
		}
	}
	statusPatch, err := json.Marshal(map[string]json.RawMessage{"status": status})
	if err != nil {
		return err
	}
	err = r.Resources.Patch(ctx, dest, ref, types.MergePatchType, statusPatch, "status")
	if apierrors.IsNotFound(err) {
		// No status subresource: status is part of the object.
		err = r.Resources.Patch(ctx, dest, ref, types.MergePatchType, statusPatch)
	}
	return err
}

// changesAllowed checks every object an action would write against app's
// project, as a sync checks a manifest: its kind, and its namespace
// among the destinations.
func (r *Resolver) changesAllowed(ctx context.Context, app *v1alpha1.Application, changes []actions.Change) error {
	proj, err := r.appProject(ctx, app)
	if err != nil {
		return err
	}
	rules, err := r.compiled.Rules(proj)
	if err != nil {
		return Errorf(CodeForbidden, "project %s is invalid: %v", proj.Name, err)
	}
	dest := r.destinationCluster(ctx, app.Spec.Destination)
	for _, c := range changes {
		gvk := c.Object.GroupVersionKind()
		if err := rules.ResourceAllowed(gvk.Group, gvk.Kind, c.Object.GetNamespace(), dest.Server, dest.Name); err != nil {
			return &Error{Code: CodeForbidden, Message: fmt.Sprintf("the action would write %s %s: %v", gvk.Kind, c.Object.GetName(), err), Err: err}
		}
	}
	return nil
}

// recordAction leaves the Event of a run on app: who ran which action on
// which object, and what it wrote. A failure to record is logged, not
// returned: the action has run.
func (r *Resolver) recordAction(ctx context.Context, app *v1alpha1.Application, action, group, kind, namespace, name string, done []*model.ResourceActionChange) {
	if r.AppEvents == nil {
		return
	}
	who := "anonymous"
	if p, ok := auth.FromContext(ctx); ok && p.Subject != "" {
		who = p.Subject
	}
	wrote := make([]string, 0, len(done))
	for _, c := range done {
		wrote = append(wrote, fmt.Sprintf("%s %s %s", strings.ToLower(string(c.Operation)), c.Kind, c.Name))
	}
	note := fmt.Sprintf("%s ran action %s on resource %s/%s/%s/%s: %s", who, action, group, kind, namespace, name, strings.Join(wrote, ", "))
	if err := r.AppEvents.Record(context.WithoutCancel(ctx), app, ReasonResourceActionRan, note); err != nil {
		slog.Default().Warn("resource action ran but its event was not recorded", "application", app.Namespace+"/"+app.Name, "err", err)
	}
}

// actionParams turns the input's parameters into the engine's map,
// refusing duplicates and oversized input before any lookup.
func actionParams(params []*model.ResourceActionParamInput) (map[string]string, error) {
	if len(params) > maxActionParams {
		return nil, Errorf(CodeBadUserInput, "at most %d action parameters, got %d", maxActionParams, len(params))
	}
	values := make(map[string]string, len(params))
	for _, p := range params {
		if len(p.Name)+len(p.Value) > maxActionParamBytes {
			return nil, Errorf(CodeBadUserInput, "action parameter %.64q is longer than %d bytes", p.Name, maxActionParamBytes)
		}
		if _, dup := values[p.Name]; dup {
			return nil, Errorf(CodeBadUserInput, "action parameter %q is given twice", p.Name)
		}
		values[p.Name] = p.Value
	}
	return values, nil
}

// actionError turns an engine error into what the caller sees: their own
// mistakes and the script's failures are BAD_USER_INPUT with the engine's
// message (which names the action and the rule, never the object's data).
func actionError(err error) error {
	var script *health.ScriptError
	switch {
	case errors.Is(err, actions.ErrNoAction), errors.Is(err, actions.ErrDisabled), errors.Is(err, actions.ErrBadParam),
		errors.Is(err, actions.ErrBadResult), errors.As(err, &script):
		return &Error{Code: CodeBadUserInput, Message: err.Error(), Err: err}
	}
	return err
}

// refOf names the object a change wrote, for resourceError.
func refOf(c *model.ResourceActionChange) catalog.ResourceRef {
	return catalog.ResourceRef{Group: c.Group, Kind: c.Kind, Namespace: c.Namespace, Name: c.Name}
}
