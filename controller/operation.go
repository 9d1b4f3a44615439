package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/diff"
	"github.com/graphcd/graphcd/controller/engineopts"
	"github.com/graphcd/graphcd/controller/manifests"
	"github.com/graphcd/graphcd/controller/project"
	appsync "github.com/graphcd/graphcd/controller/sync"
	"github.com/graphcd/graphcd/internal/clusters"
	"github.com/graphcd/graphcd/internal/settings"
	"github.com/graphcd/graphcd/internal/tracing"
)

// Kubernetes Event reasons of operations.
const (
	ReasonOperationStarted   = "OperationStarted"
	ReasonOperationCompleted = "OperationCompleted"
)

// afterOperation is how soon an app is compared again after its operation
// ended. The sync waits for the cluster cache to see its writes before the
// comparison in the same reconcile, but for at most sync.FollowTimeout
// (a pruned object with foreground deletion may take longer to go).
const afterOperation = 2 * time.Second

// windowRecheck is how often a sync blocked by a sync window looks again.
const windowRecheck = 5 * time.Second

// MessageBlockedByWindow starts the message of a sync that waits for a
// sync window, as Argo CD words it.
const MessageBlockedByWindow = "Sync operation blocked by sync window"

// opOutcome is what working on an operation did in one reconcile.
type opOutcome struct {
	// ran is true when an operation was worked on.
	ran bool
	// finished is true when the operation ended: spec.operation is
	// cleared.
	finished bool
	requeue  time.Duration
}

// inProgress reports whether st is an operation that has not ended
// (Running, which includes waiting for a retry, or Terminating).
func inProgress(st *v1alpha1.OperationState) bool {
	return st != nil && (st.Phase == v1alpha1.OperationRunning || st.Phase == v1alpha1.OperationTerminating)
}

// operate starts the requested operation or continues the one in
// progress by one step, writing its progress into status. Everything the
// operation did is in status.operationState, so a controller that
// restarts continues from there.
func (r *Reconciler) operate(ctx context.Context, app *v1alpha1.Application, t *target, status *v1alpha1.ApplicationStatus, now metav1.Time) opOutcome {
	st := status.OperationState
	if !inProgress(st) {
		if app.Operation == nil {
			return opOutcome{}
		}
		r.startOperation(app, app.Operation, status, now)
		return opOutcome{ran: true, requeue: time.Millisecond}
	}
	syncCtx, span := startSyncSpan(ctx, app, st)
	next, res, terminal := r.runSync(syncCtx, app, t, st, now)
	endSyncSpan(span, next)
	status.OperationState = next
	if !res.Done {
		return opOutcome{ran: true, requeue: res.RequeueAfter}
	}
	if next.Phase != v1alpha1.OperationSucceeded && !terminal {
		if retry := retryOf(app, next); retry.Limit < 0 || next.RetryCount < retry.Limit {
			wait := retryBackoff(retry.Backoff, next.RetryCount)
			next.RetryCount++
			next.Phase = v1alpha1.OperationRunning
			next.Message = fmt.Sprintf("retrying attempt #%d at %s: %s", next.RetryCount, now.Add(wait).UTC().Format(time.RFC3339), next.Message)
			return opOutcome{ran: true, requeue: wait}
		}
	}
	// A sync of local manifests deploys no revision a rollback could
	// go back to.
	if next.Phase == v1alpha1.OperationSucceeded && next.Operation.Sync != nil && !next.Operation.Sync.DryRun && !localSync(next) {
		addHistory(status, app, next)
	}
	r.operationEvent(app, next, ReasonOperationCompleted, EventOperationCompleted)
	return opOutcome{ran: true, finished: true, requeue: time.Second}
}

// startOperation records op in status as Running, not yet stepped. The
// operation is saved so before its first step: the hooks a step creates
// are labelled with the operation's identity, which derives from
// startedAt, so a controller that stops right after creating one finds it
// again (see runIdentity). A requested operation is saved by a reconcile
// of its own; an automated sync with the comparison that decided it.
func (r *Reconciler) startOperation(app *v1alpha1.Application, op *v1alpha1.Operation, status *v1alpha1.ApplicationStatus, now metav1.Time) {
	st := &v1alpha1.OperationState{Operation: *op.DeepCopy(), Phase: v1alpha1.OperationRunning, StartedAt: now}
	r.operationEvent(app, st, ReasonOperationStarted, EventOperationStarted)
	status.OperationState = st
}

// runSync does one step of the sync in st. terminal is true when the
// operation ended in a way a retry cannot fix (a project violation, a
// bad request, a terminate, a destination that names no cluster).
func (r *Reconciler) runSync(ctx context.Context, app *v1alpha1.Application, t *target, st *v1alpha1.OperationState, now metav1.Time) (_ *v1alpha1.OperationState, _ appsync.Result, terminal bool) {
	if err := t.liveErr(); err != nil {
		next, res := endOperation(st, v1alpha1.OperationError, err.Error(), now)
		return next, res, t.resolveErr != nil
	}
	op := st.Operation.Sync
	if op == nil {
		next, res := endOperation(st, v1alpha1.OperationError, "the operation requests nothing: only sync operations are supported", now)
		return next, res, true
	}
	st, res, held, terminal := r.awaitApproval(ctx, app, st, now)
	if held {
		return st, res, terminal
	}
	if st.Phase == v1alpha1.OperationRunning && st.FinishedAt != nil {
		// A failed attempt waiting for its retry.
		at := st.FinishedAt.Add(retryBackoff(retryOf(app, st).Backoff, st.RetryCount-1))
		if now.Time.Before(at) {
			return st, appsync.Result{RequeueAfter: at.Sub(now.Time)}, false
		}
		st = st.DeepCopy()
		st.FinishedAt, st.Message, st.SyncResult = nil, "", nil
	}
	runID := runIdentity(app, st)
	if st.Phase == v1alpha1.OperationTerminating {
		// Running hooks are deleted as the sync created them: as the
		// app's service account when impersonation is on.
		exec, err := r.executorOf(ctx, app, t)
		if err != nil {
			next, res := endOperation(st, v1alpha1.OperationError, err.Error(), now)
			return next, res, true
		}
		next, res, err := exec.Step(ctx, appsync.Run{ID: runID, Plan: &appsync.Plan{}, Terminate: true}, st)
		return next, r.stepResult(app, res, err), true
	}
	return r.stepSync(ctx, app, t, st, runID, now)
}

// executorFor returns the sync executor of the app's destination that
// acts as the app's sync account (see syncAccount): graphcd itself, or
// the service account rules (its project) names when impersonation is on.
func (r *Reconciler) executorFor(app *v1alpha1.Application, t *target, rules *project.Rules) (*appsync.Executor, error) {
	eng := r.engines.Load()
	user, err := syncAccount(eng.settings, rules, app, t.cluster)
	if err != nil {
		return nil, err
	}
	return eng.executor(t.dest, user)
}

// accountOf is syncAccount for callers without the project's rules at
// hand: it reads the project only when impersonation is on in s.
func (r *Reconciler) accountOf(ctx context.Context, s *settings.Settings, app *v1alpha1.Application, c *clusters.Cluster) (string, error) {
	if !s.SyncImpersonation {
		return "", nil
	}
	rules, err := r.rulesOf(ctx, app)
	if err != nil {
		return "", err
	}
	return syncAccount(s, rules, app, c)
}

// executorOf is executorFor for callers without the project's rules at
// hand; the account and the executor come from the same settings.
func (r *Reconciler) executorOf(ctx context.Context, app *v1alpha1.Application, t *target) (*appsync.Executor, error) {
	eng := r.engines.Load()
	user, err := r.accountOf(ctx, eng.settings, app, t.cluster)
	if err != nil {
		return nil, err
	}
	return eng.executor(t.dest, user)
}

// stepSync checks the sync in st against the app's project and sync
// windows, plans it against the live state, and takes its next step as
// run runID. terminal is as runSync's.
func (r *Reconciler) stepSync(ctx context.Context, app *v1alpha1.Application, t *target, st *v1alpha1.OperationState, runID string, now metav1.Time) (_ *v1alpha1.OperationState, _ appsync.Result, terminal bool) {
	set, err := syncSources(app, st)
	if err != nil {
		next, res := endOperation(st, v1alpha1.OperationError, err.Error(), now)
		return next, res, true
	}
	rules, err := r.operationRules(ctx, app, t.cluster, set)
	if err != nil {
		phase := v1alpha1.OperationFailed
		var denied *project.DeniedError
		if !errors.As(err, &denied) {
			phase = v1alpha1.OperationError
		}
		next, res := endOperation(st, phase, err.Error(), now)
		return next, res, true
	}
	// Nothing is applied when the sync has no account to act as: Argo
	// CD ends such an operation in Error.
	exec, err := r.executorFor(app, t, rules)
	if err != nil {
		next, res := endOperation(st, v1alpha1.OperationError, err.Error(), now)
		return next, res, true
	}
	started := st.SyncResult != nil && len(st.SyncResult.Resources) > 0
	if !started {
		if err := rules.SyncAllowed(windowTarget(app, t.cluster), now.Time, !st.Operation.InitiatedBy.Automated); err != nil {
			next := st.DeepCopy()
			next.Message = MessageBlockedByWindow + ": " + err.Error()
			return next, appsync.Result{RequeueAfter: windowRecheck}, false
		}
	}
	plan, resolved, err := r.planSync(ctx, app, t.dest.Live, st, set)
	if err != nil {
		if manifests.SignatureRefused(err) || scopeRefused(err) {
			// Retrying renders the same refusal.
			next, res := endOperation(st, v1alpha1.OperationFailed, err.Error(), now)
			return next, res, true
		}
		next, res := endOperation(st, v1alpha1.OperationError, err.Error(), now)
		return next, res, false
	}
	// Resources the project refuses fail the sync like tasks that are
	// not valid, each with its SyncFailed result; a retry cannot help.
	violations := projectViolations(rules, t.cluster, plan)
	plan.Errors = append(plan.Errors, violations...)
	if !started && len(violations) == 0 {
		if msg := sharedResources(r.instance(app), t.dest.Live, plan); msg != "" {
			next, res := endOperation(st, v1alpha1.OperationFailed, msg, now)
			return next, res, true
		}
	}
	op := st.Operation.Sync
	run := appsync.Run{ID: runID, Plan: plan, DryRun: op.DryRun, Force: strategyForce(op.SyncStrategy)}
	next, res, err := exec.Step(ctx, run, st)
	if next.SyncResult != nil {
		if set.multi {
			next.SyncResult.Revisions, next.SyncResult.Sources = resolved, set.list
		} else {
			next.SyncResult.Revision, next.SyncResult.Source = resolved[0], set.list[0]
		}
	}
	return next, r.stepResult(app, res, err), len(violations) > 0
}

// runIdentity names one attempt of the operation in st: the app's UID,
// when the operation started (to the second, as status stores it) and
// the retry. Every hook the attempt creates carries it in the
// graphcd.io/operation label.
func runIdentity(app *v1alpha1.Application, st *v1alpha1.OperationState) string {
	return fmt.Sprintf("%s.%d.%d", app.UID, st.StartedAt.Unix(), st.RetryCount)
}

// stepResult logs a step's error (worth a retry; the state is saved all
// the same) and makes sure a step that is not done comes back.
func (r *Reconciler) stepResult(app *v1alpha1.Application, res appsync.Result, err error) appsync.Result {
	if err != nil {
		r.log.Warn("sync step", "app", app.Namespace+"/"+app.Name, "err", err)
	}
	if !res.Done && res.RequeueAfter <= 0 {
		res.RequeueAfter = appsync.DefaultPollInterval
	}
	return res
}

// endOperation ends st in phase with message.
func endOperation(st *v1alpha1.OperationState, phase v1alpha1.OperationPhase, message string, now metav1.Time) (*v1alpha1.OperationState, appsync.Result) {
	next := st.DeepCopy()
	next.Phase, next.Message, next.FinishedAt = phase, message, &now
	return next, appsync.Result{Done: true}
}

// syncSources returns what the sync in st renders: the operation's
// sources (a rollback's) or source, else the app's, at the revisions the
// sync resolved first when it has started, else those it asks for.
func syncSources(app *v1alpha1.Application, st *v1alpha1.OperationState) (sourceSet, error) {
	op := st.Operation.Sync
	var set sourceSet
	switch {
	case len(op.Sources) > 0:
		set = sourceSet{multi: true, list: op.Sources}
		if err := set.validate(); err != nil {
			return sourceSet{}, err
		}
	case op.Source != nil:
		set = sourceSet{list: []v1alpha1.ApplicationSource{*op.Source}}
	default:
		var err error
		if set, err = specSources(app); err != nil {
			return sourceSet{}, err
		}
	}
	if set.multi && op.Revision != "" && len(op.Revisions) == 0 {
		return sourceSet{}, fmt.Errorf("sync.revision %q names no source: a multi-source application is synced to sync.revisions, one per source", op.Revision)
	}
	res := st.SyncResult
	switch {
	case set.multi && res != nil && len(res.Revisions) > 0:
		set.revisions = res.Revisions
	case set.multi:
		set.revisions = op.Revisions
	case res != nil && res.Revision != "":
		set.revisions = []string{res.Revision}
	default:
		set.revisions = []string{op.Revision}
	}
	return set, nil
}

// operationRules returns the compiled rules of the app's project after
// checking the source repositories and the destination (cluster c, and
// the project its Secret scopes it to) against them.
func (r *Reconciler) operationRules(ctx context.Context, app *v1alpha1.Application, c *clusters.Cluster, set sourceSet) (*project.Rules, error) {
	rules, err := r.rulesOf(ctx, app)
	if err != nil {
		return nil, err
	}
	for _, src := range set.list {
		if err := rules.SourceAllowed(src.RepoURL); err != nil {
			return nil, err
		}
	}
	if err := rules.TargetAllowed(projectCluster(c), app.Spec.Destination.Namespace); err != nil {
		return nil, err
	}
	return rules, nil
}

// rulesOf returns the compiled rules of the app's project; a project
// that does not exist is an error.
func (r *Reconciler) rulesOf(ctx context.Context, app *v1alpha1.Application) (*project.Rules, error) {
	proj, err := r.project(ctx, app)
	if err != nil {
		return nil, err
	}
	if proj == nil {
		return nil, fmt.Errorf("application references project %s which does not exist", projectOf(app))
	}
	return r.projects.Rules(proj)
}

// windowTarget is what the project's sync windows select the app by; c
// is its destination cluster.
func windowTarget(app *v1alpha1.Application, c *clusters.Cluster) project.WindowTarget {
	return project.WindowTarget{
		AppName: app.Name, AppNamespace: app.Namespace, Server: c.Server,
		ClusterName: c.Name, Namespace: app.Spec.Destination.Namespace,
	}
}

// projectViolations checks every object the plan would create, change or
// delete in cluster c against the project, and returns an error for each
// one it refuses.
func projectViolations(rules *project.Rules, c *clusters.Cluster, plan *appsync.Plan) []*appsync.ResourceError {
	server, name := c.Server, c.Name
	var out []*appsync.ResourceError
	for _, tasks := range [][]appsync.Task{plan.Tasks, plan.SyncFail} {
		for i := range tasks {
			t := &tasks[i]
			if err := rules.ResourceAllowed(t.Group, t.Kind, t.Namespace, server, name); err != nil {
				out = append(out, &appsync.ResourceError{Ref: t.Ref(), Key: t.Key(), Version: t.Version, Live: t.Prune, Err: err})
			}
		}
	}
	return out
}

// planSync renders the sync's sources (or takes its local manifests, see
// placeLocal) and plans them against the live objects; it also returns
// the resolved revision of each source.
func (r *Reconciler) planSync(ctx context.Context, app *v1alpha1.Application, lv LiveState, st *v1alpha1.OperationState, set sourceSet) (*appsync.Plan, []string, error) {
	op := st.Operation.Sync
	proj, err := r.project(ctx, app)
	if err != nil {
		return nil, nil, err
	}
	var rendered *rendered
	if localSync(st) {
		rendered, err = r.placeLocal(app, lv, op.Manifests, set)
	} else {
		rendered, err = r.renderSources(ctx, app, proj, lv, set, "")
	}
	if err != nil {
		return nil, nil, err
	}
	live, err := r.liveObjects(ctx, app, lv)
	if err != nil {
		return nil, nil, err
	}
	liveList := make([]*unstructured.Unstructured, 0, len(live))
	for _, obj := range live {
		liveList = append(liveList, obj)
	}
	opts := appsync.Options{
		Namespace: app.Spec.Destination.Namespace,
		Prune:     op.Prune,
		Resources: op.Resources,
		SkipHooks: op.SyncStrategy != nil && op.SyncStrategy.Apply != nil,
		ClusterScoped: func(group, kind string) bool {
			namespaced, err := lv.IsNamespaced(schema.GroupKind{Group: group, Kind: kind})
			return err == nil && !namespaced
		},
		OutOfSync:     r.outOfSync(app),
		PruneApproved: appsync.DeletionApproved(app.Annotations, st.StartedAt.Time),
	}
	if p := app.Spec.SyncPolicy; p != nil {
		opts.SyncOptions = append(opts.SyncOptions, p.SyncOptions...)
		opts.ManagedNamespaceMetadata = p.ManagedNamespaceMetadata
	}
	opts.SyncOptions = append(opts.SyncOptions, op.SyncOptions...)
	if localSync(st) {
		opts.OutOfSync = nil // the last comparison was with Git, not with these manifests
	}
	plan, err := appsync.Build(rendered.desired, liveList, opts)
	if err != nil {
		return nil, nil, err
	}
	if err := r.respectIgnored(app, plan); err != nil {
		return nil, nil, err
	}
	return plan, rendered.revisions, nil
}

// outOfSync answers ApplyOutOfSyncOnly from the app's last comparison;
// nil (everything out of sync) when there is none.
func (r *Reconciler) outOfSync(app *v1alpha1.Application) func(appsync.Key) bool {
	st := r.memory.state(client.ObjectKeyFromObject(app))
	if st == nil || st.Comparison == nil {
		return nil
	}
	synced := map[appsync.Key]bool{}
	for _, res := range st.Comparison.Resources {
		if res.Status == v1alpha1.SyncStatusCodeSynced {
			synced[appsync.Key{Group: res.Key.Group, Kind: res.Key.Kind, Namespace: res.Key.Namespace, Name: res.Key.Name}] = true
		}
	}
	return func(k appsync.Key) bool { return !synced[k] }
}

// strategyForce is the force flag of either strategy.
func strategyForce(s *v1alpha1.SyncStrategy) bool {
	switch {
	case s == nil:
		return false
	case s.Apply != nil:
		return s.Apply.Force
	case s.Hook != nil:
		return s.Hook.Force
	}
	return false
}

// Defaults of a retry backoff, as Argo CD's.
const (
	defaultRetryDuration = 5 * time.Second
	defaultRetryFactor   = 2
	defaultRetryMax      = 3 * time.Minute
)

// retryOf is the retry strategy of st's operation, or the app's
// spec.syncPolicy.retry when the operation names none.
func retryOf(app *v1alpha1.Application, st *v1alpha1.OperationState) v1alpha1.RetryStrategy {
	r := st.Operation.Retry
	if r.Limit == 0 && r.Backoff == nil && app.Spec.SyncPolicy != nil && app.Spec.SyncPolicy.Retry != nil {
		r = *app.Spec.SyncPolicy.Retry
	}
	return r
}

// retryBackoff is the wait before retry number attempt+1 (attempt counts
// from 0): duration * factor^attempt, at most maxDuration. Durations that
// do not parse take their defaults.
func retryBackoff(b *v1alpha1.Backoff, attempt int64) time.Duration {
	d, factor, limit := defaultRetryDuration, int64(defaultRetryFactor), defaultRetryMax
	if b != nil {
		if v, ok := parseBackoffDuration(b.Duration); ok {
			d = v
		}
		if b.Factor != nil && *b.Factor > 0 {
			factor = *b.Factor
		}
		if v, ok := parseBackoffDuration(b.MaxDuration); ok {
			limit = v
		}
	}
	for range max(attempt, 0) {
		if d >= limit {
			break
		}
		d *= time.Duration(factor)
	}
	return min(d, limit)
}

// parseBackoffDuration reads "5" (seconds) or a Go duration ("5s", "2m").
func parseBackoffDuration(s string) (time.Duration, bool) {
	if s == "" {
		return 0, false
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return d, true
	}
	if d, err := time.ParseDuration(s + "s"); err == nil && d >= 0 {
		return d, true
	}
	return 0, false
}

// clearOperation removes the finished operation from the Application, as
// Argo CD does, so a new one can be requested, and the approvals given to
// it (they never count for another), and the traceparent of the request
// that asked for it. The optimistic lock keeps an
// operation written meanwhile from being lost.
func (r *Reconciler) clearOperation(ctx context.Context, app *v1alpha1.Application) error {
	_, approved := app.Annotations[v1alpha1.SyncApprovalsAnnotation]
	_, traced := app.Annotations[tracing.TraceparentAnnotation]
	if app.Operation == nil && !approved && !traced {
		return nil
	}
	patch := client.MergeFromWithOptions(app.DeepCopy(), client.MergeFromWithOptimisticLock{})
	app.Operation = nil
	delete(app.Annotations, v1alpha1.SyncApprovalsAnnotation)
	delete(app.Annotations, tracing.TraceparentAnnotation)
	if err := r.client.Patch(ctx, app, patch); err != nil {
		return fmt.Errorf("clear the operation of %s/%s: %w", app.Namespace, app.Name, err)
	}
	return nil
}

// operationEvent records a Kubernetes Event and publishes an event for an
// operation that started or completed.
func (r *Reconciler) operationEvent(app *v1alpha1.Application, st *v1alpha1.OperationState, reason string, typ EventType) {
	r.broker.publish(Event{
		App: types.NamespacedName{Namespace: app.Namespace, Name: app.Name}, Type: typ,
		Sync: app.Status.Sync.Status, Health: app.Status.Health.Status, Revision: app.Status.Sync.Revision,
		Phase: st.Phase, Message: st.Message,
	})
	if r.opts.Recorder == nil {
		return
	}
	kind, note := corev1.EventTypeNormal, "sync started"
	if by := initiator(st.Operation.InitiatedBy); by != "" {
		note += " by " + by
	}
	if reason == ReasonOperationCompleted {
		note = fmt.Sprintf("sync %s: %s", strings.ToLower(string(st.Phase)), st.Message)
		if st.Phase != v1alpha1.OperationSucceeded {
			kind = corev1.EventTypeWarning
		}
	}
	r.opts.Recorder.Eventf(app, nil, kind, reason, "Sync", "%s", note)
}

// initiator names who started an operation.
func initiator(by v1alpha1.OperationInitiator) string {
	switch {
	case by.Automated:
		return "automated sync policy"
	case by.Username != "":
		return by.Username
	}
	return ""
}

// sharedResources returns, when FailOnSharedResource is set, the message
// naming the first desired object that exists live and is tracked to
// another application; "" when there is none.
func sharedResources(instance string, lv LiveState, plan *appsync.Plan) string {
	for i := range plan.Tasks {
		t := &plan.Tasks[i]
		if !t.SyncOptions.FailOnSharedResource || t.Prune || t.IsHook() || t.CreatesNamespace || t.Name == "" {
			continue
		}
		key := ResourceKey{Group: t.Group, Kind: t.Kind, Namespace: t.Namespace, Name: t.Name}
		if owner, exists := lv.Owner(key); exists && owner != "" && owner != instance {
			return fmt.Sprintf("Shared resource found: %s is already managed by application %s", describe(key), owner)
		}
	}
	return ""
}

// respectIgnored gives every planned object that exists live and has
// RespectIgnoreDifferences set the live values of the fields the app's
// ignoreDifferences and the system-level ignore rules cover, so the sync
// leaves them as they are.
func (r *Reconciler) respectIgnored(app *v1alpha1.Application, plan *appsync.Plan) error {
	var differ *diff.Differ
	for i := range plan.Tasks {
		t := &plan.Tasks[i]
		if !t.SyncOptions.RespectIgnoreDifferences || t.Prune || t.Desired == nil || t.Live == nil {
			continue
		}
		if differ == nil {
			d, err := diff.New(diff.Options{Ignore: engineopts.IgnoreRules(r.engines.Load().settings, app.Spec.IgnoreDifferences)})
			if err != nil {
				return fmt.Errorf("ignoreDifferences: %w", err)
			}
			differ = d
		}
		obj, err := differ.ApplyIgnored(t.Desired, t.Live)
		if err != nil {
			return err
		}
		t.Desired = obj
	}
	return nil
}
