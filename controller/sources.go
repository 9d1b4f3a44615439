package controller

import (
	"context"
	"fmt"
	"regexp"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/manifests"
	"github.com/graphcd/graphcd/internal/repourl"
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

// specSources returns the sources of app's spec: spec.sources when set
// (spec.source is then ignored, as in Argo CD), else spec.source.
func specSources(app *v1alpha1.Application) (sourceSet, error) {
	if len(app.Spec.Sources) > 0 {
		set := sourceSet{multi: true, list: app.Spec.Sources}
		return set, set.validate()
	}
	if app.Spec.Source == nil {
		return sourceSet{}, fmt.Errorf("%w: spec.source or spec.sources is required", errInvalidSpec)
	}
	return sourceSet{list: []v1alpha1.ApplicationSource{*app.Spec.Source}}, nil
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

// refOnly reports whether a source only lends its files to the others
// (a ref and neither a path nor a chart): it is not rendered itself.
func refOnly(src v1alpha1.ApplicationSource) bool {
	return src.Ref != "" && src.Path == "" && src.Chart == ""
}

// renderSources renders every source of set for app with the rules of
// proj and joins their manifests in source order. The revisions of ref
// sources are resolved first, so that every source reading one reads the
// same commit, the one status reports; the others render concurrently.
// mode is the refresh mode, as render's.
func (r *Reconciler) renderSources(ctx context.Context, app *v1alpha1.Application, proj *v1alpha1.AppProject, lv LiveState, set sourceSet, mode string) (*rendered, error) {
	if !set.multi {
		out, err := r.render(ctx, app, proj, lv, set.list[0], set.revision(0), mode, nil)
		if err != nil {
			return nil, err
		}
		out.desired, out.repeated = lastWins(out.desired)
		return out, nil
	}
	n := len(set.list)
	out := &rendered{revisions: make([]string, n), sourceTypes: make([]v1alpha1.ApplicationSourceType, n)}
	var refs []manifests.Ref
	for i, src := range set.list {
		if src.Ref == "" {
			continue
		}
		r.invalidate(src.RepoURL, mode)
		rev, err := r.manifests.ResolveRevision(ctx, manifests.Request{App: app, Project: proj, Source: src, Revision: set.revision(i)})
		if err != nil {
			return nil, fmt.Errorf("%s: resolving revision: %w", sourceName(i, src), err)
		}
		out.revisions[i] = rev
		refs = append(refs, manifests.Ref{Source: src, Revision: rev})
	}
	parts := make([]*rendered, n)
	g, gctx := errgroup.WithContext(ctx)
	for i, src := range set.list {
		if refOnly(src) {
			continue
		}
		rev := set.revision(i)
		if src.Ref != "" {
			rev = out.revisions[i]
		}
		g.Go(func() error {
			p, err := r.render(gctx, app, proj, lv, src, rev, mode, refs)
			if err != nil {
				return fmt.Errorf("%s: %w", sourceName(i, src), err)
			}
			parts[i] = p
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var all []*unstructured.Unstructured
	for i, p := range parts {
		if p == nil {
			continue
		}
		all = append(all, p.desired...)
		out.excluded = append(out.excluded, p.excluded...)
		out.revisions[i], out.sourceTypes[i] = p.revisions[0], p.sourceTypes[0]
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

// sourceName names source i of a multi-source app in messages.
func sourceName(i int, src v1alpha1.ApplicationSource) string {
	what := repourl.Redact(src.RepoURL)
	switch {
	case src.Chart != "":
		what += " chart " + src.Chart
	case src.Path != "":
		what += " path " + src.Path
	}
	if src.Name != "" {
		return fmt.Sprintf("source %d (%s, %s)", i+1, src.Name, what)
	}
	return fmt.Sprintf("source %d (%s)", i+1, what)
}
