package controller

import (
	"fmt"
	"path"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// maxListed bounds how many resources a condition message names.
const maxListed = 10

// neverOrphaned are objects Kubernetes creates in every namespace; as in
// Argo CD they are never reported as orphaned.
func neverOrphaned(k ResourceKey) bool {
	switch {
	case k.Group == "" && k.Kind == "ServiceAccount" && k.Name == "default":
		return true
	case k.Group == "" && k.Kind == "ConfigMap" && k.Name == "kube-root-ca.crt":
		return true
	case k.Group == "" && k.Kind == "Service" && k.Name == "kubernetes" && k.Namespace == "default":
		return true
	}
	return false
}

// orphansOf returns the orphaned resources of an app whose project
// monitors them: top-level objects in the app's destination namespace that
// no application tracks, less the built-in exceptions and the project's
// ignore list. monitored is false when the project does not ask.
func (r *Reconciler) orphansOf(app *v1alpha1.Application, proj *v1alpha1.AppProject) (orphans []ResourceKey, monitored bool) {
	if proj == nil || proj.Spec.OrphanedResources == nil || app.Spec.Destination.Namespace == "" {
		return nil, false
	}
	for _, k := range r.opts.Live.Orphans(app.Spec.Destination.Namespace) {
		if neverOrphaned(k) || orphanIgnored(proj.Spec.OrphanedResources.Ignore, k) {
			continue
		}
		orphans = append(orphans, k)
	}
	return orphans, true
}

// orphanIgnored matches k against the project's orphanedResources.ignore
// entries; group, kind and name are globs, and an empty one matches all.
func orphanIgnored(ignore []v1alpha1.OrphanedResourceKey, k ResourceKey) bool {
	for _, ig := range ignore {
		if globOrAll(ig.Group, k.Group) && globOrAll(ig.Kind, k.Kind) && globOrAll(ig.Name, k.Name) {
			return true
		}
	}
	return false
}

func globOrAll(pattern, s string) bool {
	if pattern == "" {
		return true
	}
	ok, err := path.Match(pattern, s)
	return err == nil && ok
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
