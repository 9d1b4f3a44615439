package sync

import (
	"fmt"
	"slices"
	"strings"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// entry is a task and the index of its recorded result (-1 when none is
// recorded yet). Task is nil for a recorded result the current plan no
// longer has a task for (a pruned object that is gone).
type entry struct {
	task *Task
	res  int
}

// Messages of results recorded before their task runs.
const (
	messagePending      = "waiting to run"
	messagePendingPrune = "waiting to prune"
)

// pending reports whether r is recorded but its task has not run.
func pending(r *v1alpha1.ResourceResult) bool { return r.HookPhase == "" }

// phaseWave is where the entry runs: as recorded once it is recorded, so
// that a plan built again later (with fewer prunes, whose mirrored waves
// then shift) keeps the order the sync started with.
func (en *entry) phaseWave(s *step) (v1alpha1.SyncPhase, int64) {
	if r := en.result(s); r != nil {
		return r.SyncPhase, r.SyncWave
	}
	return v1alpha1.SyncPhase(en.task.Phase), int64(en.task.Wave)
}

// result returns the entry's recorded result, or nil.
func (en *entry) result(s *step) *v1alpha1.ResourceResult {
	if en.res < 0 {
		return nil
	}
	return &s.st.SyncResult.Resources[en.res]
}

// ref names the entry's object, with the generated name once known.
func (en *entry) ref(s *step) string {
	if r := en.result(s); r != nil {
		return Key{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}.String()
	}
	return en.task.Ref()
}

// match pairs each task with its recorded result: same group, kind,
// namespace, sync phase and hook type, and the same name, or for a hook
// with generateName a name the API server generated from it. Each result
// pairs with one task at most, in plan order.
func (s *step) match(tasks []Task) []*entry {
	res := s.st.SyncResult.Resources
	claimed := make([]bool, len(res))
	out := make([]*entry, len(tasks))
	for i := range tasks {
		t := &tasks[i]
		en := &entry{task: t, res: -1}
		for j := range res {
			if !claimed[j] && resultOf(t, &res[j]) {
				claimed[j], en.res = true, j
				break
			}
		}
		out[i] = en
	}
	return out
}

// resultOf reports whether r is the recorded result of t.
func resultOf(t *Task, r *v1alpha1.ResourceResult) bool {
	if r.Group != t.Group || r.Kind != t.Kind || r.Namespace != t.Namespace ||
		r.SyncPhase != v1alpha1.SyncPhase(t.Phase) || r.HookType != v1alpha1.HookType(t.HookType) {
		return false
	}
	if t.Name != "" {
		return r.Name == t.Name
	}
	if r.Name == "" {
		return pending(r) // a generateName hook not created yet
	}
	return generatedFrom(r.Name, t.GenerateName)
}

// generatedFrom reports whether name is what the API server makes of
// generateName: the prefix (cut to 58 characters) and five characters
// without a dash. Since the suffix has no dash, a name never matches two
// different generateName prefixes that end in a dash.
func generatedFrom(name, generateName string) bool {
	const maxPrefix, suffix = 63 - 5, 5
	prefix := generateName
	if len(prefix) > maxPrefix {
		prefix = prefix[:maxPrefix]
	}
	rest, ok := strings.CutPrefix(name, prefix)
	return ok && len(rest) == suffix && !strings.Contains(rest, "-")
}

// record sets the result of en's task under name: it fills in the
// pending result, or appends one and links it.
func (s *step) record(en *entry, name string, code v1alpha1.ResultCode, phase v1alpha1.OperationPhase, message string) {
	if r := en.result(s); r != nil {
		r.Name, r.Status, r.HookPhase, r.Message = name, code, phase, message
		return
	}
	t := en.task
	s.st.SyncResult.Resources = append(s.st.SyncResult.Resources, v1alpha1.ResourceResult{
		Group: t.Group, Version: t.Version, Kind: t.Kind, Namespace: t.Namespace, Name: name,
		Status: code, Message: message, HookType: v1alpha1.HookType(t.HookType),
		HookPhase: phase, SyncPhase: v1alpha1.SyncPhase(t.Phase), SyncWave: int64(t.Wave),
	})
	en.res = len(s.st.SyncResult.Resources) - 1
}

// freeze records every task of the plan as pending, before the first one
// runs. From then on the recorded results are the sync's order: later
// plans only supply the objects.
func (s *step) freeze(tasks []Task) {
	for _, en := range s.match(tasks) {
		if en.res >= 0 {
			continue
		}
		msg := messagePending
		if en.task.Prune {
			msg = messagePendingPrune
		}
		s.record(en, en.task.Name, "", "", msg)
	}
}

// entries pairs the recorded results outside SyncFail with the tasks of
// the current plan, in recorded order. A task the plan gained since it
// was frozen is recorded as pending now. A pending result without a task
// is settled: a prune whose object is already gone is pruned, anything
// else is no longer needed.
func (s *step) entries(tasks []Task) []*entry {
	s.freeze(tasks)
	byResult := map[int]*Task{}
	for _, en := range s.match(tasks) {
		byResult[en.res] = en.task
	}
	var out []*entry
	for i := range s.st.SyncResult.Resources {
		r := &s.st.SyncResult.Resources[i]
		if r.SyncPhase == v1alpha1.SyncPhaseSyncFail {
			continue
		}
		t := byResult[i]
		if t == nil && pending(r) {
			if r.Message == messagePendingPrune {
				r.Status, r.HookPhase, r.Message = v1alpha1.ResultCodePruned, v1alpha1.OperationSucceeded, "pruned (already gone)"
			} else {
				r.Status, r.HookPhase, r.Message = v1alpha1.ResultCodeSynced, v1alpha1.OperationSucceeded, "no longer to be applied"
			}
		}
		out = append(out, &entry{task: t, res: i})
	}
	slices.SortStableFunc(out, func(a, b *entry) int {
		pa, wa := a.phaseWave(s)
		pb, wb := b.phaseWave(s)
		if c := phaseRank[Phase(pa)] - phaseRank[Phase(pb)]; c != 0 {
			return c
		}
		return int(wa - wb)
	})
	return out
}

// resultFailed reports whether r records a failure.
func resultFailed(r *v1alpha1.ResourceResult) bool {
	return r.Status == v1alpha1.ResultCodeSyncFailed ||
		r.HookPhase == v1alpha1.OperationFailed || r.HookPhase == v1alpha1.OperationError
}

// failed reports whether a task outside SyncFail failed: the sync then
// stops starting tasks and runs its SyncFail hooks.
func (s *step) failed() bool {
	return slices.ContainsFunc(s.st.SyncResult.Resources, func(r v1alpha1.ResourceResult) bool {
		return r.SyncPhase != v1alpha1.SyncPhaseSyncFail && resultFailed(&r)
	})
}

func (s *step) isFailed(en *entry) bool {
	r := en.result(s)
	return r != nil && resultFailed(r)
}

func (s *step) groupFailed(g []*entry) bool { return slices.ContainsFunc(g, s.isFailed) }

// running reports whether en is a hook that has not finished.
func (s *step) running(en *entry) bool {
	r := en.result(s)
	return r != nil && r.HookType != "" && r.HookPhase == v1alpha1.OperationRunning
}

func firstRunning(s *step, g []*entry) *entry {
	for _, en := range g {
		if s.running(en) {
			return en
		}
	}
	return nil
}

func (s *step) notStarted(g []*entry) []*entry {
	var out []*entry
	for _, en := range g {
		if r := en.result(s); (r == nil || pending(r)) && en.task != nil {
			out = append(out, en)
		}
	}
	return out
}

// groupEntries splits entries (in plan order) into runs of one phase and
// wave.
func (s *step) groupEntries(entries []*entry) [][]*entry {
	var groups [][]*entry
	for i, en := range entries {
		p, w := en.phaseWave(s)
		if i > 0 {
			pp, pw := entries[i-1].phaseWave(s)
			if p == pp && w == pw {
				groups[len(groups)-1] = append(groups[len(groups)-1], en)
				continue
			}
		}
		groups = append(groups, []*entry{en})
	}
	return groups
}

// groupKey names a group as "Phase wave N".
func (s *step) groupKey(g []*entry) string {
	p, w := g[0].phaseWave(s)
	return fmt.Sprintf("%s wave %d", p, w)
}

// failureMessage sums up the failed results outside SyncFail.
func (s *step) failureMessage() string {
	var parts []string
	for _, r := range s.st.SyncResult.Resources {
		if r.SyncPhase == v1alpha1.SyncPhaseSyncFail || !resultFailed(&r) {
			continue
		}
		what := Key{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}.String()
		if r.HookType != "" {
			what = string(r.HookType) + " hook " + what
		}
		parts = append(parts, what+": "+r.Message)
	}
	return "one or more synchronization tasks completed unsuccessfully: " + strings.Join(parts, "; ")
}

// syncFailOutcome says how the SyncFail hooks went, for the final
// message.
func (s *step) syncFailOutcome(tasks []Task) string {
	if len(tasks) == 0 {
		return ""
	}
	var failed []string
	for _, r := range s.st.SyncResult.Resources {
		if r.SyncPhase == v1alpha1.SyncPhaseSyncFail && resultFailed(&r) {
			failed = append(failed, Key{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}.String()+": "+r.Message)
		}
	}
	if len(failed) == 0 {
		return " (SyncFail hooks ran)"
	}
	return " (SyncFail hooks failed: " + strings.Join(failed, "; ") + ")"
}

// describe names an object the way kubectl prints it:
// "deployment.apps/backend", "service/backend".
func describe(group, kind, name string) string {
	k := strings.ToLower(kind)
	if group != "" {
		k += "." + group
	}
	return k + "/" + name
}
