package sync

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
)

// AnnotationLastApplied holds the configuration client-side apply last
// applied, as kubectl writes it, for the three-way merge of the next
// apply.
const AnnotationLastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// dryRunAll is the DryRun value of requests that must change nothing.
var dryRunAll = []string{metav1.DryRunAll}

// resettable is a REST mapper that can forget what it discovered.
type resettable interface{ Reset() }

// mapping finds the API resource of a type; a deferred mapper is reset
// once when it does not know the kind.
func (e *Executor) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := e.cfg.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		if r, ok := e.cfg.Mapper.(resettable); ok {
			r.Reset()
			m, err = e.cfg.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("find the API resource of %s: %w", gvk, err)
	}
	return m, nil
}

// resource returns the client of an object's type in its namespace.
func (e *Executor) resource(gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, error) {
	m, err := e.mapping(gvk)
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return e.cfg.Client.Resource(m.Resource).Namespace(namespace), nil
	}
	return e.cfg.Client.Resource(m.Resource), nil
}

// taskGVK is the type of a task's object.
func taskGVK(t *Task) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: t.Group, Version: t.Version, Kind: t.Kind}
}

// getLive reads an object; nil without error when it does not exist.
func getLive(ctx context.Context, ri dynamic.ResourceInterface, name string) (*unstructured.Unstructured, error) {
	obj, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

// applier applies one desired object with the strategy its sync options
// choose.
type applier struct {
	e      *Executor
	ri     dynamic.ResourceInterface
	t      *Task
	obj    *unstructured.Unstructured
	live   *unstructured.Unstructured
	dryRun bool
	force  bool
	// rv is the resourceVersion the API server gave the object written;
	// empty when nothing was written.
	rv string
}

// apply applies t's desired object and returns the object's name and
// kubectl's word for what happened ("created", "configured",
// "unchanged", ...). An error is the API server's answer, for the
// resource's result.
func (s *step) apply(ctx context.Context, t *Task, dryRun bool) (string, string, error) {
	ri, err := s.e.resource(taskGVK(t), t.Namespace)
	if err != nil {
		return t.Name, "", err
	}
	a := &applier{e: s.e, ri: ri, t: t, obj: t.Desired.DeepCopy(), dryRun: dryRun, force: s.run.Force || t.SyncOptions.Force}
	if t.Name != "" {
		if a.live, err = s.e.read(ctx, taskGVK(t), t.Namespace, t.Name, ri); err != nil {
			return t.Name, "", fmt.Errorf("read the live object: %w", err)
		}
	}
	verb, err := a.run(ctx)
	if s.e.cfg.Reader != nil && t.Name != "" && t.HookType == "" &&
		(apierrors.IsAlreadyExists(err) || (a.live != nil && (apierrors.IsNotFound(err) || apierrors.IsConflict(err)))) {
		// The reader was behind the API server (a replace sent the
		// resourceVersion it read, and a controller has written the
		// object since): read the object there and apply again. (A hook
		// that already exists is one still going away; startHook waits
		// for it.)
		if a.live, err = getLive(ctx, ri, t.Name); err != nil {
			return t.Name, "", fmt.Errorf("read the live object: %w", err)
		}
		a.obj = t.Desired.DeepCopy()
		verb, err = a.run(ctx)
	}
	if err == nil && !dryRun && !t.IsHook() && a.rv != "" {
		s.wrote(taskGVK(t), t.Namespace, a.obj.GetName(), a.rv)
	}
	return a.obj.GetName(), verb, err
}

// run applies with the strategy the task's sync options choose.
func (a *applier) run(ctx context.Context) (string, error) {
	switch {
	case a.t.SyncOptions.ServerSideApply:
		return a.serverSide(ctx)
	case a.t.SyncOptions.Replace:
		return a.replace(ctx)
	default:
		return a.clientSide(ctx)
	}
}

func (a *applier) validation() string {
	if a.t.SyncOptions.Validate {
		return metav1.FieldValidationStrict
	}
	return metav1.FieldValidationIgnore
}

func (a *applier) dry() []string {
	if a.dryRun {
		return dryRunAll
	}
	return nil
}

// create creates the object; for generateName hooks the API server names
// it and a.obj takes the name.
func (a *applier) create(ctx context.Context) (string, error) {
	out, err := a.ri.Create(ctx, a.obj, metav1.CreateOptions{DryRun: a.dry(), FieldManager: a.e.cfg.FieldManager, FieldValidation: a.validation()})
	if err != nil {
		return "", err
	}
	a.obj.SetName(out.GetName())
	a.rv = out.GetResourceVersion()
	return "created", nil
}

// serverSide applies with server-side apply, taking over fields other
// managers own (as Argo CD does with --force-conflicts).
func (a *applier) serverSide(ctx context.Context) (string, error) {
	a.obj.SetManagedFields(nil)
	a.obj.SetResourceVersion("")
	body, err := json.Marshal(a.obj.Object)
	if err != nil {
		return "", fmt.Errorf("encode: %w", err)
	}
	force := true
	out, err := a.ri.Patch(ctx, a.obj.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
		DryRun: a.dry(), FieldManager: a.e.cfg.FieldManager, Force: &force, FieldValidation: a.validation(),
	})
	switch {
	case err != nil && a.force && recreatable(err):
		return a.recreate(ctx)
	case err != nil:
		return "", err
	case a.live == nil:
		a.rv = out.GetResourceVersion()
		return "created", nil
	case out.GetResourceVersion() == a.live.GetResourceVersion():
		return "unchanged", nil
	}
	a.rv = out.GetResourceVersion()
	return "serverside-applied", nil
}

// replace creates or replaces (PUT) the object, as `kubectl replace`.
func (a *applier) replace(ctx context.Context) (string, error) {
	if a.live == nil {
		return a.create(ctx)
	}
	a.obj.SetResourceVersion(a.live.GetResourceVersion())
	out, err := a.ri.Update(ctx, a.obj, metav1.UpdateOptions{DryRun: a.dry(), FieldManager: a.e.cfg.FieldManager, FieldValidation: a.validation()})
	if err != nil && a.force && recreatable(err) {
		return a.recreate(ctx)
	}
	if err != nil {
		return "", err
	}
	a.rv = out.GetResourceVersion()
	return "replaced", nil
}

// clientSide applies as `kubectl apply` does: the object is saved in the
// last-applied annotation, and an existing object gets a three-way patch
// from the previous last-applied configuration, the new one and the live
// object, so fields dropped from Git are removed. Built-in types get a
// strategic merge patch, others a JSON merge patch.
func (a *applier) clientSide(ctx context.Context) (string, error) {
	modified, err := setLastApplied(a.obj)
	if err != nil {
		return "", err
	}
	if a.live == nil {
		return a.create(ctx)
	}
	current, err := json.Marshal(a.live.Object)
	if err != nil {
		return "", fmt.Errorf("encode the live object: %w", err)
	}
	original := []byte(a.live.GetAnnotations()[AnnotationLastApplied])
	patch, patchType, err := threeWayPatch(a.obj.GroupVersionKind(), original, modified, current)
	if err != nil {
		return "", err
	}
	if string(patch) == "{}" {
		return "unchanged", nil
	}
	out, err := a.ri.Patch(ctx, a.obj.GetName(), patchType, patch, metav1.PatchOptions{DryRun: a.dry(), FieldManager: a.e.cfg.FieldManager, FieldValidation: a.validation()})
	if err != nil && a.force && recreatable(err) {
		return a.recreate(ctx)
	}
	if err != nil {
		return "", err
	}
	a.rv = out.GetResourceVersion()
	return "configured", nil
}

// recreate deletes the live object and creates the desired one, for
// Force=true when the object cannot be updated in place.
func (a *applier) recreate(ctx context.Context) (string, error) {
	if a.dryRun {
		// The API server cannot dry-run a create over an object that
		// still exists; the delete is what Force adds.
		return "replaced (deleted and re-created, not checked in a dry run)", nil
	}
	{
		policy := metav1.DeletePropagationBackground
		uid := a.live.GetUID()
		err := a.ri.Delete(ctx, a.live.GetName(), metav1.DeleteOptions{PropagationPolicy: &policy, Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return "", fmt.Errorf("force: delete before re-creating: %w", err)
		}
	}
	a.obj.SetResourceVersion("")
	if _, err := a.create(ctx); err != nil {
		return "", fmt.Errorf("force: re-create: %w", err)
	}
	return "replaced (deleted and re-created)", nil
}

// recreatable reports whether Force may delete and re-create after err:
// a change the API server refuses (such as an immutable field) or a
// conflict.
func recreatable(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsConflict(err)
}

// setLastApplied stores obj, without the annotation itself, in obj's
// last-applied annotation and returns obj's JSON with it.
func setLastApplied(obj *unstructured.Unstructured) ([]byte, error) {
	ann := obj.GetAnnotations()
	delete(ann, AnnotationLastApplied)
	if len(ann) == 0 {
		ann = nil
	}
	obj.SetAnnotations(ann)
	last, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationLastApplied] = string(last)
	obj.SetAnnotations(ann)
	modified, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return modified, nil
}

// threeWayPatch computes the patch that takes current to modified and
// removes what original had and modified no longer has.
func threeWayPatch(gvk schema.GroupVersionKind, original, modified, current []byte) ([]byte, types.PatchType, error) {
	if typed, err := scheme.Scheme.New(gvk); err == nil {
		meta, err := strategicpatch.NewPatchMetaFromStruct(typed)
		if err != nil {
			return nil, "", fmt.Errorf("patch schema of %s: %w", gvk, err)
		}
		patch, err := strategicpatch.CreateThreeWayMergePatch(original, modified, current, meta, true)
		if err != nil {
			return nil, "", fmt.Errorf("compute the strategic merge patch: %w", err)
		}
		return patch, types.StrategicMergePatchType, nil
	}
	patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, current)
	if err != nil {
		return nil, "", fmt.Errorf("compute the JSON merge patch: %w", err)
	}
	return patch, types.MergePatchType, nil
}
