package sync

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// KindOrder is the order of kinds within a wave, as Argo CD (and Helm)
// apply them. Kinds not listed, custom resources included, come after
// all of them. Only the kind name counts, not its API group.
var KindOrder = []string{
	"Namespace",
	"NetworkPolicy",
	"ResourceQuota",
	"LimitRange",
	"PodSecurityPolicy",
	"PodDisruptionBudget",
	"ServiceAccount",
	"Secret",
	"ConfigMap",
	"StorageClass",
	"PersistentVolume",
	"PersistentVolumeClaim",
	"CustomResourceDefinition",
	"ClusterRole",
	"ClusterRoleBinding",
	"Role",
	"RoleBinding",
	"Service",
	"DaemonSet",
	"Pod",
	"ReplicationController",
	"ReplicaSet",
	"Deployment",
	"HorizontalPodAutoscaler",
	"StatefulSet",
	"Job",
	"CronJob",
	"IngressClass",
	"Ingress",
	"APIService",
}

var kindRank = func() map[string]int {
	m := make(map[string]int, len(KindOrder))
	for i, k := range KindOrder {
		m[k] = i
	}
	return m
}()

func rankOfKind(kind string) int {
	if r, ok := kindRank[kind]; ok {
		return r
	}
	return len(KindOrder)
}

// sortName is what tasks are ordered by after their kind: the name, or
// the generateName of a hook that has none.
func (t *Task) sortName() string {
	if t.Name != "" {
		return t.Name
	}
	return t.GenerateName
}

// compareTasks is Argo CD's order: phase, wave, kind, name. Within a
// phase and wave, prunes come first, as Argo CD deletes before it applies.
// The rest (kind name, group, namespace) only makes the order total;
// sorting stably keeps the input order among equal tasks.
func compareTasks(a, b *Task) int {
	if c := cmp.Compare(phaseRank[a.Phase], phaseRank[b.Phase]); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Wave, b.Wave); c != 0 {
		return c
	}
	if a.Prune != b.Prune {
		if a.Prune {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(rankOfKind(a.Kind), rankOfKind(b.Kind)); c != 0 {
		return c
	}
	return cmp.Or(
		cmp.Compare(a.sortName(), b.sortName()),
		cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Group, b.Group),
		cmp.Compare(a.Namespace, b.Namespace),
	)
}

// order sorts tasks and then moves each Namespace before the first task
// in it, and each CustomResourceDefinition before the first of its custom
// resources, when the sort put them later (an earlier wave or phase). The
// moved task takes the phase and wave of the task it now precedes.
func order(tasks []*Task) {
	slices.SortStableFunc(tasks, compareTasks)
	hoist(tasks, namespaceProvided, namespaceUsed)
	hoist(tasks, crdProvided, typeUsed)
}

// hoist moves every task providing a dependency (provides returns its key)
// before the first earlier task that uses it (uses returns the key).
// Prune tasks neither provide nor use anything.
func hoist(tasks []*Task, provides, uses func(*Task) (dependency, bool)) {
	firstUse := map[dependency]int{}
	for i, t := range tasks {
		if t.Desired == nil {
			continue
		}
		if key, ok := provides(t); ok {
			j, used := firstUse[key]
			if !used {
				continue
			}
			t.Phase, t.Wave = tasks[j].Phase, tasks[j].Wave
			copy(tasks[j+1:i+1], tasks[j:i])
			tasks[j] = t
			for k, idx := range firstUse {
				if idx >= j {
					firstUse[k] = idx + 1
				}
			}
			continue
		}
		if key, ok := uses(t); ok {
			if _, seen := firstUse[key]; !seen {
				firstUse[key] = i
			}
		}
	}
}

// dependency is what one task provides to others: a namespace (by name)
// or a custom resource type (by group and kind).
type dependency struct{ a, b string }

func namespaceProvided(t *Task) (dependency, bool) {
	return dependency{a: t.Name}, t.Group == "" && t.Kind == "Namespace"
}

func namespaceUsed(t *Task) (dependency, bool) {
	return dependency{a: t.Namespace}, t.Namespace != ""
}

func crdProvided(t *Task) (dependency, bool) {
	if t.Group != "apiextensions.k8s.io" || t.Kind != "CustomResourceDefinition" {
		return dependency{}, false
	}
	group, _, _ := unstructured.NestedString(t.Desired.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(t.Desired.Object, "spec", "names", "kind")
	return dependency{a: group, b: kind}, group != "" && kind != ""
}

func typeUsed(t *Task) (dependency, bool) {
	return dependency{a: t.Group, b: t.Kind}, true
}

// setPruneWaves gives prune tasks the waves they run in. Argo CD deletes
// in the reverse order of creation: the distinct waves of the prune tasks
// are mirrored, so the prunes of the highest wave run in the lowest of
// those waves and the other way round. Then prunes marked PruneLast (by
// the application or the live object) move to one wave after the last
// Sync-phase wave, prunes included.
func setPruneWaves(tasks []*Task) {
	var waves []int
	for _, t := range tasks {
		if t.Prune {
			waves = append(waves, t.Wave)
		}
	}
	slices.Sort(waves)
	waves = slices.Compact(waves)
	for _, t := range tasks {
		if t.Prune {
			at, _ := slices.BinarySearch(waves, t.Wave)
			t.Wave = waves[len(waves)-1-at]
		}
	}
	last := 0
	for _, t := range tasks {
		if t.Phase == PhaseSync {
			last = max(last, t.Wave)
		}
	}
	for _, t := range tasks {
		if t.Prune && t.SyncOptions.PruneLast {
			t.Wave, t.PruneLast = last+1, true
		}
	}
}
