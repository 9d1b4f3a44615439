package controller

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/cache"
	"github.com/graphcd/graphcd/controller/diff"
	"github.com/graphcd/graphcd/controller/engineopts"
	"github.com/graphcd/graphcd/controller/health"
	"github.com/graphcd/graphcd/controller/project"
	"github.com/graphcd/graphcd/internal/clusters"
)

// ResourceKey identifies an object in a destination cluster.
type ResourceKey = cache.ResourceKey

// KeyOf returns the key of obj.
func KeyOf(obj *unstructured.Unstructured) ResourceKey {
	gvk := obj.GroupVersionKind()
	return ResourceKey{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// ResourceResult is the comparison of one resource.
type ResourceResult struct {
	Key     ResourceKey
	Version string
	Status  v1alpha1.SyncStatusCode
	Health  *health.Result
	// Diff is the masked unified diff when the resource is out of sync.
	Diff string
	// RequiresPruning marks a live resource that Git no longer declares.
	RequiresPruning bool
}

// Comparison is the outcome of comparing an app's desired and live state.
type Comparison struct {
	Sync      v1alpha1.SyncStatusCode
	Health    health.Status
	Resources []ResourceResult
	Images    []string
	// Warnings become the app's warning conditions (repeated, shared,
	// excluded and orphaned resources), keyed by condition type.
	Warnings map[v1alpha1.ApplicationConditionType]string
	// Orphans are the orphaned resources of the destination namespace,
	// when the app's project monitors them.
	Orphans []ResourceKey
	// Revision is the commit (or chart version) compared and SourceType
	// the source's type, for a single-source app.
	Revision   string
	SourceType v1alpha1.ApplicationSourceType
	// Revisions and SourceTypes are those of each source, by position,
	// for a multi-source app (nil for a single-source one).
	Revisions   []string
	SourceTypes []v1alpha1.ApplicationSourceType

	predictions map[ResourceKey]prediction
}

// shownRevision is the revision compared, for messages: the revision of
// a single-source app, those of a multi-source app's sources joined by
// commas.
func (c *Comparison) shownRevision() string {
	if c.Revisions == nil {
		return c.Revision
	}
	return strings.Join(c.Revisions, ",")
}

// compareInput is what compare needs; the reconciler gathers it.
type compareInput struct {
	desired []*unstructured.Unstructured
	live    map[ResourceKey]*unstructured.Unstructured
	// predicted holds server-side diff dry runs: a key found there is
	// diffed server-side against its prediction instead of desired.
	predicted map[ResourceKey]prediction
	differ    *diff.Differ
	health    *health.Engine
}

// compare diffs each desired object with its live counterpart, judges the
// health of every live object, and rolls both up to the app.
func compare(ctx context.Context, in compareInput) (*Comparison, error) {
	c := &Comparison{Sync: v1alpha1.SyncStatusCodeSynced}
	seen := map[ResourceKey]bool{}
	var healths []health.Result
	images := map[string]bool{}
	add := func(key ResourceKey, version string, desired, live *unstructured.Unstructured) error {
		target, opts := desired, []diff.CallOption(nil)
		if p, ok := in.predicted[key]; ok && desired != nil {
			target, opts = p.obj, []diff.CallOption{diff.WithServerSide(true)}
		}
		res, err := in.differ.Diff(ctx, target, live, opts...)
		if err != nil {
			return fmt.Errorf("diff %s: %w", key, err)
		}
		r := ResourceResult{Key: key, Version: version, Status: v1alpha1.SyncStatusCodeSynced}
		if res.Modified {
			r.Status = v1alpha1.SyncStatusCodeOutOfSync
			r.Diff = res.Unified()
			c.Sync = v1alpha1.SyncStatusCodeOutOfSync
		}
		if live == nil {
			r.Health = &health.Result{Status: health.StatusMissing}
		} else {
			h, err := in.health.Check(ctx, live)
			if err != nil {
				h = &health.Result{Status: health.StatusUnknown, Message: err.Error()}
			}
			r.Health = h
			collectImages(live, images)
		}
		if desired == nil {
			r.RequiresPruning = true
		}
		if r.Health != nil && desired != nil {
			healths = append(healths, *r.Health)
		}
		c.Resources = append(c.Resources, r)
		return nil
	}
	for _, d := range in.desired {
		key := KeyOf(d)
		if seen[key] {
			continue // RepeatedResourceWarning is reported by the reconciler
		}
		seen[key] = true
		if err := add(key, d.GroupVersionKind().Version, d, in.live[key]); err != nil {
			return nil, err
		}
	}
	extra := make([]ResourceKey, 0)
	for key := range in.live {
		if !seen[key] {
			extra = append(extra, key)
		}
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i].String() < extra[j].String() })
	for _, key := range extra {
		l := in.live[key]
		if err := add(key, l.GroupVersionKind().Version, nil, l); err != nil {
			return nil, err
		}
	}
	c.Health = health.Aggregate(healths)
	for im := range images {
		c.Images = append(c.Images, im)
	}
	slices.Sort(c.Images)
	sort.SliceStable(c.Resources, func(i, j int) bool { return c.Resources[i].Key.String() < c.Resources[j].Key.String() })
	return c, nil
}

// collectImages adds the container images of a workload to images.
func collectImages(obj *unstructured.Unstructured, images map[string]bool) {
	paths := [][]string{{"spec", "containers"}, {"spec", "initContainers"}, {"spec", "template", "spec", "containers"}, {"spec", "template", "spec", "initContainers"}, {"spec", "jobTemplate", "spec", "template", "spec", "containers"}}
	for _, p := range paths {
		list, _, _ := unstructured.NestedSlice(obj.Object, p...)
		for _, c := range list {
			if m, ok := c.(map[string]any); ok {
				if im, ok := m["image"].(string); ok && strings.TrimSpace(im) != "" {
					images[im] = true
				}
			}
		}
	}
}

// compareRendered renders the app's source and compares it with the live
// state of its destination cluster. It also returns what it rendered.
func (r *Reconciler) compareRendered(ctx context.Context, app *v1alpha1.Application, t *target, mode string) (*Comparison, *rendered, error) {
	eng := r.engines.Load()
	set, err := specSources(app)
	if err != nil {
		return nil, nil, err
	}
	if err := t.liveErr(); err != nil {
		return nil, nil, err
	}
	lv := t.dest.Live
	proj, err := r.project(ctx, app)
	if err != nil {
		return nil, nil, err
	}
	rules, err := r.specAllowed(app, proj, t.cluster)
	if err != nil {
		return nil, nil, err
	}
	rendered, err := r.renderSources(ctx, app, proj, lv, set, mode)
	if err != nil {
		return nil, nil, err
	}
	desired, excluded := withoutHooks(rendered.desired), rendered.excluded
	all, err := r.liveObjects(ctx, app, lv)
	if err != nil {
		return nil, nil, err
	}
	live := map[ResourceKey]*unstructured.Unstructured{}
	for key, obj := range all {
		if !isHook(obj) {
			live[key] = obj
		}
	}
	var prev map[ResourceKey]prediction
	if st := r.memory.state(types.NamespacedName{Namespace: app.Namespace, Name: app.Name}); st != nil {
		prev = st.predictions
	}
	// Server-side diff's dry runs act as the app's syncs do.
	user, accountErr := syncAccount(eng.settings, rules, app, t.cluster)
	dry := dryRun{as: user, runner: dryRunnerFor(t.dest, user, accountErr)}
	predictions, err := r.predict(ctx, lv, dry, serverSideDiff(app, eng.settings.ServerSideDiff), desired, live, prev)
	if err != nil {
		return nil, nil, err
	}
	differ, err := diff.New(diff.Options{Ignore: engineopts.IgnoreRules(eng.settings, app.Spec.IgnoreDifferences)})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: ignoreDifferences: %w", errInvalidSpec, err)
	}
	cmp, err := compare(ctx, compareInput{desired: desired, live: live, predicted: predictions, differ: differ, health: eng.health})
	if err != nil {
		return nil, nil, err
	}
	cmp.predictions = predictions
	if set.multi {
		cmp.Revisions, cmp.SourceTypes = rendered.revisions, rendered.sourceTypes
	} else {
		cmp.Revision, cmp.SourceType = rendered.revisions[0], rendered.sourceTypes[0]
	}
	cmp.Warnings = warnings(lv, r.instance(app), desired, live, rendered.repeated)
	if len(excluded) > 0 {
		cmp.Warnings[v1alpha1.ApplicationConditionExcludedResourceWarning] = "resources excluded by the resource.exclusions / resource.inclusions settings are not managed: " + strings.Join(excluded, ", ")
	}
	if msg := impersonationIgnored(eng.settings, rules); msg != "" {
		cmp.Warnings[v1alpha1.ApplicationConditionImpersonationDisabledWarning] = msg
	}
	if err := r.addOrphans(cmp, app, proj, lv); err != nil {
		return nil, nil, err
	}
	r.writeAppState(ctx, app, lv, cmp, desired, all)
	return cmp, rendered, nil
}

// specAllowed checks the app's spec against its project (proj, nil when
// it does not exist) before anything is rendered: a repository or a
// destination the project does not permit is an invalid spec, as in Argo
// CD, and its source is never fetched. It returns the project's rules.
func (r *Reconciler) specAllowed(app *v1alpha1.Application, proj *v1alpha1.AppProject, c *clusters.Cluster) (*project.Rules, error) {
	if proj == nil {
		return nil, fmt.Errorf("%w: application references project %s which does not exist", errInvalidSpec, projectOf(app))
	}
	rules, err := r.projects.Rules(proj)
	if err == nil {
		err = rules.AppAllowed(&app.Spec, projectCluster(c))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errInvalidSpec, err)
	}
	return rules, nil
}

// projectOf names the app's project; an empty one is the default.
func projectOf(app *v1alpha1.Application) string {
	if app.Spec.Project == "" {
		return project.DefaultProjectName
	}
	return app.Spec.Project
}

// project returns the app's AppProject, or nil when it does not exist yet
// (projects are enforced by the sync engine). A project that does not
// allow the app's namespace (spec.sourceNamespaces) is an invalid spec:
// the app is neither compared, synced nor deleted with its resources
// until the project allows it or the app moves, as in Argo CD.
func (r *Reconciler) project(ctx context.Context, app *v1alpha1.Application) (*v1alpha1.AppProject, error) {
	name := projectOf(app)
	var proj v1alpha1.AppProject
	ns := r.projectNamespace(app.Namespace)
	err := r.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &proj)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read project %s: %w", name, err)
	}
	rules, err := r.projects.Rules(&proj)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errInvalidSpec, err)
	}
	if err := rules.AppNamespaceAllowed(app.Namespace, ns); err != nil {
		return nil, fmt.Errorf("%w: %w", errInvalidSpec, err)
	}
	return &proj, nil
}

// describe names a resource for people: "Deployment shop/web",
// "Certificate.cert-manager.io shop/tls", "ClusterRole admin".
func describe(k ResourceKey) string {
	kind := k.Kind
	if k.Group != "" {
		kind += "." + k.Group
	}
	if k.Namespace == "" {
		return kind + " " + k.Name
	}
	return kind + " " + k.Namespace + "/" + k.Name
}

// warnings reports the resources Git declares more than once (repeated,
// which lastWins dropped from desired), and desired resources that exist
// live but are tracked to another app (Argo CD's SharedResourceWarning),
// from the cache's index.
func warnings(lv LiveState, app string, desired []*unstructured.Unstructured, live map[ResourceKey]*unstructured.Unstructured, repeated []string) map[v1alpha1.ApplicationConditionType]string {
	out := map[v1alpha1.ApplicationConditionType]string{}
	var shared []string
	for _, d := range desired {
		key := KeyOf(d)
		if _, ok := live[key]; ok {
			continue
		}
		if owner, exists := lv.Owner(key); exists && owner != "" && owner != app {
			shared = append(shared, fmt.Sprintf("%s is part of applications %s and %s", describe(key), owner, app))
		}
	}
	if len(repeated) > 0 {
		out[v1alpha1.ApplicationConditionRepeatedResourceWarning] = "resources appear more than once among the application's manifests: " + strings.Join(repeated, ", ")
	}
	if len(shared) > 0 {
		out[v1alpha1.ApplicationConditionSharedResourceWarning] = strings.Join(shared, "; ")
	}
	return out
}
