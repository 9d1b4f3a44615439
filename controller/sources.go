package controller

import (
	"context"
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/manifests"
)

// sourceSet is what a comparison or a sync renders: an application's one
// source (spec.source) or its sources (spec.sources), each at a revision.
type sourceSet struct {
	// multi is set for spec.sources, even with one entry: status then
	// reports revisions and source types by position, as Argo CD does.
	multi bool
	list  []v1alpha1.ApplicationSource
	// revisions are by position; a missing or "" entry renders the
	// source's targetRevision.
	revisions []string
}

// refName is what a source's ref may be: value files name it as
// $ref/path, so it cannot hold a "/" or a "$".
var refName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// specSources returns the sources of app's spec: with spec.sourceHydrator
// its sync source (see syncSource; spec.source and spec.sources are then
// ignored, as in Argo CD), else spec.sources when set (spec.source is then
// ignored), else spec.source.
func specSources(app *v1alpha1.Application) (sourceSet, error) {
	if sh := app.Spec.SourceHydrator; sh != nil {
		if err := validateHydrator(sh); err != nil {
			return sourceSet{}, err
		}
	}
	list, multi := app.Spec.EffectiveSources()
	if len(list) == 0 {
		return sourceSet{}, fmt.Errorf("%w: spec.source or spec.sources is required", errInvalidSpec)
	}
	set := sourceSet{multi: multi, list: list}
	return set, set.validate()
}

// validate checks what rendering a multi-source set needs: refs that
// value files can name, each naming one source.
func (s sourceSet) validate() error {
	seen := map[string]bool{}
	for i, src := range s.list {
		if src.Ref == "" {
			continue
		}
		if !refName.MatchString(src.Ref) {
			return fmt.Errorf("%w: sources[%d]: ref %q may hold only letters, digits, '_', '-' and '.'", errInvalidSpec, i, src.Ref)
		}
		if seen[src.Ref] {
			return fmt.Errorf("%w: sources[%d]: ref %q names more than one source", errInvalidSpec, i, src.Ref)
		}
		seen[src.Ref] = true
	}
	return nil
}

// revision is the revision to render source i at; "" is its
// targetRevision.
func (s sourceSet) revision(i int) string {
	if i < len(s.revisions) {
		return s.revisions[i]
	}
	return ""
}

// renderSources renders every source of set for app with the rules of
// proj (manifests.Renderer.RenderApp: refs resolved once, the others
// concurrently) and joins their manifests in source order; of a resource
// declared more than once the last declaration wins. mode is the refresh
// mode, as render's.
func (r *Reconciler) renderSources(ctx context.Context, app *v1alpha1.Application, proj *v1alpha1.AppProject, lv LiveState, set sourceSet, mode string) (*rendered, error) {
	if !set.multi {
		out, err := r.render(ctx, app, proj, lv, set.list[0], set.revision(0), mode)
		if err != nil {
			return nil, err
		}
		out.desired, out.repeated = lastWins(out.desired)
		return out, nil
	}
	for _, src := range set.list {
		r.invalidate(src.RepoURL, mode)
	}
	kubeVersion, apiVersions := lv.Capabilities()
	res, err := r.manifests.RenderApp(ctx, manifests.AppRequest{
		App: app, Project: proj, Sources: set.list, Revisions: set.revisions, NoCache: mode == v1alpha1.RefreshHard,
		KubeVersion: kubeVersion, APIVersions: apiVersions,
	})
	if err != nil {
		return nil, fmt.Errorf("rendering manifests: %w", err)
	}
	out := &rendered{revisions: res.Revisions, sourceTypes: make([]v1alpha1.ApplicationSourceType, len(set.list))}
	var all []*unstructured.Unstructured
	for i, one := range res.Sources {
		if one == nil {
			continue
		}
		p, err := r.place(app, lv, one)
		if err != nil {
			return nil, err
		}
		all = append(all, p.desired...)
		out.excluded = append(out.excluded, p.excluded...)
		out.sourceTypes[i] = one.SourceType
	}
	out.desired, out.repeated = lastWins(all)
	return out, nil
}

// lastWins keeps, of the objects declared more than once with the same
// key, the last one, as Argo CD does, and names the keys it dropped
// objects of. Objects keep the order of the ones kept; objects without a
// name (hooks with generateName) are each their own.
func lastWins(objs []*unstructured.Unstructured) (kept []*unstructured.Unstructured, repeated []string) {
	last := make(map[ResourceKey]int, len(objs))
	unnamed := 0
	for i, o := range objs {
		if o.GetName() == "" {
			unnamed++
			continue
		}
		last[KeyOf(o)] = i
	}
	if len(last)+unnamed == len(objs) {
		return objs, nil
	}
	kept = make([]*unstructured.Unstructured, 0, len(last)+unnamed)
	seen := map[ResourceKey]bool{}
	for i, o := range objs {
		key := KeyOf(o)
		if o.GetName() == "" || last[key] == i {
			kept = append(kept, o)
		} else if !seen[key] {
			seen[key] = true
			repeated = append(repeated, describe(key))
		}
	}
	return kept, repeated
}
