package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	appsync "github.com/graphcd/graphcd/controller/sync"
)

// The finalizers that make deleting an Application delete its resources
// (a cascading delete). Argo CD's name means foreground propagation, its
// "/background" variant background propagation; graphcd's own name is an
// alias of Argo CD's.
const (
	ResourcesFinalizer               = "resources-finalizer.graphcd.io"
	ArgoResourcesFinalizer           = "resources-finalizer.argocd.argoproj.io"
	ArgoResourcesFinalizerBackground = "resources-finalizer.argocd.argoproj.io/background"
)

// deletionRecheck is how soon a cascading delete looks again for
// resources that are still going away; their watch events usually come
// first.
const deletionRecheck = 2 * time.Second

// deletionRetry is how soon a cascading delete that failed is retried.
const deletionRetry = 10 * time.Second

// cascadeOf returns the cascade finalizers app carries and the propagation
// policy they ask for: background only when the background finalizer is
// the only one, foreground otherwise. ok is false without any.
func cascadeOf(app *v1alpha1.Application) (finalizers []string, policy metav1.DeletionPropagation, ok bool) {
	policy = metav1.DeletePropagationForeground
	background := false
	for _, f := range app.Finalizers {
		switch f {
		case ResourcesFinalizer, ArgoResourcesFinalizer:
			finalizers = append(finalizers, f)
		case ArgoResourcesFinalizerBackground:
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

// finalize serves an Application being deleted. With a cascade finalizer
// it deletes every live resource tracked to the app on its destination
// (except the kept ones), waits until they are gone and then removes its
// finalizers so the Application goes away. Without one it leaves the
// resources alone, and so it does when the destination names no known
// cluster. A failed delete is reported as a DeletionError condition and
// retried.
func (r *Reconciler) finalize(ctx context.Context, app *v1alpha1.Application, t *target) (ctrl.Result, error) {
	finalizers, policy, ok := cascadeOf(app)
	if !ok {
		return ctrl.Result{}, nil
	}
	now := metav1.Now()
	remaining, err := 0, error(nil)
	if t.resolveErr == nil {
		remaining, err = r.deleteResources(ctx, app, t, policy)
	} else {
		// Like Argo CD: with no such cluster there is nothing to delete,
		// and the finalizer must not keep the Application forever.
		r.log.Warn("deleting an application whose destination cluster is unknown; its resources are left", "app", app.Namespace+"/"+app.Name, "err", t.resolveErr)
	}
	if err != nil {
		status := app.Status.DeepCopy()
		setCondition(status, v1alpha1.ApplicationConditionDeletionError, err.Error(), now)
		if werr := r.writeStatus(ctx, app, status, now); werr != nil {
			return ctrl.Result{}, client.IgnoreNotFound(werr)
		}
		r.log.Warn("cascading delete of an application", "app", app.Namespace+"/"+app.Name, "err", err)
		return ctrl.Result{RequeueAfter: deletionRetry}, nil
	}
	if remaining > 0 {
		return ctrl.Result{RequeueAfter: deletionRecheck}, nil
	}
	patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
	app.Finalizers = slices.DeleteFunc(app.Finalizers, func(f string) bool { return slices.Contains(finalizers, f) })
	if err := r.client.Patch(ctx, app, patch); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("remove the resources finalizer of %s/%s: %w", app.Namespace, app.Name, err)
	}
	r.forget(types.NamespacedName{Namespace: app.Namespace, Name: app.Name})
	return ctrl.Result{}, nil
}

// forget drops what the reconciler keeps about an app that is gone.
func (r *Reconciler) forget(app types.NamespacedName) {
	r.mu.Lock()
	delete(r.state, app)
	delete(r.written, app)
	delete(r.servers, app)
	r.mu.Unlock()
	r.orphans.set(app, "")
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
	remaining := 0
	var failed []string
	for _, key := range dest.Live.Managed(app.Name) {
		if createdNamespace(app, key) {
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
		if keptOnDelete(obj) != "" {
			continue
		}
		remaining++
		if obj.GetDeletionTimestamp() != nil {
			continue
		}
		if err := deleteObject(ctx, dest, obj, policy); err != nil {
			failed = append(failed, fmt.Sprintf("delete %s: %v", describe(key), err))
		}
	}
	if len(failed) > 0 {
		return remaining, fmt.Errorf("deleting the application's resources failed: %s", strings.Join(failed, "; "))
	}
	return remaining, nil
}

// deleteObject deletes obj, if it still is the object read, with policy.
func deleteObject(ctx context.Context, dest *Destination, obj *unstructured.Unstructured, policy metav1.DeletionPropagation) error {
	gvk := obj.GroupVersionKind()
	m, err := dest.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("find the resource of %s: %w", gvk.Kind, err)
	}
	res := dest.Client.Resource(m.Resource)
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
