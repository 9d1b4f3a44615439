package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/project"
	appsync "github.com/graphcd/graphcd/controller/sync"
)

// deletionRecheck is how soon a cascading delete looks again for
// resources that are still going away; their watch events usually come
// first.
const deletionRecheck = 2 * time.Second

// deletionRetry is how soon a cascading delete that failed is retried.
const deletionRetry = 10 * time.Second

// cascadeOf returns the cascade finalizers app carries (see
// v1alpha1.ResourcesFinalizer) and the propagation policy they ask for:
// background only when the background finalizer is the only one,
// foreground otherwise. ok is false without any.
func cascadeOf(app *v1alpha1.Application) (finalizers []string, policy metav1.DeletionPropagation, ok bool) {
	policy = metav1.DeletePropagationForeground
	background := false
	for _, f := range app.Finalizers {
		switch f {
		case v1alpha1.ResourcesFinalizer, v1alpha1.ArgoResourcesFinalizer:
			finalizers = append(finalizers, f)
		case v1alpha1.ArgoResourcesFinalizerBackground:
			finalizers = append(finalizers, f)
			background = true
		}
	}
	if background && len(finalizers) == 1 {
		policy = metav1.DeletePropagationBackground
	}
	return finalizers, policy, len(finalizers) > 0
}

// keptOnDelete reports why obj stays when its application is deleted: the
// sync option Delete=false, or helm.sh/resource-policy: keep. It returns
// "" for an object that is deleted.
func keptOnDelete(obj *unstructured.Unstructured) string {
	ann := obj.GetAnnotations()
	for e := range strings.SplitSeq(ann[appsync.AnnotationSyncOptions], ",") {
		if strings.EqualFold(strings.TrimSpace(e), "Delete=false") {
			return "Delete=false"
		}
	}
	for p := range strings.SplitSeq(ann[appsync.AnnotationHelmResourcePolicy], ",") {
		if strings.TrimSpace(p) == "keep" {
			return "helm.sh/resource-policy: keep"
		}
	}
	return ""
}

// createdNamespace reports whether key is the destination namespace that
// the CreateNamespace sync option creates; like Argo CD, deleting the
// application leaves it.
func createdNamespace(app *v1alpha1.Application, key ResourceKey) bool {
	if key.Group != "" || key.Kind != "Namespace" || key.Name != app.Spec.Destination.Namespace || app.Spec.SyncPolicy == nil {
		return false
	}
	return slices.ContainsFunc(app.Spec.SyncPolicy.SyncOptions, func(o string) bool {
		return strings.EqualFold(strings.TrimSpace(o), "CreateNamespace=true")
	})
}

// The finalizers that make deleting an Application run its PreDelete and
// PostDelete hooks, as Argo CD names them. The controller adds them while
// the app's manifests hold such hooks (a finalizer cannot be added once
// the deletion started), and removes each once its hooks succeeded.
const (
	PreDeleteFinalizer  = "pre-delete-finalizer.argocd.argoproj.io"
	PostDeleteFinalizer = "post-delete-finalizer.argocd.argoproj.io"
)

// finalize serves an Application being deleted, in Argo CD's order:
//
//  1. With the PreDelete finalizer, it runs the PreDelete hooks of the
//     app's manifests and waits for them to succeed. A failed hook stops
//     the deletion with a DeletionError condition: the resources stay.
//  2. With a cascade finalizer, it deletes every live resource tracked to
//     the app on its destination (except the kept ones and the deletion
//     hooks) and waits until they are gone.
//  3. With the PostDelete finalizer, it runs the PostDelete hooks and
//     waits for them to succeed; a failed one keeps the Application.
//
// Then it removes its finalizers so the Application goes away. When the
// destination names no known cluster it does none of this; when the app's
// project does not allow its namespace it waits, reporting why. A failed step
// is reported as a DeletionError condition and retried.
func (r *Reconciler) finalize(ctx context.Context, app *v1alpha1.Application, t *target) (ctrl.Result, error) {
	finalizers, policy, cascade := cascadeOf(app)
	pre, post := slices.Contains(app.Finalizers, PreDeleteFinalizer), slices.Contains(app.Finalizers, PostDeleteFinalizer)
	if !cascade && !pre && !post {
		return ctrl.Result{}, nil
	}
	// An app its project does not allow in its namespace touches nothing
	// of the project's, not even to delete it (as in Argo CD).
	if _, err := r.project(ctx, app); errors.Is(err, errInvalidSpec) {
		if _, refused := errors.AsType[*project.DeniedError](err); refused {
			return r.deletionFailed(ctx, app, err)
		}
	}
	if t.resolveErr != nil {
		// Like Argo CD: with no such cluster there is nothing to delete,
		// and the finalizer must not keep the Application forever.
		r.log.Warn("deleting an application whose destination cluster is unknown; its resources are left", "app", app.Namespace+"/"+app.Name, "err", t.resolveErr)
		return r.removeFinalizers(ctx, app, append(finalizers, PreDeleteFinalizer, PostDeleteFinalizer)...)
	}
	var hooks *deletionHooks
	if pre || post {
		h, err := r.deletionHooks(ctx, app, t)
		if err != nil {
			return r.deletionFailed(ctx, app, err)
		}
		hooks = h
	}
	if pre {
		if res, done, err := r.runDeletionHooks(ctx, app, hooks, appsync.PhasePreDelete); !done || err != nil {
			return res, err
		}
	}
	if cascade {
		remaining, err := r.deleteResources(ctx, app, t, policy)
		if err != nil {
			return r.deletionFailed(ctx, app, err)
		}
		if remaining > 0 {
			return ctrl.Result{RequeueAfter: deletionRecheck}, nil
		}
	}
	if post {
		if res, done, err := r.runDeletionHooks(ctx, app, hooks, appsync.PhasePostDelete); !done || err != nil {
			return res, err
		}
	}
	return r.removeFinalizers(ctx, app, finalizers...)
}

// deletionFailed reports err as the app's DeletionError condition and
// asks for a retry.
func (r *Reconciler) deletionFailed(ctx context.Context, app *v1alpha1.Application, err error) (ctrl.Result, error) {
	status := app.Status.DeepCopy()
	noteDeletion(status, err, metav1.Now())
	if werr := r.writeStatus(ctx, app, status, metav1.Now()); werr != nil {
		return ctrl.Result{}, client.IgnoreNotFound(werr)
	}
	r.memory.wrote(app)
	r.log.Warn("deleting an application", "app", app.Namespace+"/"+app.Name, "err", err)
	return ctrl.Result{RequeueAfter: deletionRetry}, nil
}

// removeFinalizers removes the named finalizers from app; once it holds
// none any more the Application is gone and forgotten.
func (r *Reconciler) removeFinalizers(ctx context.Context, app *v1alpha1.Application, names ...string) (ctrl.Result, error) {
	if !slices.ContainsFunc(app.Finalizers, func(f string) bool { return slices.Contains(names, f) }) {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
	app.Finalizers = slices.DeleteFunc(app.Finalizers, func(f string) bool { return slices.Contains(names, f) })
	if err := r.client.Patch(ctx, app, patch); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("remove finalizers of %s/%s: %w", app.Namespace, app.Name, err)
	}
	if len(app.Finalizers) == 0 {
		r.forget(client.ObjectKeyFromObject(app))
		return ctrl.Result{}, nil
	}
	r.memory.wrote(app)
	return ctrl.Result{}, nil
}

// deletionHooks are the PreDelete and PostDelete hooks of an app's
// manifests.
type deletionHooks struct {
	exec    *appsync.Executor
	byPhase map[appsync.Phase][]appsync.Task
}

// deletionHooks renders the app's manifests at the revision last compared
// (the target revision when there is none) and returns their deletion
// hooks.
func (r *Reconciler) deletionHooks(ctx context.Context, app *v1alpha1.Application, t *target) (*deletionHooks, error) {
	if err := t.liveErr(); err != nil {
		return nil, fmt.Errorf("cannot run the deletion hooks: %w", err)
	}
	// Deletion hooks are hooks: with impersonation on they run as the
	// app's service account, as its syncs' hooks do.
	exec, err := r.executorOf(ctx, app, t)
	if err != nil {
		return nil, fmt.Errorf("cannot run the deletion hooks: %w", err)
	}
	set, err := specSources(app)
	if err != nil {
		return nil, fmt.Errorf("cannot find the deletion hooks: %w (remove the %s and %s finalizers to delete without hooks)", err, PreDeleteFinalizer, PostDeleteFinalizer)
	}
	set.revisions = []string{app.Status.Sync.Revision}
	if set.multi {
		set.revisions = app.Status.Sync.Revisions
	}
	lv := t.dest.Live
	proj, err := r.project(ctx, app)
	if err != nil {
		return nil, fmt.Errorf("cannot find the deletion hooks: %w", err)
	}
	rendered, err := r.renderSources(ctx, app, proj, lv, set, "")
	if err != nil {
		return nil, fmt.Errorf("cannot find the deletion hooks: %w (remove the %s and %s finalizers to delete without hooks)", err, PreDeleteFinalizer, PostDeleteFinalizer)
	}
	plan, err := appsync.Build(rendered.desired, nil, appsync.Options{
		Namespace: app.Spec.Destination.Namespace,
		ClusterScoped: func(group, kind string) bool {
			namespaced, err := lv.IsNamespaced(schema.GroupKind{Group: group, Kind: kind})
			return err == nil && !namespaced
		},
	})
	if err != nil {
		return nil, fmt.Errorf("cannot find the deletion hooks: %w", err)
	}
	if perr := plan.Err(); perr != nil {
		// Invalid objects get no task; the valid hooks still run.
		r.log.Warn("deletion hooks: some manifests are not valid", "app", app.Namespace+"/"+app.Name, "err", perr)
	}
	h := &deletionHooks{exec: exec, byPhase: map[appsync.Phase][]appsync.Task{}}
	for _, task := range plan.DeletionHooks {
		h.byPhase[task.Phase] = append(h.byPhase[task.Phase], task)
	}
	return h, nil
}

// deletionRunID names the run of an app's hooks of one deletion phase;
// the hooks carry it in their graphcd.io/operation label.
func deletionRunID(app *v1alpha1.Application, phase appsync.Phase) string {
	return string(app.UID) + "." + string(phase)
}

// deletionHookOf reports whether obj is one of app's PreDelete or
// PostDelete hooks: the cascade leaves them to their delete policies.
func deletionHookOf(app *v1alpha1.Application, obj *unstructured.Unstructured) bool {
	v := obj.GetLabels()[appsync.LabelOperation]
	return v != "" && (v == appsync.OperationLabel(deletionRunID(app, appsync.PhasePreDelete)) || v == appsync.OperationLabel(deletionRunID(app, appsync.PhasePostDelete)))
}

// deletionFinalizer is the finalizer of a deletion phase.
func deletionFinalizer(phase appsync.Phase) string {
	if phase == appsync.PhasePreDelete {
		return PreDeleteFinalizer
	}
	return PostDeleteFinalizer
}

// runDeletionHooks runs the hooks of phase. done is true once they
// succeeded: their finalizer is removed (which records it), and then the
// hooks the delete policies name are deleted. Otherwise res says when to
// look again; a failure is the app's DeletionError condition.
func (r *Reconciler) runDeletionHooks(ctx context.Context, app *v1alpha1.Application, hooks *deletionHooks, phase appsync.Phase) (res ctrl.Result, done bool, err error) {
	run := appsync.HookRun{ID: deletionRunID(app, phase), Hooks: hooks.byPhase[phase]}
	st, err := hooks.exec.RunHooks(ctx, run)
	if err != nil {
		res, err := r.deletionFailed(ctx, app, fmt.Errorf("running the %s hooks: %w", phase, err))
		return res, false, err
	}
	switch st.Phase {
	case v1alpha1.OperationRunning:
		r.clearDeletionError(ctx, app)
		return ctrl.Result{RequeueAfter: deletionRecheck}, false, nil
	case v1alpha1.OperationFailed:
		if err := hooks.exec.CleanupHooks(ctx, run, st.Phase); err != nil {
			r.log.Warn("delete failed deletion hooks", "app", app.Namespace+"/"+app.Name, "err", err)
		}
		msg := st.Message
		if phase == appsync.PhasePreDelete {
			msg += "; the application's resources are kept"
		}
		res, err := r.deletionFailed(ctx, app, errors.New(msg))
		return res, false, err
	}
	r.clearDeletionError(ctx, app)
	// The finalizer goes first: once it is gone the hooks never run
	// again, even if deleting them below fails.
	if res, err := r.removeFinalizers(ctx, app, deletionFinalizer(phase)); err != nil {
		return res, false, err
	}
	if err := hooks.exec.CleanupHooks(ctx, run, st.Phase); err != nil {
		r.log.Warn("delete succeeded deletion hooks", "app", app.Namespace+"/"+app.Name, "err", err)
	}
	if len(app.Finalizers) == 0 {
		return ctrl.Result{}, false, nil // the Application is gone
	}
	return ctrl.Result{}, true, nil
}

// clearDeletionError removes a DeletionError condition left by an
// earlier attempt.
func (r *Reconciler) clearDeletionError(ctx context.Context, app *v1alpha1.Application) {
	status := app.Status.DeepCopy()
	noteDeletion(status, nil, metav1.Now())
	if len(status.Conditions) == len(app.Status.Conditions) {
		return
	}
	if err := r.writeStatus(ctx, app, status, metav1.Now()); err != nil {
		r.log.Warn("clear the DeletionError condition", "app", app.Namespace+"/"+app.Name, "err", err)
		return
	}
	r.memory.wrote(app)
}

// forget drops what the reconciler keeps about an app that is gone.
func (r *Reconciler) forget(app types.NamespacedName) {
	r.memory.forget(app)
	r.orphans.set(app, "")
	forgetSyncs(app)
}

// deleteResources deletes the app's live resources with policy and
// returns how many are still there (deleted, not yet gone). Its error
// names every resource that could not be deleted.
func (r *Reconciler) deleteResources(ctx context.Context, app *v1alpha1.Application, t *target, policy metav1.DeletionPropagation) (int, error) {
	if err := t.liveErr(); err != nil {
		return 0, fmt.Errorf("cannot delete the application's resources: %w", err)
	}
	dest := t.dest
	if dest.Client == nil || dest.Mapper == nil {
		return 0, fmt.Errorf("cannot delete the application's resources: no client for cluster %s", t.cluster.Name)
	}
	// With impersonation on, the cascade deletes as the app's syncs
	// write: as the project's service account for the destination.
	user, err := r.accountOf(ctx, r.engines.Load().settings, app, t.cluster)
	if err != nil {
		return 0, fmt.Errorf("cannot delete the application's resources: %w", err)
	}
	client, err := dest.ClientAs(user)
	if err != nil {
		return 0, fmt.Errorf("cannot delete the application's resources: %w", err)
	}
	// Only what the project permits, as a sync: an object carrying the
	// app's tracking id in a namespace or of a kind the project does not
	// (or no longer) allow is left alone, as Argo CD leaves it.
	rules, err := r.rulesOf(ctx, app)
	if err != nil {
		return 0, fmt.Errorf("cannot delete the application's resources: %w", err)
	}
	remaining := 0
	var failed, awaiting []string
	for _, key := range dest.Live.Managed(r.instance(app)) {
		if createdNamespace(app, key) {
			continue
		}
		if err := rules.ResourceAllowed(key.Group, key.Kind, key.Namespace, t.cluster.Server, t.cluster.Name); err != nil {
			r.log.Info("leaving a resource of a deleted application that its project does not permit", "app", app.Namespace+"/"+app.Name, "resource", describe(key), "reason", err)
			continue
		}
		obj, err := dest.Live.Get(ctx, key)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("read %s: %v", describe(key), err))
			continue
		}
		if keptOnDelete(obj) != "" || deletionHookOf(app, obj) {
			continue
		}
		remaining++
		if deleteNeedsConfirmation(obj) && !appsync.DeletionApproved(app.Annotations, deletionTime(app)) {
			awaiting = append(awaiting, describe(key))
			continue
		}
		if obj.GetDeletionTimestamp() != nil {
			continue
		}
		if err := deleteObject(ctx, dest.Mapper, client, obj, policy); err != nil {
			failed = append(failed, fmt.Sprintf("delete %s: %v", describe(key), err))
		}
	}
	if len(failed) > 0 {
		return remaining, fmt.Errorf("deleting the application's resources failed: %s", strings.Join(failed, "; "))
	}
	if len(awaiting) > 0 {
		return remaining, fmt.Errorf("waiting for deletion confirmation of %s (Delete=confirm): annotate the application with %s=<now, RFC 3339>",
			strings.Join(awaiting, ", "), appsync.AnnotationDeletionApproved)
	}
	return remaining, nil
}

// deleteNeedsConfirmation reports whether obj has the sync option
// Delete=confirm: deleting it with its application waits for approval.
func deleteNeedsConfirmation(obj *unstructured.Unstructured) bool {
	for e := range strings.SplitSeq(obj.GetAnnotations()[appsync.AnnotationSyncOptions], ",") {
		if strings.EqualFold(strings.TrimSpace(e), "Delete=confirm") {
			return true
		}
	}
	return false
}

// deletionTime is when the application was deleted (now if it is not).
func deletionTime(app *v1alpha1.Application) time.Time {
	if t := app.GetDeletionTimestamp(); t != nil {
		return t.Time
	}
	return time.Now()
}

// deleteObject deletes obj, if it still is the object read, with policy,
// through client.
func deleteObject(ctx context.Context, mapper meta.RESTMapper, client dynamic.Interface, obj *unstructured.Unstructured, policy metav1.DeletionPropagation) error {
	gvk := obj.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("find the resource of %s: %w", gvk.Kind, err)
	}
	res := client.Resource(m.Resource)
	var c interface {
		Delete(context.Context, string, metav1.DeleteOptions, ...string) error
	} = res
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		c = res.Namespace(obj.GetNamespace())
	}
	uid := obj.GetUID()
	opts := metav1.DeleteOptions{PropagationPolicy: &policy}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	err = c.Delete(ctx, obj.GetName(), opts)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		// Gone, or replaced by a newer object the next pass reads.
		return nil
	}
	return err
}

// deletionFinalizers returns the finalizers the deletion hooks among objs
// need: PreDeleteFinalizer for a PreDelete hook (or Helm pre-delete),
// PostDeleteFinalizer for a PostDelete one (or Helm post-delete).
func deletionFinalizers(objs []*unstructured.Unstructured) []string {
	var pre, post bool
	for _, obj := range objs {
		ann := obj.GetAnnotations()
		value, helm := ann[appsync.AnnotationHook], false
		if _, ok := ann[appsync.AnnotationHook]; !ok {
			value, helm = ann[appsync.AnnotationHelmHook], true
		}
		for v := range strings.SplitSeq(value, ",") {
			switch v = strings.TrimSpace(v); {
			case (!helm && v == string(appsync.HookPreDelete)) || (helm && v == "pre-delete"):
				pre = true
			case (!helm && v == string(appsync.HookPostDelete)) || (helm && v == "post-delete"):
				post = true
			}
		}
	}
	var out []string
	if pre {
		out = append(out, PreDeleteFinalizer)
	}
	if post {
		out = append(out, PostDeleteFinalizer)
	}
	return out
}

// addFinalizers adds the finalizers app lacks among names, so that its
// deletion runs its deletion hooks.
func (r *Reconciler) addFinalizers(ctx context.Context, app *v1alpha1.Application, names []string) error {
	var missing []string
	for _, f := range names {
		if !slices.Contains(app.Finalizers, f) {
			missing = append(missing, f)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
	app.Finalizers = append(app.Finalizers, missing...)
	if err := r.client.Patch(ctx, app, patch); err != nil {
		return fmt.Errorf("add the deletion hook finalizers to %s/%s: %w", app.Namespace, app.Name, err)
	}
	return nil
}
