package controller

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/cache"
	"github.com/graphcd/graphcd/controller/manifests"
	"github.com/graphcd/graphcd/reposerver"
)

// rendered is an app's desired state at one revision of each of its
// sources: what the comparison and a sync both start from.
type rendered struct {
	// desired are the manageable objects, with the destination namespace
	// filled in for namespaced kinds and the instance label set. Hooks
	// are included.
	desired []*unstructured.Unstructured
	// excluded names the objects left out by resource.exclusions /
	// resource.inclusions.
	excluded []string
	// revisions and sourceTypes are by source position: the resolved
	// revision (commit SHA or chart version) and the detected type. A
	// ref-only source has a revision and no type.
	revisions   []string
	sourceTypes []v1alpha1.ApplicationSourceType
	// repeated names the objects more than one source of a multi-source
	// app declares; desired holds the last source's.
	repeated []string
}

// render renders src for app at revision ("" means src.TargetRevision)
// with the rules of proj, the app's project as r.project returns it (see
// package manifests). mode is the refresh mode ("", "normal" or "hard").
// renderSources renders every source of an app.
func (r *Reconciler) render(ctx context.Context, app *v1alpha1.Application, proj *v1alpha1.AppProject, lv LiveState, src v1alpha1.ApplicationSource, revision, mode string) (*rendered, error) {
	r.invalidate(src.RepoURL, mode)
	kubeVersion, apiVersions := lv.Capabilities()
	res, err := r.manifests.Render(ctx, manifests.Request{
		App: app, Project: proj, Source: src, Revision: revision, NoCache: mode == v1alpha1.RefreshHard,
		KubeVersion: kubeVersion, APIVersions: apiVersions,
	})
	if err != nil {
		return nil, fmt.Errorf("rendering manifests: %w", err)
	}
	return r.place(app, lv, res)
}

// place turns one source's render into the app's desired objects: the
// destination namespace filled in for namespaced kinds (and dropped from
// cluster-scoped ones), excluded kinds left out, the tracking set.
func (r *Reconciler) place(app *v1alpha1.Application, lv LiveState, res *reposerver.ManifestResponse) (*rendered, error) {
	dest := app.Spec.Destination
	out := &rendered{
		desired:   make([]*unstructured.Unstructured, 0, len(res.Manifests)),
		revisions: []string{res.Revision}, sourceTypes: []v1alpha1.ApplicationSourceType{res.SourceType},
	}
	tracking := cache.Tracking{Method: r.opts.Settings.TrackingMethod, LabelKey: r.opts.Settings.InstanceLabelKey}
	for _, m := range res.Manifests {
		gk := m.GroupVersionKind().GroupKind()
		// As Argo CD: a kind discovery does not know yet (its CRD comes in
		// the same sync) counts as namespaced, and a cluster-scoped object
		// loses a namespace Git gave it.
		switch namespaced, err := lv.IsNamespaced(gk); {
		case err == nil && !namespaced:
			m.SetNamespace("")
		case m.GetNamespace() == "":
			m.SetNamespace(dest.Namespace)
		}
		if !lv.Watched(gk) {
			out.excluded = append(out.excluded, describe(KeyOf(m)))
			continue
		}
		tracking.Mark(m, gk, r.instance(app), dest.Namespace)
		out.desired = append(out.desired, m)
	}
	if err := outOfScope(lv, out.desired); err != nil {
		return nil, err
	}
	return out, nil
}

// invalidate forgets the resolved revisions of repoURL before a refresh
// (mode "normal" or "hard"), so it sees the newest commits, and before
// this reconciler's first render from the repository (see
// Reconciler.fresh).
func (r *Reconciler) invalidate(repoURL, mode string) {
	inv, ok := r.opts.Repo.(RevisionInvalidator)
	if !ok {
		return
	}
	if mode != "" || r.fresh.first(repoURL) {
		inv.InvalidateRevision(repoURL)
	}
}

// liveObjects reads the objects tracked to app from its cluster's cache,
// hooks included.
func (r *Reconciler) liveObjects(ctx context.Context, app *v1alpha1.Application, lv LiveState) (map[ResourceKey]*unstructured.Unstructured, error) {
	live := map[ResourceKey]*unstructured.Unstructured{}
	for _, key := range lv.Managed(r.instance(app)) {
		obj, err := lv.Get(ctx, key)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading live %s: %w", key, err)
		}
		live[key] = obj
	}
	return live, nil
}

// Hook annotations, Argo CD's and Helm's.
const (
	hookAnnotation     = "argocd.argoproj.io/hook"
	helmHookAnnotation = "helm.sh/hook"
)

// isHook reports whether obj is a sync hook, which the comparison leaves
// out as Argo CD does: hooks are run by syncs, not kept in sync. An object
// whose only hook type is Skip is not a hook (it is compared, never
// synced), and neither is one whose only Helm hook is crd-install.
func isHook(obj *unstructured.Unstructured) bool {
	ann := obj.GetAnnotations()
	if v, ok := ann[hookAnnotation]; ok {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" && t != "Skip" {
				return true
			}
		}
		return false
	}
	if v, ok := ann[helmHookAnnotation]; ok {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" && t != "crd-install" {
				return true
			}
		}
	}
	return false
}

// withoutHooks returns objs without the hooks.
func withoutHooks(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		if !isHook(o) {
			out = append(out, o)
		}
	}
	return out
}
