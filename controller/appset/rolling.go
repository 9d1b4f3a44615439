package appset

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// RollingSync: the set's Applications are generated without automated
// sync, and the controller syncs them itself, step by step. A step's
// Applications are those whose labels its matchExpressions select (the
// first step that does); they are synced at most maxUpdate at once, and
// only once every Application of the earlier steps is Healthy.

// rollingSync names the strategy type.
const rollingSync = "RollingSync"

// Progress of an Application through a RollingSync, as Argo CD names it.
const (
	rolloutWaiting     = "Waiting"     // has changes to sync; its step has not reached it
	rolloutPending     = "Pending"     // the controller asked for its sync
	rolloutProgressing = "Progressing" // its sync runs, or it is not Healthy yet
	rolloutHealthy     = "Healthy"     // synced and Healthy
)

// rolloutInitiator is who the Applications' syncs name.
const rolloutInitiator = "applicationset-controller"

func isRolling(set *v1alpha1.ApplicationSet) bool {
	return set.Spec.Strategy != nil && set.Spec.Strategy.Type == rollingSync
}

// rolloutSteps checks the strategy and returns its steps.
func rolloutSteps(set *v1alpha1.ApplicationSet) ([]v1alpha1.ApplicationSetRolloutStep, error) {
	s := set.Spec.Strategy
	if s.RollingSync == nil || len(s.RollingSync.Steps) == 0 {
		return nil, fmt.Errorf("strategy %s has no steps", rollingSync)
	}
	for i, step := range s.RollingSync.Steps {
		for _, e := range step.MatchExpressions {
			if e.Operator != "In" && e.Operator != "NotIn" {
				return nil, fmt.Errorf("step %d: operator %q: RollingSync takes In and NotIn", i+1, e.Operator)
			}
		}
		if step.MaxUpdate != nil {
			if _, err := intstr.GetScaledValueFromIntOrPercent(step.MaxUpdate, 100, false); err != nil {
				return nil, fmt.Errorf("step %d: maxUpdate: %w", i+1, err)
			}
		}
	}
	return s.RollingSync.Steps, nil
}

// stepOf is the (0-based) step whose expressions all select labels, -1
// for none.
func stepOf(steps []v1alpha1.ApplicationSetRolloutStep, labels map[string]string) int {
	for i, step := range steps {
		if slices.IndexFunc(step.MatchExpressions, func(e v1alpha1.ApplicationMatchExpression) bool {
			v, ok := labels[e.Key]
			in := ok && slices.Contains(e.Values, v)
			return in != (e.Operator == "In")
		}) < 0 {
			return i
		}
	}
	return -1
}

// maxUpdate is how many of a step's n Applications may sync at once: all
// when unset, a number, or a percentage rounded down but at least one
// when above zero.
func maxUpdate(step v1alpha1.ApplicationSetRolloutStep, n int) int {
	if step.MaxUpdate == nil {
		return n
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(step.MaxUpdate, n, false)
	if err != nil {
		return 0
	}
	if v == 0 && step.MaxUpdate.Type == intstr.String && step.MaxUpdate.StrVal != "0%" {
		v = 1
	}
	return v
}

// rollout moves the set's Applications through its steps and asks for
// the syncs the steps allow; it returns each Application's progress.
func (r *Reconciler) rollout(ctx context.Context, set *v1alpha1.ApplicationSet, p *plan) []v1alpha1.ApplicationSetApplicationStatus {
	steps := set.Spec.Strategy.RollingSync.Steps
	prev := map[string]v1alpha1.ApplicationSetApplicationStatus{}
	for _, s := range set.Status.ApplicationStatus {
		prev[s.Application] = s
	}
	now := metav1.Now()
	type member struct {
		app    *v1alpha1.Application
		status v1alpha1.ApplicationSetApplicationStatus
		step   int
	}
	var members []*member
	for i := range p.owned {
		app := &p.owned[i]
		if app.DeletionTimestamp != nil {
			continue
		}
		m := &member{app: app, step: stepOf(steps, app.Labels)}
		m.status = progress(app, prev[app.Name], now)
		if m.step >= 0 {
			m.status.Step = strconv.Itoa(m.step + 1)
		} else {
			m.status.Step = ""
			if m.status.Status == rolloutWaiting {
				m.status.Message = "no step selects this Application's labels: sync it yourself"
			}
		}
		members = append(members, m)
	}
	slices.SortFunc(members, func(a, b *member) int { return cmp.Compare(a.app.Name, b.app.Name) })
	for i := range steps {
		var in []*member
		for _, m := range members {
			if m.step == i {
				in = append(in, m)
			}
		}
		busy := 0
		for _, m := range in {
			if m.status.Status == rolloutPending || m.status.Status == rolloutProgressing {
				busy++
			}
		}
		limit := maxUpdate(steps[i], len(in))
		for _, m := range in {
			if m.status.Status != rolloutWaiting || busy >= limit {
				continue
			}
			if err := r.syncApp(ctx, set, m.app); err != nil {
				m.status.Message = "sync: " + err.Error()
				continue
			}
			busy++
			m.status.Status, m.status.Message, m.status.LastTransitionTime = rolloutPending,
				fmt.Sprintf("step %d: the ApplicationSet asked for a sync", i+1), &now
		}
		if slices.ContainsFunc(in, func(m *member) bool { return m.status.Status != rolloutHealthy }) {
			for _, m := range members {
				if m.step > i && m.status.Status == rolloutWaiting {
					m.status.Message = fmt.Sprintf("waiting for the Applications of step %d to be Healthy", i+1)
				}
			}
			break
		}
	}
	out := make([]v1alpha1.ApplicationSetApplicationStatus, len(members))
	for i, m := range members {
		out[i] = m.status
	}
	return out
}

// progress is app's RollingSync progress from its previous one and its
// state now. A sync that failed at the revision the app still compares
// with keeps it Progressing, which halts the rollout at its step; a new
// revision makes it Waiting again.
func progress(app *v1alpha1.Application, prev v1alpha1.ApplicationSetApplicationStatus, now metav1.Time) v1alpha1.ApplicationSetApplicationStatus {
	synced := app.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced
	healthy := app.Status.Health.Status == v1alpha1.HealthStatusHealthy
	op := app.Status.OperationState
	running := app.Operation != nil || (op != nil && op.Phase == v1alpha1.OperationRunning)
	next := func(status, message string) v1alpha1.ApplicationSetApplicationStatus {
		out := v1alpha1.ApplicationSetApplicationStatus{Application: app.Name, Status: status, Message: message, LastTransitionTime: prev.LastTransitionTime}
		if status != prev.Status || out.LastTransitionTime == nil {
			out.LastTransitionTime = &now
		}
		out.TargetRevisions = app.Status.Sync.Revisions
		if len(out.TargetRevisions) == 0 && app.Status.Sync.Revision != "" {
			out.TargetRevisions = []string{app.Status.Sync.Revision}
		}
		return out
	}
	if prev.Status == rolloutPending && !running && !startedSince(op, prev.LastTransitionTime) {
		return next(rolloutPending, prev.Message) // the controller has not taken the sync yet
	}
	switch {
	case running:
		return next(rolloutProgressing, "the sync runs")
	case !synced && failedAt(op, app.Status.Sync.Revision) && (prev.Status == rolloutPending || prev.Status == rolloutProgressing):
		return next(rolloutProgressing, "the sync failed: "+op.Message)
	case !synced:
		return next(rolloutWaiting, "the Application has changes to sync")
	case healthy:
		return next(rolloutHealthy, "the Application is synced and Healthy")
	}
	return next(rolloutProgressing, "the Application is synced but not Healthy yet")
}

// startedSince reports whether op started at or after since: the sync
// asked for then has begun.
func startedSince(op *v1alpha1.OperationState, since *metav1.Time) bool {
	return op != nil && since != nil && !op.StartedAt.Before(since)
}

// failedAt reports whether op failed syncing revision.
func failedAt(op *v1alpha1.OperationState, revision string) bool {
	if op == nil || (op.Phase != v1alpha1.OperationFailed && op.Phase != v1alpha1.OperationError) {
		return false
	}
	return op.SyncResult == nil || op.SyncResult.Revision == "" || op.SyncResult.Revision == revision
}

// syncApp asks the controller to sync app now, as the set's automated
// sync would have (pruning when the template's automated policy prunes).
func (r *Reconciler) syncApp(ctx context.Context, set *v1alpha1.ApplicationSet, app *v1alpha1.Application) error {
	if app.Operation != nil {
		return nil
	}
	prune := false
	if sp := set.Spec.Template.Spec.SyncPolicy; sp != nil && sp.Automated != nil {
		prune = sp.Automated.Prune
	}
	next := app.DeepCopy()
	next.Operation = &v1alpha1.Operation{
		Sync:        &v1alpha1.SyncOperation{Prune: prune},
		InitiatedBy: v1alpha1.OperationInitiator{Username: rolloutInitiator, Automated: true},
		Info:        []v1alpha1.Info{{Name: "Reason", Value: "the ApplicationSet's RollingSync reached this Application's step"}},
	}
	if err := r.client.Update(ctx, next); err != nil {
		return err
	}
	r.event(set, "Synced", "asked for a sync of Application %s", app.Name)
	return nil
}
