package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	gosync "sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/health"
)

// Defaults of Config.
const (
	// DefaultWaveDelay is the pause before a wave starts once the wave
	// before it is healthy, as Argo CD's ARGOCD_SYNC_WAVE_DELAY: it gives
	// controllers a moment to report status on what the wave created.
	DefaultWaveDelay = 2 * time.Second
	// DefaultPollInterval is how long Step asks to wait while hooks run
	// and resources progress.
	DefaultPollInterval = 2 * time.Second
	// DefaultFieldManager is the server-side apply field manager.
	DefaultFieldManager = "graphcd"
)

// Messages of finished operations.
const (
	MessageSucceeded  = "successfully synced (all tasks run)"
	MessageTerminated = "operation terminated"
	// MessageInvalid starts the message of a sync whose plan has
	// Errors, as Argo CD words it; the errors follow.
	MessageInvalid = "one or more synchronization tasks are not valid"
)

// Config is what an Executor needs: a way to the destination cluster and
// how to pace a sync.
type Config struct {
	// Client reaches the destination cluster.
	Client dynamic.Interface
	// Mapper maps kinds to API resources. When it has a Reset method (a
	// deferred discovery mapper), a kind it does not know makes it reset
	// once and look again, so custom resources of a CRD created in an
	// earlier wave are found.
	Mapper meta.RESTMapper
	// Health judges hooks and the resources of a finished wave; nil uses
	// the built-in checks only.
	Health *health.Engine
	// FieldManager is the server-side apply field manager;
	// DefaultFieldManager when empty.
	FieldManager string
	// WaveDelay is the pause between waves: DefaultWaveDelay when zero,
	// none when negative.
	WaveDelay time.Duration
	// PollInterval is the wait Step asks for while work is in progress:
	// DefaultPollInterval when zero or negative.
	PollInterval time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Reader reads live objects (a cluster cache); nil reads them from
	// the API server.
	Reader Reader
}

// Executor runs sync plans against a cluster one step at a time. It
// keeps no state that matters across calls: what a sync has done is in
// the OperationState that Step returns, so a new Executor (after a
// controller restart) continues a sync from its recorded state. The only
// thing held in memory is when each sync's wave delay started; after a
// restart the delay is simply waited again.
type Executor struct {
	cfg   Config
	mu    gosync.Mutex
	gates map[string]gate
}

// gate is a wave delay in progress: the group it holds back and when the
// delay began.
type gate struct {
	group string
	since time.Time
}

// New returns an Executor, or an error when cfg lacks a client or mapper.
func New(cfg Config) (*Executor, error) {
	if cfg.Client == nil || cfg.Mapper == nil {
		return nil, errors.New("sync executor: a dynamic client and a REST mapper are required")
	}
	if cfg.Health == nil {
		h, err := health.New(health.Options{})
		if err != nil {
			return nil, fmt.Errorf("sync executor: health engine: %w", err)
		}
		cfg.Health = h
	}
	if cfg.FieldManager == "" {
		cfg.FieldManager = DefaultFieldManager
	}
	if cfg.WaveDelay == 0 {
		cfg.WaveDelay = DefaultWaveDelay
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Executor{cfg: cfg, gates: map[string]gate{}}, nil
}

// Run is one sync operation as Step sees it.
type Run struct {
	// ID names the operation for as long as it runs, such as the
	// application's UID and the operation's start time; a new operation
	// (or a retry that runs its hooks again) needs a new ID. It keys the
	// wave delay, and every hook the run creates carries it in the
	// LabelOperation label, so that a step run again from an older state
	// adopts the hooks it created rather than creating them twice.
	ID string
	// Plan is the sync's plan. The caller may build it again before each
	// step (from the operation's revision and the live objects): tasks
	// are matched to their recorded results by object, phase and hook
	// type, not by position.
	Plan *Plan
	// DryRun asks the API server to validate every apply and prune
	// (dryRun=All) and changes nothing; hooks do not run. The operation
	// finishes in one step.
	DryRun bool
	// Force deletes and re-creates resources that cannot be updated, for
	// every resource (the strategy's force flag); the Force=true sync
	// option does it for one.
	Force bool
	// Terminate stops the operation at this step: running hooks are
	// deleted and the operation fails with MessageTerminated.
	Terminate bool
}

// Result says what the caller does next.
type Result struct {
	// Done is true once the operation finished: the state's phase is
	// Succeeded or Failed and FinishedAt is set.
	Done bool
	// RequeueAfter is when to call Step again while not Done.
	RequeueAfter time.Duration
}

// Step does the next piece of work of a sync and returns the new state;
// prev is not modified. A nil prev starts the operation.
//
// Step looks at the recorded results and at the live cluster: it starts
// the next group of tasks (one phase and wave) once the group before it
// finished, its resources are healthy and the wave delay passed; it
// follows running hooks by their health (Healthy succeeds, Degraded
// fails) and applies their delete policies; after a failure it runs the
// SyncFail hooks. Per-resource outcomes go to SyncResult.Resources in the
// order they happen.
//
// The error is for a problem worth retrying, such as an API server that
// did not answer a read; the returned state is valid even then and holds
// what this step did (a hook it created, say), so the caller must save
// it. Failures of the sync itself (an apply the API server refused, a
// failed hook) are not errors: they are in the state.
func (e *Executor) Step(ctx context.Context, run Run, prev *v1alpha1.OperationState) (*v1alpha1.OperationState, Result, error) {
	now := metav1.NewTime(e.cfg.Now())
	st := prev.DeepCopy()
	if st == nil {
		st = &v1alpha1.OperationState{Phase: v1alpha1.OperationRunning, StartedAt: now}
	}
	if st.SyncResult == nil {
		st.SyncResult = &v1alpha1.SyncOperationResult{}
	}
	if finished(st.Phase) {
		return st, Result{Done: true}, nil
	}
	s := &step{e: e, run: run, st: st}
	res, err := s.do(ctx)
	e.follow(ctx, s.writes)
	if res.Done {
		st.FinishedAt = &now
		e.mu.Lock()
		delete(e.gates, run.ID)
		e.mu.Unlock()
	}
	return st, res, err
}

// finished reports whether an operation in phase p is over.
func finished(p v1alpha1.OperationPhase) bool {
	return p == v1alpha1.OperationSucceeded || p == v1alpha1.OperationFailed || p == v1alpha1.OperationError
}

// step is the work of one Step call.
type step struct {
	e   *Executor
	run Run
	st  *v1alpha1.OperationState
	// writes are the resources the step created, changed or pruned.
	writes []write
}

// write is a resource a step wrote: its resourceVersion after the write,
// or "" when it was deleted.
type write struct {
	gvk             schema.GroupVersionKind
	namespace, name string
	resourceVersion string
}

func (s *step) wrote(gvk schema.GroupVersionKind, namespace, name, resourceVersion string) {
	s.writes = append(s.writes, write{gvk: gvk, namespace: namespace, name: name, resourceVersion: resourceVersion})
}

func (s *step) do(ctx context.Context) (Result, error) {
	plan := s.run.Plan
	if plan == nil {
		return s.finish(v1alpha1.OperationError, "sync executor: no plan"), nil
	}
	if invalid := plan.Err(); invalid != nil {
		// The sync fails before anything is applied; the state names
		// each refused resource and why.
		res := s.finish(v1alpha1.OperationFailed, MessageInvalid+": "+invalid.Error())
		s.refuse(plan.Errors)
		return res, nil //nolint:nilerr // a failed sync, recorded in the state
	}
	if s.run.Terminate || s.st.Phase == v1alpha1.OperationTerminating {
		return s.terminate(ctx)
	}
	if s.run.DryRun {
		return s.dryRunAll(ctx)
	}
	if len(s.st.SyncResult.Resources) == 0 {
		s.preflight(ctx)
	}
	if !s.failed() {
		done, res, err := s.advance(ctx, s.entries(plan.Tasks))
		if err != nil || !done {
			return res, err
		}
		if !s.failed() {
			return s.finish(v1alpha1.OperationSucceeded, MessageSucceeded), nil
		}
	}
	failure := s.failureMessage()
	done, res, err := s.advance(ctx, s.match(plan.SyncFail))
	if err != nil || !done {
		return res, err
	}
	return s.finish(v1alpha1.OperationFailed, failure+s.syncFailOutcome(plan.SyncFail)), nil
}

// finish ends the operation in phase with message. Results of tasks
// that never ran are dropped: the list shows what the sync did.
func (s *step) finish(phase v1alpha1.OperationPhase, message string) Result {
	s.st.Phase, s.st.Message = phase, message
	s.st.SyncResult.Resources = slices.DeleteFunc(s.st.SyncResult.Resources, func(r v1alpha1.ResourceResult) bool { return pending(&r) })
	return Result{Done: true}
}

// refuse records a SyncFailed result for each resource that errs name,
// as Argo CD does for the tasks it finds not valid: one result per
// resource (and per live object of one), its problems joined. An object
// too broken to name (nil) gets none; the operation message holds it.
func (s *step) refuse(errs []*ResourceError) {
	type refused struct {
		key  Key
		live bool
	}
	index := map[refused]int{}
	said := map[refused]map[string]bool{}
	for _, e := range errs {
		if e.Key == (Key{}) {
			continue
		}
		msg := e.Err.Error()
		if e.Live {
			msg = "live object: " + msg
		}
		id := refused{e.Key, e.Live}
		if said[id][msg] {
			continue // a hook of two phases refused twice for one reason
		}
		if i, ok := index[id]; ok {
			said[id][msg] = true
			s.st.SyncResult.Resources[i].Message += "; " + msg
			continue
		}
		said[id] = map[string]bool{msg: true}
		index[id] = len(s.st.SyncResult.Resources)
		s.st.SyncResult.Resources = append(s.st.SyncResult.Resources, v1alpha1.ResourceResult{
			Group: e.Key.Group, Version: e.Version, Kind: e.Key.Kind, Namespace: e.Key.Namespace, Name: e.Key.Name,
			Status: v1alpha1.ResultCodeSyncFailed, Message: msg,
			HookPhase: v1alpha1.OperationFailed, SyncPhase: v1alpha1.SyncPhaseSync,
		})
	}
}

// wait asks to be called again after the poll interval.
func (s *step) wait() Result { return Result{RequeueAfter: s.e.cfg.PollInterval} }

// advance works through entries group by group (a group is the tasks of
// one phase and wave). It returns done when every group finished or a
// task failed; otherwise the Result says when to look again.
func (s *step) advance(ctx context.Context, entries []*entry) (bool, Result, error) {
	groups := s.groupEntries(entries)
	justApplied := false
	for gi, g := range groups {
		for _, en := range g {
			if err := s.refresh(ctx, en); err != nil {
				return false, s.wait(), err
			}
		}
		if s.groupFailed(g) {
			return true, Result{}, nil
		}
		if waiting := s.notStarted(g); len(waiting) > 0 {
			if gi > 0 && len(waiting) == len(g) && !createsNamespaceOnly(groups[gi-1]) {
				if wait, open := s.gateOpen(s.groupKey(g)); !open {
					return false, Result{RequeueAfter: wait}, nil
				}
			}
			if en := awaitingConfirmation(waiting); en != nil && !s.run.DryRun {
				s.st.Message = "waiting for pruning confirmation of " + en.ref(s) +
					": annotate the application with " + AnnotationDeletionApproved + "=<now, RFC 3339>"
				return false, s.wait(), nil
			}
			for _, en := range waiting {
				if err := s.start(ctx, en); err != nil {
					return false, s.wait(), err
				}
				if s.isFailed(en) {
					return true, Result{}, nil
				}
			}
			// Hooks just created need a later look. Resources just applied
			// may be settled already (a Namespace, a ConfigMap): look at
			// once, at the API server, whose answer has them, rather than
			// a poll interval later at a cache that may not.
			if slices.ContainsFunc(waiting, func(en *entry) bool { return en.task != nil && en.task.HookType != "" }) {
				return false, s.wait(), nil
			}
			justApplied = true
		}
		if en := firstRunning(s, g); en != nil {
			s.st.Message = "waiting for completion of hook " + en.ref(s)
			return false, s.wait(), nil
		}
		if gi == len(groups)-1 {
			break
		}
		waiting, err := s.groupSettled(ctx, g, justApplied)
		justApplied = false
		if err != nil {
			return false, s.wait(), err
		}
		if waiting != "" {
			s.st.Message = waiting
			return false, s.wait(), nil
		}
	}
	return true, Result{}, nil
}

// createsNamespaceOnly reports whether g is only the namespace the
// CreateNamespace option adds. It is no wave of the app's, and nothing
// reports status on a Namespace: the app's first wave follows it without
// the wave delay, in the same step.
func createsNamespaceOnly(g []*entry) bool {
	return !slices.ContainsFunc(g, func(en *entry) bool { return en.task == nil || !en.task.CreatesNamespace })
}

// gateOpen reports whether the wave delay before group has passed,
// starting the delay when it has not begun; when closed it returns how
// long is left.
func (s *step) gateOpen(group string) (time.Duration, bool) {
	delay := s.e.cfg.WaveDelay
	if delay <= 0 {
		return 0, true
	}
	now := s.e.cfg.Now()
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	g, ok := s.e.gates[s.run.ID]
	if !ok || g.group != group {
		s.e.gates[s.run.ID] = gate{group: group, since: now}
		s.st.Message = "waiting before the next wave (" + group + ")"
		return delay, false
	}
	if left := delay - now.Sub(g.since); left > 0 {
		return left, false
	}
	delete(s.e.gates, s.run.ID)
	return 0, true
}

// terminate stops the operation: running hooks are deleted and marked
// failed.
func (s *step) terminate(ctx context.Context) (Result, error) {
	for i := range s.st.SyncResult.Resources {
		r := &s.st.SyncResult.Resources[i]
		if r.HookType == "" || r.HookPhase != v1alpha1.OperationRunning {
			continue
		}
		if err := s.deleteResult(ctx, r); err != nil {
			return s.wait(), err
		}
		r.HookPhase, r.Message = v1alpha1.OperationFailed, "terminated"
	}
	return s.finish(v1alpha1.OperationFailed, MessageTerminated), nil
}
