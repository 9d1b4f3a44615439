package controller

import (
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/project"
)

// maxListed bounds how many resources a condition message names.
const maxListed = 10

// orphansOf returns the orphaned resources of an app whose project
// monitors them: top-level objects in the app's destination namespace that
// no application tracks, less those Kubernetes creates in every namespace,
// those the project ignores, and kinds the project denies (as in Argo CD).
// monitored is false when the project does not ask; warn says whether the
// project wants the warning condition.
func (r *Reconciler) orphansOf(app *v1alpha1.Application, proj *v1alpha1.AppProject, lv LiveState) (orphans []ResourceKey, monitored, warn bool, err error) {
	ns := app.Spec.Destination.Namespace
	if proj == nil || proj.Spec.OrphanedResources == nil || ns == "" {
		return nil, false, false, nil
	}
	rules, err := r.projects.Rules(proj)
	if err != nil {
		return nil, false, false, fmt.Errorf("%w: %w", errInvalidSpec, err)
	}
	for _, k := range lv.Orphans(ns) {
		if project.KnownOrphanExclusion(k.Namespace, k.Group, k.Kind, k.Name) || rules.OrphanedIgnored(k.Group, k.Kind, k.Name) ||
			rules.NamespaceResourceAllowed(k.Group, k.Kind) != nil {
			continue
		}
		orphans = append(orphans, k)
	}
	return orphans, true, rules.OrphanedResourcesWarn(), nil
}

// addOrphans adds to cmp the orphaned resources of the app's destination
// namespace, with their warning when the project asks for it, and
// watches that namespace for new ones while the project monitors it.
func (r *Reconciler) addOrphans(cmp *Comparison, app *v1alpha1.Application, proj *v1alpha1.AppProject, lv LiveState) error {
	orphans, monitored, warn, err := r.orphansOf(app, proj, lv)
	if err != nil {
		return err
	}
	cmp.Orphans = orphans
	watched := ""
	if monitored {
		watched = app.Spec.Destination.Namespace
	}
	r.orphans.set(types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, watched)
	if warn && len(orphans) > 0 {
		cmp.Warnings[v1alpha1.ApplicationConditionOrphanedResourceWarning] = orphanWarning(orphans)
	}
	return nil
}

// orphanWarning is the OrphanedResourceWarning message.
func orphanWarning(orphans []ResourceKey) string {
	names := make([]string, 0, min(len(orphans), maxListed))
	for _, k := range orphans[:min(len(orphans), maxListed)] {
		names = append(names, describe(k))
	}
	msg := fmt.Sprintf("application has %d orphaned resources: %s", len(orphans), strings.Join(names, ", "))
	if len(orphans) > maxListed {
		msg += fmt.Sprintf(" and %d more", len(orphans)-maxListed)
	}
	return msg
}

// orphanWatch remembers which apps monitor orphans in which namespace, so
// that an untracked object appearing there refreshes just those apps.
type orphanWatch struct {
	mu   sync.Mutex
	apps map[string]map[types.NamespacedName]struct{} // namespace -> apps
	ns   map[types.NamespacedName]string              // app -> namespace
}

func newOrphanWatch() *orphanWatch {
	return &orphanWatch{apps: map[string]map[types.NamespacedName]struct{}{}, ns: map[types.NamespacedName]string{}}
}

// set records that app monitors namespace ("" = nothing).
func (w *orphanWatch) set(app types.NamespacedName, namespace string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if old, ok := w.ns[app]; ok {
		if old == namespace {
			return
		}
		delete(w.apps[old], app)
		if len(w.apps[old]) == 0 {
			delete(w.apps, old)
		}
		delete(w.ns, app)
	}
	if namespace == "" {
		return
	}
	w.ns[app] = namespace
	if w.apps[namespace] == nil {
		w.apps[namespace] = map[types.NamespacedName]struct{}{}
	}
	w.apps[namespace][app] = struct{}{}
}

// watchers returns the apps that monitor namespace.
func (w *orphanWatch) watchers(namespace string) []types.NamespacedName {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]types.NamespacedName, 0, len(w.apps[namespace]))
	for app := range w.apps[namespace] {
		out = append(out, app)
	}
	return out
}
