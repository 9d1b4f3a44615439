package backup

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// Action is what an import did, or in a dry run would do, to one object.
type Action string

// The actions of an import.
const (
	Created   Action = "created"
	Updated   Action = "updated"
	Unchanged Action = "unchanged"
	Pruned    Action = "pruned"
)

// Result is one object's line of an import's report.
type Result struct {
	Action    Action `json:"action"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// ImportOptions choose how Import writes.
type ImportOptions struct {
	Scope
	// DryRun asks the API server to check every write without making it.
	DryRun bool
	// Prune deletes the objects of the backup's kinds in scope that the
	// file does not hold: Applications without their resources,
	// ApplicationSets without their Applications, and Secrets only when
	// the file holds Secrets.
	Prune bool
	// Keep names Secrets a prune never deletes (graphcd's own, with the
	// keys that sign sessions).
	Keep []string
	// FieldManager, when set, writes with server-side apply under this
	// manager instead of replacing: the fields of each object are merged
	// into the live one, and keys that others own (graphcd's session key
	// in graphcd-secret, settings graphcd added) stay.
	FieldManager string
}

// Import writes objs (from Parse) in order: an object missing is created,
// one that differs from the file is replaced by the file's (labels,
// annotations, finalizers and every field but status), one that matches
// is left alone. With Prune it then deletes what the file does not hold.
// report is called once per object, as it is done; Import stops at the
// first error.
func Import(ctx context.Context, dyn dynamic.Interface, objs []*unstructured.Unstructured, o ImportOptions, report func(Result)) error {
	var dryRun []string
	if o.DryRun {
		dryRun = []string{metav1.DryRunAll}
	}
	for _, obj := range objs {
		action, err := apply(ctx, dyn, obj, dryRun, o.FieldManager)
		if err != nil {
			return fmt.Errorf("%s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), safe(obj, err))
		}
		report(Result{Action: action, Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()})
	}
	if !o.Prune {
		return nil
	}
	return prune(ctx, dyn, objs, o, dryRun, report)
}

// apply makes the live object match obj: by server-side apply under
// fieldManager, or, without one, by replacing it.
func apply(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured, dryRun []string, fieldManager string) (Action, error) {
	k, _ := kindOf(obj.GroupVersionKind())
	client := dyn.Resource(k.gvr()).Namespace(obj.GetNamespace())
	live, err := client.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if fieldManager != "" && (err == nil || apierrors.IsNotFound(err)) {
		return serverSideApply(ctx, client, obj, live, err == nil, dryRun, fieldManager)
	}
	if apierrors.IsNotFound(err) {
		if _, err := client.Create(ctx, obj, metav1.CreateOptions{DryRun: dryRun}); err != nil {
			return "", fmt.Errorf("create: %w", err)
		}
		return Created, nil
	}
	if err != nil {
		return "", fmt.Errorf("get: %w", err)
	}
	want := replace(live, obj)
	if same(live, want) {
		return Unchanged, nil
	}
	got, err := client.Update(ctx, want, metav1.UpdateOptions{DryRun: dryRun})
	if err != nil {
		return "", fmt.Errorf("update: %w", err)
	}
	// The API server may default what the file left out: then nothing
	// changed.
	if same(live, got) {
		return Unchanged, nil
	}
	return Updated, nil
}

// serverSideApply applies obj under fieldManager, taking over the fields
// it sets; exists says whether live is the object as it was.
func serverSideApply(ctx context.Context, client dynamic.ResourceInterface, obj, live *unstructured.Unstructured, exists bool, dryRun []string, fieldManager string) (Action, error) {
	got, err := client.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: fieldManager, Force: true, DryRun: dryRun})
	switch {
	case err != nil:
		return "", fmt.Errorf("apply: %w", err)
	case !exists:
		return Created, nil
	case same(live, got):
		return Unchanged, nil
	}
	return Updated, nil
}

// replace returns live with the file's labels, annotations, finalizers
// and fields, keeping the server's metadata, the status and an
// Application's operation.
func replace(live, file *unstructured.Unstructured) *unstructured.Unstructured {
	want := live.DeepCopy()
	for key := range want.Object {
		if !kept(live, key) {
			delete(want.Object, key)
		}
	}
	for key, v := range file.DeepCopy().Object {
		if !kept(live, key) {
			want.Object[key] = v
		}
	}
	want.SetLabels(file.GetLabels())
	annotations := file.GetAnnotations()
	if v, ok := live.GetAnnotations()[lastApplied]; ok {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[lastApplied] = v
	}
	want.SetAnnotations(annotations)
	want.SetFinalizers(file.GetFinalizers())
	return want
}

// kept reports whether an import leaves top-level field key of live as
// it is.
func kept(live *unstructured.Unstructured, key string) bool {
	switch key {
	case "metadata", "status", "apiVersion", "kind":
		return true
	case "operation":
		return live.GetKind() == appKind.gvk.Kind
	}
	return false
}

// same reports whether a and b hold the same backup.
func same(a, b *unstructured.Unstructured) bool {
	return equality.Semantic.DeepEqual(clean(a, "").Object, clean(b, "").Object)
}

// prune deletes what of the backup's kinds in scope objs do not hold.
func prune(ctx context.Context, dyn dynamic.Interface, objs []*unstructured.Unstructured, o ImportOptions, dryRun []string, report func(Result)) error {
	inFile := map[string]bool{}
	withSecrets := false
	for _, obj := range objs {
		inFile[objectKey(obj)] = true
		withSecrets = withSecrets || obj.GetKind() == secretKind.gvk.Kind
	}
	for _, k := range kinds {
		if k == secretKind && !withSecrets {
			continue
		}
		live, err := o.list(ctx, dyn, k)
		if err != nil {
			return err
		}
		for _, l := range live {
			if inFile[objectKey(l)] || (k == secretKind && slices.Contains(o.Keep, l.GetName())) {
				continue
			}
			if err := remove(ctx, dyn, k, l, dryRun); err != nil {
				return fmt.Errorf("prune %s %s/%s: %w", k.gvk.Kind, l.GetNamespace(), l.GetName(), safe(l, err))
			}
			report(Result{Action: Pruned, Kind: k.gvk.Kind, Namespace: l.GetNamespace(), Name: l.GetName()})
		}
	}
	return nil
}

// remove deletes one object and nothing else: an Application loses its
// finalizers first, so that its resources and deletion hooks are left
// alone, and an ApplicationSet's Applications are orphaned.
func remove(ctx context.Context, dyn dynamic.Interface, k kind, obj *unstructured.Unstructured, dryRun []string) error {
	client := dyn.Resource(k.gvr()).Namespace(obj.GetNamespace())
	if k == appKind && len(obj.GetFinalizers()) > 0 {
		patch := fmt.Appendf(nil, `{"metadata":{"finalizers":null,"resourceVersion":%q}}`, obj.GetResourceVersion())
		if _, err := client.Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{DryRun: dryRun}); err != nil {
			return fmt.Errorf("remove finalizers: %w", err)
		}
	}
	opts := metav1.DeleteOptions{DryRun: dryRun}
	if k == appSetKind {
		orphan := metav1.DeletePropagationOrphan
		opts.PropagationPolicy = &orphan
	}
	if err := client.Delete(ctx, obj.GetName(), opts); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// safe returns err, or for a Secret only its reason: an API server's
// message may quote a field it refused.
func safe(obj *unstructured.Unstructured, err error) error {
	if obj.GetKind() != secretKind.gvk.Kind {
		return err
	}
	return fmt.Errorf("refused by the API server (%s)", apierrors.ReasonForError(err))
}
